import type { DuckDBConnection } from '@duckdb/node-api';
import type { Db } from '../db.ts';
import { addDays, daysBetween, isServiceDate, isTimeZone, wallClock } from '../../core/dates.ts';
import { bind, statement, statements } from './sql.ts';
import { scheduleTimezone } from './timezone.ts';

const DELETE = statement('scheduled_trips_delete');
const EXPAND = statement('scheduled_trips_expand');
const MARK = statements('schedule_days_mark');
const MISSING = statement('schedule_days_missing');

/** Longest range one refresh may cover; a typo'd year must not expand a century of days. */
export const MAX_REFRESH_DAYS = 800;

export interface RefreshOptions {
  /** agency time zone for the trips' instants; default: the schedule's own agency_timezone, else UTC */
  timezone?: string;
}

/**
 * Rebuilds the scheduled trips of one schedule for fromDate..toDate (inclusive, YYYY-MM-DD) in
 * one transaction, so readers see the old or the new expansion, never a mix. Finalized days
 * keep their stored outcomes; finalize a day again to apply a changed schedule to it.
 * Resolves with the number of scheduled trips in the range.
 */
export async function refreshScheduledTrips(
  db: Db,
  scheduleId: string,
  fromDate: string,
  toDate: string,
  options: RefreshOptions = {},
): Promise<number> {
  checkRange(fromDate, toDate, options.timezone);
  const tz = options.timezone ?? (await scheduleTimezone(db, scheduleId, 'UTC'));
  await db.transaction((c) => expandScheduleDays(c, scheduleId, fromDate, toDate, tz));
  const [row] = await db.all<{ n: number }>(
    `SELECT CAST(count(*) AS INTEGER) AS n FROM scheduled_trips
     WHERE schedule_id = $schedule_id AND service_date BETWEEN CAST($from AS DATE) AND CAST($to AS DATE)`,
    { schedule_id: scheduleId, from: fromDate, to: toDate },
  );
  return row?.n ?? 0;
}

function checkRange(fromDate: string, toDate: string, timezone: string | undefined): void {
  if (!isServiceDate(fromDate)) throw new RangeError(`fromDate is not a YYYY-MM-DD date: ${fromDate}`);
  if (!isServiceDate(toDate)) throw new RangeError(`toDate is not a YYYY-MM-DD date: ${toDate}`);
  const span = daysBetween(fromDate, toDate);
  if (span < 0) throw new RangeError(`fromDate ${fromDate} is after toDate ${toDate}`);
  if (span >= MAX_REFRESH_DAYS) throw new RangeError(`refresh range over ${MAX_REFRESH_DAYS} days`);
  if (timezone !== undefined && !isTimeZone(timezone)) throw new RangeError(`unknown time zone: ${timezone}`);
}

/**
 * Rebuilds one schedule's trips for fromDate..toDate on `conn`, inside the caller's transaction
 * (a schedule import expands with the rows it is inserting), and records the days in
 * schedule_days with the schedule's newest version.
 */
export async function expandScheduleDays(
  conn: DuckDBConnection,
  scheduleId: string,
  fromDate: string,
  toDate: string,
  timezone: string,
): Promise<void> {
  checkRange(fromDate, toDate, timezone);
  const params = { schedule_id: scheduleId, from: fromDate, to: toDate, tz: timezone };
  await conn.run(DELETE.text, bind(DELETE, params));
  await conn.run(EXPAND.text, bind(EXPAND, params));
  for (const stmt of MARK) await conn.run(stmt.text, bind(stmt, params));
}

/**
 * Expands the days of fromDate..toDate that a schedule covers and that were never expanded
 * (a past day asked for, or with observations replayed), every schedule with its own zone.
 * Days expanded before keep their rows and version. Resolves with the days expanded.
 */
export async function expandMissingDays(db: Db, fromDate: string, toDate: string): Promise<number> {
  checkRange(fromDate, toDate, undefined);
  const missing = await db.all<{ schedule_id: string; service_date: string }>(
    MISSING.text,
    bind(MISSING, { from: fromDate, to: toDate }),
  );
  const runs: Array<{ schedule: string; from: string; to: string }> = [];
  for (const { schedule_id, service_date } of missing) {
    const last = runs.at(-1);
    if (last && last.schedule === schedule_id && daysBetween(last.to, service_date) === 1) last.to = service_date;
    else runs.push({ schedule: schedule_id, from: service_date, to: service_date });
  }
  for (const run of runs) await refreshScheduledTrips(db, run.schedule, run.from, run.to);
  return missing.length;
}

export interface WindowOptions {
  /** the zone "today" is read in */
  timezone: string;
  horizonDays: number;
  now?: Date;
}

/**
 * For each new day: expands every imported schedule up to `horizonDays` ahead, starting after
 * the last day it already has, so days already expanded are not rewritten.
 */
export async function extendScheduledTrips(db: Db, options: WindowOptions): Promise<number> {
  const today = wallClock(options.now ?? new Date(), options.timezone).date;
  const to = addDays(today, options.horizonDays);
  const schedules = await db.all<{ schedule_id: string; last: string | null }>(`
    SELECT s.schedule_id, strftime(max(t.service_date), '%Y-%m-%d') AS last
    FROM schedules AS s LEFT JOIN scheduled_trips AS t USING (schedule_id)
    GROUP BY s.schedule_id ORDER BY s.schedule_id`);
  const earliest = await firstUnfinalized(db, addDays(today, -1));
  let total = 0;
  for (const s of schedules) {
    const from = s.last !== null && s.last >= earliest ? addDays(s.last, 1) : earliest;
    if (daysBetween(from, to) < 0) continue;
    total += await refreshScheduledTrips(db, s.schedule_id, from, to);
  }
  return total;
}

/** `date`, or the day after the last finalized day when that is later. */
async function firstUnfinalized(db: Db, date: string): Promise<string> {
  const [row] = await db.all<{ last: string | null }>(
    `SELECT strftime(max(service_date), '%Y-%m-%d') AS last FROM reliability_finalized`,
  );
  const afterLast = row?.last ? addDays(row.last, 1) : date;
  return afterLast > date ? afterLast : date;
}
