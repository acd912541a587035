import type { Db } from '../db.ts';
import { addDays, daysBetween, isServiceDate } from './dates.ts';
import { finalizeServiceDay, type FinalizeSummary } from './finalize.ts';
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
 * added since count. Days never expanded are expanded first; days expanded keep their version.
 * Resolves with one summary per day, oldest first; publish them with reliabilityEvent().
 */
export async function backfillServiceDays(
  db: Db, dates: readonly string[], options: { now?: Date } = {},
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

const queues = new WeakMap<Db, Promise<unknown>>();
/** ranges found prepared, by range and the reliability generation they were checked at */
const prepared = new WeakMap<Db, Map<string, { generation: number; atMs: number }>>();
/** a prepared range is checked again after this: observations of a past day may arrive by ingest */
const RECHECK_MS = 60_000;
const REMEMBERED = 256;

/**
 * Before a rollup reads from..to: expands the days never expanded and finalizes the days before
 * the live window that are over, not finalized and have observations. Runs one at a time per
 * database, so concurrent requests for the same past day expand and finalize it once; a range
 * found prepared is not checked again until a schedule or a finalize changes something (or a
 * minute passes), so the usual request costs nothing here. Resolves with the days finalized.
 */
export function preparePastDays(db: Db, spec: PastDaysSpec): Promise<string[]> {
  const key = `${spec.from}|${spec.to}|${spec.completeThrough}|${spec.liveFrom}`;
  if (isPrepared(db, key)) return Promise.resolve([]);
  const previous = queues.get(db) ?? Promise.resolve();
  const run = previous.catch(() => undefined).then(async () => {
    if (isPrepared(db, key)) return [];
    const done = await prepare(db, spec);
    let memo = prepared.get(db);
    if (!memo) prepared.set(db, (memo = new Map()));
    if (memo.size >= REMEMBERED) memo.delete(memo.keys().next().value!);
    memo.set(key, { generation: reliabilityGeneration(db), atMs: performance.now() });
    return done;
  });
  queues.set(db, run);
  return run;
}

function isPrepared(db: Db, key: string): boolean {
  const hit = prepared.get(db)?.get(key);
  return hit !== undefined && hit.generation === reliabilityGeneration(db) && performance.now() - hit.atMs < RECHECK_MS;
}

async function prepare(db: Db, spec: PastDaysSpec): Promise<string[]> {
  if (daysBetween(spec.from, spec.to) < 0) return [];
  const expanded = await expandMissingDays(db, spec.from, spec.to);
  if (expanded > 0 && spec.to >= spec.liveFrom) liveInputsChanged(db);
  const last = [spec.to, spec.completeThrough, addDays(spec.liveFrom, -1)].sort()[0]!;
  if (daysBetween(spec.from, last) < 0) return [];
  const due = await observedUnfinalized(db, spec.from, last);
  for (const day of due) await finalizeServiceDay(db, day, { now: spec.now });
  return due;
}

/** Days of from..to with observations and no finalize yet. */
async function observedUnfinalized(db: Db, from: string, to: string): Promise<string[]> {
  const open = await db.all<{ n: number }>(`
    SELECT CAST(count(*) AS INTEGER) AS n
    FROM range(CAST($from AS DATE), CAST($to AS DATE) + INTERVAL 1 DAY, INTERVAL 1 DAY) AS t(d)
    WHERE CAST(t.d AS DATE) NOT IN (
      SELECT service_date FROM reliability_finalized WHERE service_date BETWEEN CAST($from AS DATE) AND CAST($to AS DATE))`,
  { from, to });
  // observations are large: scanned only when some day of the range is still open
  if (!open[0]?.n) return [];
  const rows = await db.all<{ d: string }>(`
    SELECT DISTINCT strftime(service_date, '%Y-%m-%d') AS d FROM trip_observations
    WHERE service_date BETWEEN CAST($from AS DATE) AND CAST($to AS DATE)
      AND service_date NOT IN (
        SELECT service_date FROM reliability_finalized WHERE service_date BETWEEN CAST($from AS DATE) AND CAST($to AS DATE))
    ORDER BY 1`, { from, to });
  return rows.map((r) => r.d);
}

/**
 * Service days before `before` that have observations and were never finalized (history
 * ingested for days the finalize job had passed): the job backfills them once a day.
 */
export async function pastObservedDays(db: Db, before: string): Promise<string[]> {
  const rows = await db.all<{ d: string }>(`
    SELECT DISTINCT strftime(service_date, '%Y-%m-%d') AS d FROM trip_observations
    WHERE service_date < CAST($before AS DATE)
      AND service_date NOT IN (SELECT service_date FROM reliability_finalized)
    ORDER BY 1`, { before });
  return rows.map((r) => r.d);
}
