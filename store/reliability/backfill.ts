import type { Db } from '../db.ts';
import { addDays, daysBetween, earlierDate, isServiceDate } from '../../core/dates.ts';
import { finalizeServiceDay, type FinalizeOptions, type FinalizeSummary } from './finalize.ts';
import { liveInputsChanged, reliabilityGeneration } from './live.ts';
import { expandMissingDays } from './scheduled-trips.ts';

// Past service days outside the live window: history replayed from archived snapshots, or a day
// asked for that nobody expanded. Such a day is expanded (with the schedule version in use,
// when its calendar covers the day) once it has observations or is asked for, and finalized
// once it is over and has observations. A day without observations is expanded but not
// finalized: its trips read as unobserved, flagged as days without observations.

/**
 * Expands and finalizes the given service days (the `replay` command calls this after
 * ingesting archived snapshots). A day finalized before is finalized again, so observations
 * added since count, unless `ifOpen` (the job's days never finalized: one a request finalized
 * meanwhile is read as it is). Days never expanded are expanded first; days expanded keep their version.
 * Resolves with one summary per day, oldest first; publish them with reliabilityEvent().
 */
export async function backfillServiceDays(
  db: Db,
  dates: readonly string[],
  options: FinalizeOptions = {},
): Promise<FinalizeSummary[]> {
  for (const d of dates) if (!isServiceDate(d)) throw new RangeError(`not a YYYY-MM-DD service date: ${d}`);
  const days = [...new Set(dates)].sort();
  const done: FinalizeSummary[] = [];
  for (const day of days) done.push(await finalizeServiceDay(db, day, options));
  if (days.length) liveInputsChanged(db);
  return done;
}

export interface PastDaysSpec {
  /** inclusive service dates the reader will look at */
  from: string;
  to: string;
  /** last service date that is over */
  completeThrough: string;
  /** first day of the live window: days before it are finalized here when observed */
  liveFrom: string;
  now?: Date;
}

/** What a reader of the range needs to know once it is prepared. */
export interface PreparedDays {
  /** days finalized by this preparation */
  finalized: string[];
  /**
   * first and last day before the live window (within from..to) still not finalized: days
   * without observations, read from scheduled_trips; null when there is none
   */
  open: [from: string, to: string] | null;
}

const queues = new WeakMap<Db, Promise<unknown>>();
/** ranges found prepared, by range and the reliability generation they were checked at */
const prepared = new WeakMap<Db, Map<string, { generation: number; atMs: number; open: PreparedDays['open'] }>>();
/** a prepared range is checked again after this: observations of a past day may arrive by ingest */
const RECHECK_MS = 60_000;
const REMEMBERED = 256;

/**
 * Before a rollup reads from..to: expands the days never expanded and finalizes the days before
 * the live window that are over, not finalized and have observations. Runs one at a time per
 * database, so concurrent requests for the same past day expand and finalize it once; a range
 * found prepared is not checked again until a schedule or a finalize changes something (or a
 * minute passes), so the usual request costs nothing here. Resolves with the days finalized
 * and the days before the live window left open.
 */
export function preparePastDays(db: Db, spec: PastDaysSpec): Promise<PreparedDays> {
  const key = `${spec.from}|${spec.to}|${spec.completeThrough}|${spec.liveFrom}`;
  const hit = remembered(db, key);
  if (hit) return Promise.resolve({ finalized: [], open: hit.open });
  const previous = queues.get(db) ?? Promise.resolve();
  const run = previous
    .catch(() => undefined)
    .then(async (): Promise<PreparedDays> => {
      const again = remembered(db, key);
      if (again) return { finalized: [], open: again.open };
      const done = await prepare(db, spec);
      let memo = prepared.get(db);
      if (!memo) {
        memo = new Map();
        prepared.set(db, memo);
      }
      if (memo.size >= REMEMBERED) memo.delete(memo.keys().next().value!);
      memo.set(key, { generation: reliabilityGeneration(db), atMs: performance.now(), open: done.open });
      return done;
    });
  queues.set(db, run);
  return run;
}

function remembered(db: Db, key: string): { open: PreparedDays['open'] } | null {
  const hit = prepared.get(db)?.get(key);
  const fresh =
    hit !== undefined && hit.generation === reliabilityGeneration(db) && performance.now() - hit.atMs < RECHECK_MS;
  return fresh ? hit : null;
}

async function prepare(db: Db, spec: PastDaysSpec): Promise<PreparedDays> {
  if (daysBetween(spec.from, spec.to) < 0) return { finalized: [], open: null };
  const expanded = await expandMissingDays(db, spec.from, spec.to);
  if (expanded > 0 && spec.to >= spec.liveFrom) liveInputsChanged(db);
  const beforeLive = spec.to < spec.liveFrom ? spec.to : addDays(spec.liveFrom, -1);
  if (daysBetween(spec.from, beforeLive) < 0) return { finalized: [], open: null };
  const last = earlierDate(spec.completeThrough, beforeLive);
  const due = daysBetween(spec.from, last) < 0 ? [] : await observedUnfinalized(db, spec.from, last);
  // the finalize job may be finalizing the same day (its start-up backfill): then this waits for it
  for (const day of due) await finalizeServiceDay(db, day, { now: spec.now, ifOpen: true });
  return { finalized: due, open: await openSpan(db, spec.from, beforeLive) };
}

/** First and last day of from..to not finalized. */
async function openSpan(db: Db, from: string, to: string): Promise<PreparedDays['open']> {
  const [row] = await db.all<{ lo: string | null; hi: string | null }>(
    `
    SELECT strftime(min(CAST(t.d AS DATE)), '%Y-%m-%d') AS lo, strftime(max(CAST(t.d AS DATE)), '%Y-%m-%d') AS hi
    FROM range(CAST($from AS DATE), CAST($to AS DATE) + INTERVAL 1 DAY, INTERVAL 1 DAY) AS t(d)
    WHERE CAST(t.d AS DATE) NOT IN (
      SELECT service_date FROM reliability_finalized WHERE service_date BETWEEN CAST($from AS DATE) AND CAST($to
        AS DATE))`,
    { from, to },
  );
  return row?.lo && row.hi ? [row.lo, row.hi] : null;
}

/** Days of from..to with observations and no finalize yet. */
async function observedUnfinalized(db: Db, from: string, to: string): Promise<string[]> {
  // observations are large: scanned only when some day of the range is still open
  if (!(await openSpan(db, from, to))) return [];
  const rows = await db.all<{ d: string }>(
    `
    SELECT DISTINCT strftime(service_date, '%Y-%m-%d') AS d FROM trip_observations
    WHERE service_date BETWEEN CAST($from AS DATE) AND CAST($to AS DATE)
      AND service_date NOT IN (
        SELECT service_date FROM reliability_finalized WHERE service_date BETWEEN CAST($from AS DATE) AND
          CAST($to AS DATE))
    ORDER BY 1`,
    { from, to },
  );
  return rows.map((r) => r.d);
}

/**
 * Service days before `before` that have observations and were never finalized (history
 * ingested for days the finalize job had passed): the job backfills them once a day.
 */
export async function pastObservedDays(db: Db, before: string): Promise<string[]> {
  const rows = await db.all<{ d: string }>(
    `
    SELECT DISTINCT strftime(service_date, '%Y-%m-%d') AS d FROM trip_observations
    WHERE service_date < CAST($before AS DATE)
      AND service_date NOT IN (SELECT service_date FROM reliability_finalized)
    ORDER BY 1`,
    { before },
  );
  return rows.map((r) => r.d);
}
