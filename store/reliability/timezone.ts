import type { Db } from '../db.ts';
import { isTimeZone } from '../../core/dates.ts';

/**
 * The time zone service days are counted in: the configured one, else the newest imported
 * schedule's agency_timezone, else UTC. A zone the runtime does not know is skipped, because a
 * feed's bad agency.txt must not stop reliability.
 */
export async function resolveTimezone(db: Db, configured?: string): Promise<string> {
  if (configured !== undefined && isTimeZone(configured)) return configured;
  const rows = await db.all<{ tz: string | null }>(`
    SELECT tz FROM (
      SELECT agency_timezone AS tz, 0 AS rank, imported_at FROM schedules
      UNION ALL
      SELECT agency_timezone, 1, NULL FROM gtfs_agency
    ) WHERE tz IS NOT NULL
    ORDER BY rank, imported_at DESC NULLS LAST`);
  return rows.map((r) => r.tz).find((tz): tz is string => isTimeZone(tz)) ?? 'UTC';
}

/** A schedule's own zone (its agency.txt), else `fallback`. */
export async function scheduleTimezone(db: Db, scheduleId: string, fallback: string): Promise<string> {
  const rows = await db.all<{ tz: string | null }>(
    `
    SELECT agency_timezone AS tz FROM schedules WHERE schedule_id = $id
    UNION ALL
    SELECT agency_timezone FROM gtfs_agency WHERE schedule_id = $id`,
    { id: scheduleId },
  );
  return rows.map((r) => r.tz).find((tz): tz is string => isTimeZone(tz)) ?? fallback;
}
