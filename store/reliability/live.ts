import type { DuckDBConnection } from '@duckdb/node-api';
import { componentLogger, type Logger } from '../../core/logger.ts';
import type { Db } from '../db.ts';
import { inOwnTransaction } from './connection.ts';
import { addDays, daysBetween } from '../../core/dates.ts';
import { bind, statement } from './sql.ts';

// The figures of days not finalized yet (today, and a day the job has not reached) come from
// raw observations, millions of rows a day at a large agency: too slow to aggregate per request.
// They are kept in reliability_live_days instead, recomputed on a separate connection when
// older than maxAgeMs, while requests keep reading the previous counts (stale-while-revalidate).

const REFRESH = statement('live_refresh');

export interface LiveSpec {
  /** the current local date; live days run up to it */
  today: string;
  /** last service date that is over: scheduled trips not seen by then are unobserved */
  completeThrough: string;
  /** how far back days not finalized are still computed */
  lookbackDays: number;
  /** counts older than this are recomputed; 0 recomputes before every read */
  maxAgeMs: number;
  /** where a failed background refresh is reported */
  log?: Logger;
}

interface LiveState {
  key: string;
  computedAt: number;
  /** recomputes finished so far: the counts readers see changed (or may have) with each */
  computed: number;
  inflight: Promise<void> | null;
  /** the runs of days not finalized, reused while the day and maxAgeMs allow */
  runs: { key: string; at: number; runs: [string, string][] } | null;
}

const states = new WeakMap<Db, LiveState>();

/** Contiguous runs of days in from..to that are not finalized. */
async function unfinalizedRuns(db: Db, from: string, to: string): Promise<[string, string][]> {
  const rows = await db.all<{ d: string }>(
    `
    SELECT strftime(CAST(t.d AS DATE), '%Y-%m-%d') AS d
    FROM range(CAST($from AS DATE), CAST($to AS DATE) + 1, INTERVAL 1 DAY) AS t(d)
    WHERE CAST(t.d AS DATE) NOT IN (
      SELECT service_date FROM reliability_finalized
      WHERE service_date BETWEEN CAST($from AS DATE) AND CAST($to AS DATE))
    ORDER BY 1`,
    { from, to },
  );
  const runs: [string, string][] = [];
  for (const { d } of rows) {
    const last = runs.at(-1);
    if (last && daysBetween(last[1], d) === 1) last[1] = d;
    else runs.push([d, d]);
  }
  return runs;
}

async function recompute(conn: DuckDBConnection, runs: [string, string][], completeThrough: string): Promise<void> {
  await conn.run('DELETE FROM reliability_live_days');
  for (const [from, to] of runs) {
    await conn.run(
      REFRESH.text,
      bind(REFRESH, {
        outcomes_from: from,
        outcomes_to: to,
        complete_through: completeThrough,
        route_id: null,
      }) as never,
    );
  }
}

/**
 * Makes reliability_live_days current enough for a read: waits for a recompute when the live
 * days or the "day over" boundary changed (or maxAgeMs is 0), otherwise returns at once and, if
 * the counts are older than maxAgeMs, recomputes them in the background.
 */
export async function ensureLiveDays(db: Db, spec: LiveSpec): Promise<void> {
  let state = states.get(db);
  if (!state) {
    state = { key: '', computedAt: 0, computed: 0, inflight: null, runs: null };
    states.set(db, state);
  }
  const s = state;
  const from = addDays(spec.today, -(spec.lookbackDays - 1));
  const runsKey = `${from}|${spec.today}`;
  if (!s.runs || s.runs.key !== runsKey || spec.maxAgeMs === 0 || performance.now() - s.runs.at > spec.maxAgeMs) {
    s.runs = { key: runsKey, at: performance.now(), runs: await unfinalizedRuns(db, from, spec.today) };
  }
  const runs = s.runs.runs;
  const key = `${spec.completeThrough}|${runs.map((r) => r.join('..')).join(',')}`;
  const age = performance.now() - s.computedAt;
  if (s.key === key && spec.maxAgeMs > 0 && age <= spec.maxAgeMs) return;

  const run = (): Promise<void> => {
    const startedAt = performance.now();
    const job = inOwnTransaction(db, (conn) => recompute(conn, runs, spec.completeThrough))
      .then(() => {
        s.key = key;
        s.computedAt = startedAt;
        s.computed++;
      })
      .finally(() => {
        if (s.inflight === job) s.inflight = null;
      });
    s.inflight = job;
    return job;
  };
  if (s.key === key && spec.maxAgeMs > 0) {
    // same days, only older: serve the previous counts, refresh behind them
    if (!s.inflight)
      run().catch((err: unknown) => componentLogger(spec.log, 'reliability').error({ err }, 'live refresh failed'));
    return;
  }
  // a recompute already running may be for other days: let it finish, then compute ours (no
  // await between the loop and run(), so nobody starts another in between)
  while (s.inflight) await s.inflight.catch(() => undefined);
  if (s.key === key && spec.maxAgeMs > 0) return;
  await run();
}

/** A day was finalized: the next read looks the days not finalized up again. */
export function liveDaysChanged(db: Db): void {
  bump(db);
  const s = states.get(db);
  if (s) s.runs = null;
}

/**
 * Scheduled trips or observations of live days changed (a schedule swap, days expanded): recompute on the next read.
 */
export function liveInputsChanged(db: Db): void {
  bump(db);
  const s = states.get(db);
  if (!s) return;
  s.runs = null;
  s.key = '';
}

const generations = new WeakMap<Db, number>();
const bump = (db: Db): void => void generations.set(db, (generations.get(db) ?? 0) + 1);

/** Changes whenever a day is finalized or scheduled trips change: what readers may cache against. */
export function reliabilityGeneration(db: Db): number {
  return generations.get(db) ?? 0;
}

/**
 * Changes whenever what a rollup reads may have changed: a day finalized, scheduled trips
 * changed, or the live days' counts recomputed. The key of cached reliability answers (with a
 * time bound: the date and the retained window move with the clock).
 */
export function reliabilityReadVersion(db: Db): string {
  return `${reliabilityGeneration(db)}.${states.get(db)?.computed ?? 0}`;
}
