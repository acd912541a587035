import type { DuckDBConnection } from '@duckdb/node-api';
import type { Db } from './db.ts';
import { iso, isoRequired } from '../core/dates.ts';

// The records of schedule versions (migration 010): one row per successful import, the last
// check of each source (conditional GET validators, outcome, failures), and reading both back
// as one health entry per schedule for /status and the operator commands.

export interface ScheduleVersion {
  version_id: number;
  schedule_id: string;
  source: string;
  /** null for a schedule imported before versions were recorded */
  sha256: string | null;
  imported_at: string;
  feed_version: string | null;
  feed_start_date: string | null;
  feed_end_date: string | null;
  /** first and last date on which any service runs */
  service_start_date: string | null;
  service_end_date: string | null;
  routes: number;
  trips: number;
  stops: number;
  stop_times: number;
  import_ms: number | null;
}

export const CHECK_OUTCOMES = ['imported', 'unchanged', 'not_modified', 'failed'] as const;
export type CheckOutcome = (typeof CHECK_OUTCOMES)[number];

export interface SourceCheck {
  schedule_id: string;
  source: string;
  etag: string | null;
  last_modified: string | null;
  /** hash of the copy the validators belong to */
  sha256: string | null;
  checked_at: string;
  outcome: CheckOutcome;
  last_error: string | null;
  last_error_at: string | null;
  consecutive_failures: number;
}

const VERSION_COLUMNS = `version_id, schedule_id, source, sha256, epoch_ms(imported_at)::DOUBLE AS imported_at,
  feed_version, strftime(feed_start_date, '%Y-%m-%d') AS feed_start_date, strftime(feed_end_date,
    '%Y-%m-%d') AS feed_end_date,
  strftime(service_start_date, '%Y-%m-%d') AS service_start_date, strftime(service_end_date,
    '%Y-%m-%d') AS service_end_date,
  routes, trips, stops, stop_times, import_ms`;

/** Every recorded version, newest first; of one schedule when `scheduleId` is given. */
export async function listScheduleVersions(db: Db, scheduleId?: string): Promise<ScheduleVersion[]> {
  const rows = await db.all<ScheduleVersion>(
    `SELECT ${VERSION_COLUMNS} FROM schedule_versions
     WHERE $id IS NULL OR schedule_id = $id ORDER BY version_id DESC`,
    { id: scheduleId ?? null },
  );
  return rows.map(normalizeVersion);
}

/** The version in the gtfs_* tables: the newest one recorded. */
export async function currentVersion(db: Db, scheduleId: string): Promise<ScheduleVersion | null> {
  return (await listScheduleVersions(db, scheduleId))[0] ?? null;
}

function normalizeVersion(r: ScheduleVersion): ScheduleVersion {
  return {
    ...r,
    version_id: Number(r.version_id),
    imported_at: isoRequired(Number(r.imported_at)),
    routes: Number(r.routes),
    trips: Number(r.trips),
    stops: Number(r.stops),
    stop_times: Number(r.stop_times),
    import_ms: r.import_ms === null ? null : Number(r.import_ms),
  };
}

export interface NewVersion {
  scheduleId: string;
  source: string;
  sha256: string | null;
  feedVersion: string | null;
  feedStartDate: string | null;
  feedEndDate: string | null;
  importMs: number | null;
}

/**
 * Records the version whose rows `conn` has just written, inside the import's transaction: row
 * counts and the calendar's span are read from the tables as they will be committed.
 */
export async function recordVersion(conn: DuckDBConnection, v: NewVersion): Promise<ScheduleVersion> {
  const reader = await conn.runAndReadAll(
    `
    INSERT INTO schedule_versions (schedule_id, source, sha256, imported_at, feed_version, feed_start_date,
      feed_end_date,
      service_start_date, service_end_date, routes, trips, stops, stop_times, import_ms)
    SELECT $id, $source, $sha, now(), $feed_version, CAST($feed_start AS DATE), CAST($feed_end AS DATE),
      (SELECT least(min(start_date), (SELECT min(date) FROM gtfs_calendar_dates WHERE schedule_id = $id AND
        exception_type = 1))
       FROM gtfs_calendar WHERE schedule_id = $id),
      (SELECT greatest(max(end_date), (SELECT max(date) FROM gtfs_calendar_dates WHERE schedule_id = $id AND
        exception_type = 1))
       FROM gtfs_calendar WHERE schedule_id = $id),
      (SELECT count(*) FROM gtfs_routes WHERE schedule_id = $id),
      (SELECT count(*) FROM gtfs_trips WHERE schedule_id = $id),
      (SELECT count(*) FROM gtfs_stops WHERE schedule_id = $id),
      (SELECT count(*) FROM gtfs_stop_times WHERE schedule_id = $id),
      $ms
    RETURNING ${VERSION_COLUMNS}`,
    {
      id: v.scheduleId,
      source: v.source,
      sha: v.sha256,
      feed_version: v.feedVersion,
      feed_start: v.feedStartDate,
      feed_end: v.feedEndDate,
      ms: v.importMs,
    } as never,
  );
  return normalizeVersion(reader.getRowObjectsJS()[0] as unknown as ScheduleVersion);
}

