import { MODES, type Mode } from '../../core/types.ts';
import type { Db } from '../db.ts';
import { inOwnTransaction } from './connection.ts';
import { addDays, completeThrough, isServiceDate, laterDate } from '../../core/dates.ts';
import { storePerformanceDay } from '../performance/day.ts';
import { liveDaysChanged } from './live.ts';
import { expandMissingDays } from './scheduled-trips.ts';
import { bind, statement, statements } from './sql.ts';
import { setTimeout as delay } from 'node:timers/promises';
import { writeHeldHistory } from '../held-history.ts';

const DELETE = statements('finalize_delete');
const OUTCOMES = statement('finalize_outcomes');
const DAYS = statement('finalize_days');
const MARK = statement('finalize_mark');
const SUMMARY = statement('finalize_summary');
const DUE = statement('due_days');

export interface FinalizedRoute {
  /** the schedule of the route's trips (null: a feed without one) */
  schedule_id: string | null;
  mode: Mode | null;
  /** null for trips seen without a route and absent from the schedule */
  route_id: string | null;
  scheduled: number;
  delivered: number;
  canceled: number;
  /** scheduled trips never seen */
  unobserved: number;
}

export interface FinalizeSummary {
  service_date: string;
  /** trip rows stored for the day (scheduled trips plus trips seen outside the schedule) */
  trips: number;
  modes: Mode[];
  /** route ids and rail line ids that have rows that day */
  route_ids: string[];
  routes: FinalizedRoute[];
}

export interface FinalizeOptions {
  now?: Date;
  /**
   * Only make sure the day is finalized (a request, the job's due days): a finalize of the day
   * already running or queued answers, and a day found finalized is read, not computed again.
   * Without it (a replay, a backfill) the day is computed again, so observations added since count.
   */
  ifOpen?: boolean;
}

/** A day's finalizes in this process: the one running, and at most one waiting behind it. */
interface DayLane {
  tail: Promise<unknown>;
  running: Promise<FinalizeSummary> | null;
  queued: { promise: Promise<FinalizeSummary>; ifOpen: boolean; now?: Date } | null;
}

const lanes = new WeakMap<Db, Map<string, DayLane>>();

/**
 * Stores the final outcome of every trip of `serviceDate` (trip_outcomes) and its route-day
 * counts (reliability_days), replacing an earlier run's rows for that day: running it twice
 * leaves the same rows. Call it once the day is over; trips never seen become `unobserved`.
 * Runs on its own connection, so history writes and API reads go on meanwhile. A day no
 * schedule was expanded for (history replayed after the fact) is expanded first, with the
 * version in use, so its trips are scheduled rather than counted as added.
 *
 * Single-flight per day and process: one finalize of a day runs at a time; a caller that comes
 * while one runs waits for it (`ifOpen`) or for one more run right after it, which every later
 * caller joins. Another process finalizing the same day at once makes this one's commit fail
 * on the conflict; it is tried again (the rows are replaced whole, so the second is harmless).
 */
export function finalizeServiceDay(
  db: Db,
  serviceDate: string,
  options: FinalizeOptions = {},
): Promise<FinalizeSummary> {
  if (!isServiceDate(serviceDate)) {
    return Promise.reject(new RangeError(`not a YYYY-MM-DD service date: ${serviceDate}`));
  }
  let days = lanes.get(db);
  if (!days) {
    days = new Map();
    lanes.set(db, days);
  }
  let lane = days.get(serviceDate);
  if (!lane) {
    lane = { tail: Promise.resolve(), running: null, queued: null };
    days.set(serviceDate, lane);
  }
  if (options.ifOpen && (lane.queued || lane.running)) return lane.queued?.promise ?? lane.running!;
  if (lane.queued) {
    // not started yet: it will read everything committed before it starts, for this caller too
    if (!options.ifOpen) lane.queued.ifOpen = false;
    return lane.queued.promise;
  }
  const queued: NonNullable<DayLane['queued']> = {
    promise: null as unknown as Promise<FinalizeSummary>,
    ifOpen: options.ifOpen === true,
    now: options.now,
  };
  const current = lane;
  const promise = lane.tail
    .catch(() => undefined)
    .then(() => {
      current.queued = null;
      current.running = promise;
      return finalizeOnce(db, serviceDate, { ifOpen: queued.ifOpen, now: queued.now });
    })
    .finally(() => {
      current.running = null;
      if (!current.queued && days.get(serviceDate) === current) days.delete(serviceDate);
    });
  queued.promise = promise;
  lane.queued = queued;
  lane.tail = promise;
  return promise;
}

