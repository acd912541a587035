import { MODES, type Mode } from '../../core/types.ts';
import type { Db } from '../db.ts';
import { inOwnTransaction } from './connection.ts';
import { addDays, completeThrough, isServiceDate } from '../../core/dates.ts';
import { storePerformanceDay } from '../performance/day.ts';
import { liveDaysChanged } from './live.ts';
import { expandMissingDays } from './scheduled-trips.ts';
import { bind, statement, statements } from './sql.ts';

const DELETE = statements('finalize_delete');
const OUTCOMES = statement('finalize_outcomes');
const DAYS = statement('finalize_days');
const MARK = statement('finalize_mark');
const SUMMARY = statement('finalize_summary');
const DUE = statement('due_days');

export interface FinalizedRoute {
  mode: Mode | null;
  /** null for trips seen without a route and absent from the schedule */
  route_id: string | null;
  scheduled: number;
  delivered: number;
  canceled: number;
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

/**
 * Stores the final outcome of every trip of `serviceDate` (trip_outcomes) and its route-day
 * counts (reliability_days), replacing an earlier run's rows for that day: running it twice
 * leaves the same rows. Call it once the day is over; trips never seen become `unobserved`.
 * Runs on its own connection, so history writes and API reads go on meanwhile. A day no
 * schedule was expanded for (history replayed after the fact) is expanded first, with the
 * version in use, so its trips are scheduled rather than counted as added.
 */
export async function finalizeServiceDay(
  db: Db,
  serviceDate: string,
  options: { now?: Date } = {},
): Promise<FinalizeSummary> {
  if (!isServiceDate(serviceDate)) throw new RangeError(`not a YYYY-MM-DD service date: ${serviceDate}`);
  const params = {
    service_date: serviceDate,
    outcomes_from: serviceDate,
    outcomes_to: serviceDate,
    complete_through: serviceDate,
    route_id: null,
    finalized_at: (options.now ?? new Date()).toISOString(),
  };
  await expandMissingDays(db, serviceDate, serviceDate);
  await inOwnTransaction(db, async (c) => {
    for (const stmt of DELETE) await c.run(stmt.text, bind(stmt, params));
    await c.run(OUTCOMES.text, bind(OUTCOMES, params));
    await c.run(DAYS.text, bind(DAYS, params));
    await c.run(MARK.text, bind(MARK, params));
    // performance measures are final with the same day (store/performance/)
    await storePerformanceDay(c, serviceDate, params.finalized_at);
  });
  liveDaysChanged(db);
  const routes = await db.all<FinalizedRoute>(SUMMARY.text, bind(SUMMARY, params));
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
      observed_since: afterLast > since ? afterLast : since,
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
      done.push(await finalizeServiceDay(db, day, { now: options.now }));
    } catch (err) {
      onError(day, err);
    }
  }
  return done;
}