/** The last check of one source, or null before the first. */
export async function lastCheck(db: Db, scheduleId: string): Promise<SourceCheck | null> {
  const [row] = await db.all<SourceCheck>(`${CHECK_SELECT} WHERE schedule_id = $id`, { id: scheduleId });
  return row ? normalizeCheck(row) : null;
}

const CHECK_SELECT = `SELECT schedule_id, source, etag, last_modified, sha256,
  epoch_ms(checked_at)::DOUBLE AS checked_at, outcome, last_error,
  epoch_ms(last_error_at)::DOUBLE AS last_error_at, consecutive_failures FROM schedule_sources`;

function normalizeCheck(r: SourceCheck): SourceCheck {
  return {
    ...r,
    checked_at: isoRequired(Number(r.checked_at)),
    last_error_at: iso(r.last_error_at as unknown as number | null),
    consecutive_failures: Number(r.consecutive_failures),
  };
}

export interface CheckRecord {
  scheduleId: string;
  source: string;
  outcome: CheckOutcome;
  /** validators and hash of the copy now imported; ignored for a failure (the last good ones stay) */
  etag?: string | null;
  lastModified?: string | null;
  sha256?: string | null;
  error?: string;
}

/** Stores the outcome of one check. A failure keeps the validators of the copy still in use. */
export async function recordCheck(db: Db, c: CheckRecord): Promise<SourceCheck> {
  return db.transaction(async (conn) => {
    const before = (
      await conn.runAndReadAll(`${CHECK_SELECT} WHERE schedule_id = $id`, { id: c.scheduleId })
    ).getRowObjectsJS()[0] as unknown as SourceCheck | undefined;
    const failed = c.outcome === 'failed';
    const sameSource = before?.source === c.source;
    const next = {
      id: c.scheduleId,
      source: c.source,
      etag: failed ? (sameSource ? (before?.etag ?? null) : null) : (c.etag ?? null),
      last_modified: failed ? (sameSource ? (before?.last_modified ?? null) : null) : (c.lastModified ?? null),
      sha: failed ? (sameSource ? (before?.sha256 ?? null) : null) : (c.sha256 ?? null),
      outcome: c.outcome,
      error: failed ? (c.error ?? 'unknown error') : (before?.last_error ?? null),
      error_at: failed ? 'now' : iso(before?.last_error_at as unknown as number | null | undefined),
      failures: failed ? Number(before?.consecutive_failures ?? 0) + 1 : 0,
    };
    await conn.run('DELETE FROM schedule_sources WHERE schedule_id = $id', { id: c.scheduleId });
    await conn.run(
      `INSERT INTO schedule_sources (schedule_id, source, etag, last_modified, sha256, checked_at, outcome,
        last_error, last_error_at, consecutive_failures)
      VALUES ($id, $source, $etag, $last_modified, $sha, now(), $outcome, $error,
        CASE WHEN $error_at = 'now' THEN now() ELSE CAST($error_at AS TIMESTAMPTZ) END, $failures)`,
      next as never,
    );
    const after = (
      await conn.runAndReadAll(`${CHECK_SELECT} WHERE schedule_id = $id`, { id: c.scheduleId })
    ).getRowObjectsJS()[0] as unknown as SourceCheck;
    return normalizeCheck(after);
  });
}

/** Forgets a schedule's source checks (a schedule removed from the config). */
export async function forgetChecks(db: Db, scheduleId: string): Promise<void> {
  await db.run('DELETE FROM schedule_sources WHERE schedule_id = $id', { id: scheduleId });
}