async function finalizeOnce(db: Db, serviceDate: string, options: FinalizeOptions): Promise<FinalizeSummary> {
  const params = {
    service_date: serviceDate,
    outcomes_from: serviceDate,
    outcomes_to: serviceDate,
    complete_through: serviceDate,
    route_id: null,
    finalized_at: (options.now ?? new Date()).toISOString(),
  };
  // the history writers' held rows of the day (trips seen last before they timed out) first
  await writeHeldHistory(db, { through: serviceDate });
  if (options.ifOpen && (await isFinalized(db, serviceDate))) return summarize(db, serviceDate);
  await expandMissingDays(db, serviceDate, serviceDate);
  // another process finalizing the day at once: its rows stand (ifOpen), or ours replace them
  await retryOnConflict(
    () =>
      inOwnTransaction(db, async (c) => {
        for (const stmt of DELETE) await c.run(stmt.text, bind(stmt, params));
        await c.run(OUTCOMES.text, bind(OUTCOMES, params));
        await c.run(DAYS.text, bind(DAYS, params));
        await c.run(MARK.text, bind(MARK, params));
        // performance measures are final with the same day (store/performance/)
        await storePerformanceDay(c, serviceDate, params.finalized_at);
      }),
    options.ifOpen ? () => isFinalized(db, serviceDate) : undefined,
  );
  liveDaysChanged(db);
  return summarize(db, serviceDate);
}

const CONFLICT_ATTEMPTS = 4;
const CONFLICT_BACKOFF_MS = 50;

/**
 * Runs `fn` again when its commit lost to another transaction writing the same rows (a second
 * process finalizing the day), up to CONFLICT_ATTEMPTS times; `settled` says that what the
 * other one committed will do.
 */
export async function retryOnConflict(
  fn: () => Promise<void>,
  settled?: () => Promise<boolean>,
  backoffMs = CONFLICT_BACKOFF_MS,
): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (!isConflict(err) || attempt >= CONFLICT_ATTEMPTS) throw err;
      if (settled && (await settled())) return;
      await delay(backoffMs * attempt);
    }
  }
}

/** DuckDB's words for two transactions writing the same rows (commit-time key or tuple conflicts). */
export function isConflict(err: unknown): boolean {
  const message = err instanceof Error ? err.message : String(err);
  return /conflict|duplicate key|primary key or unique constraint/i.test(message);
}

async function isFinalized(db: Db, serviceDate: string): Promise<boolean> {
  const rows = await db.all('SELECT 1 FROM reliability_finalized WHERE service_date = CAST($d AS DATE)', {
    d: serviceDate,
  });
  return rows.length > 0;
}

async function summarize(db: Db, serviceDate: string): Promise<FinalizeSummary> {
  const routes = await db.all<FinalizedRoute>(SUMMARY.text, bind(SUMMARY, { service_date: serviceDate }));
  const [mark] = await db.all<{ trips: number }>(
    'SELECT trips FROM reliability_finalized WHERE service_date = CAST($d AS DATE)',
    { d: serviceDate },
  );
  const modes = new Set(routes.map((r) => r.mode));
  return {
    service_date: serviceDate,
    trips: mark?.trips ?? 0,
    modes: MODES.filter((m) => modes.has(m)),
    route_ids: [...new Set(routes.flatMap((r) => (r.route_id === null ? [] : [r.route_id])))].sort(),
    routes,
  };
}

export interface DueOptions {
  timezone: string;
  /** 'HH:MM' local time on D + 1 until which day D still runs */
  serviceDayEnd: string;
  lateGraceMin: number;
  catchUpDays: number;
  now?: Date;
}

/** Service days that are over and not yet finalized, oldest first. */
export async function dueServiceDays(db: Db, options: DueOptions): Promise<string[]> {
  const now = options.now ?? new Date();
  const through = completeThrough(now, options.timezone, options.serviceDayEnd);
  const since = addDays(through, -options.catchUpDays + 1);
  const [last] = await db.all<{ last: string | null }>(
    `SELECT strftime(max(service_date), '%Y-%m-%d') AS last FROM reliability_finalized`,
  );
  const afterLast = last?.last ? addDays(last.last, 1) : since;
  const rows = await db.all<{ service_date: string }>(
    DUE.text,
    bind(DUE, {
      since,
      observed_since: laterDate(afterLast, since),
      complete_through: through,
      grace_min: options.lateGraceMin,
      now: now.toISOString(),
    }),
  );
  return rows.map((r) => r.service_date);
}

/** Finalizes every due day, oldest first; a day that fails does not stop the later ones. */
export async function finalizeDueDays(
  db: Db,
  options: DueOptions,
  onError: (day: string, err: unknown) => void = () => undefined,
): Promise<FinalizeSummary[]> {
  const done: FinalizeSummary[] = [];
  for (const day of await dueServiceDays(db, options)) {
    try {
      // a request may have finalized it since it was found due: then it is read, not redone
      done.push(await finalizeServiceDay(db, day, { now: options.now, ifOpen: true }));
    } catch (err) {
      onError(day, err);
    }
  }
  return done;
}
