// After a replay: reliability for the service days the replayed snapshots observed. Scheduled
// trips are expanded for those days (whatever the live window) and the days that are over are
// finalized, through store/reliability's own entry points.
import { feedScheduleId, type Config, type FeedConfig } from '../core/config.ts';
import type { Db } from '../store/db.ts';
import { tsParam } from '../store/sql.ts';
import { completeThrough, expandMissingDays, finalizeServiceDay, resolveTimezone } from '../store/reliability/index.ts';

export interface ReplayReliability {
  /** null when no schedule serves the feed: nothing to compare observations with */
  schedule_id: string | null;
  /** service days with trip observations from the replayed snapshots */
  days: string[];
  /** scheduled trips of those days (expanded now, or before with the version then in use) */
  scheduled_trips: number;
  /** days finalized (over, as of now); later days are left to the live job */
  finalized: string[];
}

// the feed's schedule as the runtime resolves it
export { feedScheduleId };

export async function refreshReplayedDays(
  db: Db,
  config: Readonly<Config>,
  feed: FeedConfig,
  window: { from_ms: number; to_ms: number },
  now = new Date(),
): Promise<ReplayReliability> {
  const scheduleId = feedScheduleId(config, feed);
  const rows = await db.all<{ d: string }>(
    `SELECT DISTINCT strftime(service_date, '%Y-%m-%d') AS d FROM trip_observations
     WHERE feed_id = $1 AND observed_at BETWEEN ${tsParam(2)} AND ${tsParam(3)}
     ORDER BY d`,
    [feed.id, window.from_ms, window.to_ms],
  );
  const days = rows.map((r) => r.d);
  const result: ReplayReliability = { schedule_id: scheduleId, days, scheduled_trips: 0, finalized: [] };
  if (scheduleId === null || days.length === 0) return result;
  // day by day: archives may span more than one refresh may cover, with gaps between. A day
  // expanded before keeps its rows and the schedule version it was computed with.
  for (const day of days) {
    await expandMissingDays(db, day, day);
    const [row] = await db.all<{ n: number }>(
      `SELECT CAST(count(*) AS INTEGER) AS n FROM scheduled_trips WHERE schedule_id = $1 AND service_date = ` +
        `CAST($2 AS DATE)`,
      [scheduleId, day],
    );
    result.scheduled_trips += row?.n ?? 0;
  }
  const timezone = await resolveTimezone(db, config.reliability.timezone);
  const over = completeThrough(now, timezone, config.reliability.service_day_end);
  for (const day of days) {
    if (day > over) continue;
    await finalizeServiceDay(db, day, { now });
    result.finalized.push(day);
  }
  return result;
}
