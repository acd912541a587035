import { listValue } from '@duckdb/node-api';
import type { Mode } from '../../core/types.ts';
import type { Db } from '../db.ts';
import { runPrepared } from '../sql.ts';
import { addDays, completeThrough, earlierDate, isTimeZone, laterDate, wallClock } from '../../core/dates.ts';
import { preparePastDays } from './backfill.ts';
import { daysWithoutObservations, reliabilityCalendar } from './calendar.ts';
import { ensureLiveDays } from './live.ts';
import { coverageNotes } from './coverage.ts';
import { dayRows, groupedRows } from './rollup-rows.ts';
import { bind, statementWithout, type SqlStatement } from './sql.ts';
import { resolveTimezone } from './timezone.ts';
import { DEFAULT_CONFIG } from '../../core/config.ts';
import {
  MAX_ROLLUP_DAYS,
  ROLLUP_GROUPS,
  RollupInputError,
  type RollupGroup,
  type RollupResultBase,
  validateRollupRange,
} from '../rollup-input.ts';

export { MAX_ROLLUP_DAYS, ROLLUP_GROUPS, RollupInputError, type RollupGroup };

const ROLLUP_VARIANTS = new Map<string, SqlStatement>();

/**
 * rollup.sql without the parts this query does not need (see its header): days left open before
 * the live window are read from scheduled_trips only when there are some (the usual case has
 * none), the route filter or the route list, and the day series or the grouped sums.
 */
function rollupStatement(open: boolean, allRoutes: boolean, byDay: boolean, scoped: boolean): SqlStatement {
  const key = `${+open}${+allRoutes}${+byDay}${+scoped}`;
  let found = ROLLUP_VARIANTS.get(key);
  if (!found) {
    const omit = [byDay ? 'rollup_select_grouped' : 'rollup_select_days'];
    if (!open) omit.push('rollup_open_days');
    omit.push(allRoutes ? 'rollup_route_filter' : 'rollup_all_routes');
    if (!scoped) omit.push('rollup_schedule_filter');
    found = statementWithout('rollup', omit);
    ROLLUP_VARIANTS.set(key, found);
  }
  return found;
}

export type ServiceDayType = 'all' | 'weekday' | 'saturday' | 'sunday';

export interface RollupQuery {
  mode: Mode;
  /** one bus/streetcar route or rail line; absent: every route of the mode with rows in range */
  routeId?: string;
  /**
   * the schedules whose rows of `routeId` count (core/served-ids.ts resolve; '' for rows without
   * a schedule); absent or null: every schedule's
   */
  schedules?: readonly string[] | null;
  group: RollupGroup;
  /** inclusive service dates, YYYY-MM-DD */
  from: string;
  to: string;
  /** one row per service day type (weekday / saturday / sunday) inside each group */
  split?: boolean;
}

export interface RollupOptions {
  /** the agency zone; default: reliability's resolved zone (config, schedule, else UTC) */
  timezone?: string;
  /** 'HH:MM' on D + 1 until which day D still runs; default 04:00 */
  serviceDayEnd?: string;
  now?: Date;
  /** live counts (days not finalized) older than this are refreshed; default 30 s, 0 = always */
  liveMaxAgeMs?: number;
  /** days back that days not finalized are computed live; default 14 */
  liveLookbackDays?: number;
  /**
   * first day worth expanding for the rolling figures before `from` (the first day any trip was
   * seen: the API passes its retained window); default: all six days before `from`
   */
  historyFrom?: string;
}

/**
 * Counts of one group. `scheduled` is the denominator and `delivered` the numerator of
 * `delivered_pct` (0-100, two decimals; null when nothing was scheduled). For scheduled trips,
 * scheduled = delivered + (canceled - canceled_unscheduled) + unobserved + pending.
 */
export interface RollupCounts {
  scheduled: number;
  /** scheduled trips seen running, partially canceled ones included */
  delivered: number;
  /** trips seen CANCELED or DELETED and not restored, scheduled or not */
  canceled: number;
  /** the part of `canceled` not in the schedule (no static data, or unknown trip ids) */
  canceled_unscheduled: number;
  /** trips seen running with skipped stops (scheduled or added) */
  partially_canceled: number;
  /** scheduled, never seen, day over */
  unobserved: number;
  /** scheduled, not seen yet, day still running (only in days not finalized) */
  pending: number;
  /** trips seen running that the schedule does not list */
  added: number;
  delivered_pct: number | null;
  /**
   * scheduled trips seen by any feed (running or canceled): scheduled - unobserved - pending,
   * the denominator of `delivered_pct_of_observed`
   */
  observed: number;
  /** 100 × delivered / observed, two decimals; null when no scheduled trip was seen */
  delivered_pct_of_observed: number | null;
}

export interface RollingWindow {
  /** the 7 days ending on this row's day */
  from: string;
  to: string;
  scheduled: number;
  delivered: number;
  delivered_pct: number | null;
  /** scheduled trips of the seven days seen by any feed */
  observed: number;
  /** scheduled trips of the seven days never seen, on days that are over */
  unobserved: number;
  delivered_pct_of_observed: number | null;
}

export interface RollupRow extends RollupCounts {
  route_id: string;
  /** YYYY-MM-DD (day), YYYY-Www ISO week (week), from/to (period) */
  period: string;
  /** the group's days inside from..to (a week cut by the range is shorter) */
  period_start: string;
  period_end: string;
  service_day: ServiceDayType;
  /** days counted in this row */
  days: number;
  /** every day of the row is finalized; false while a day's trips may still change */
  final: boolean;
  /** days of the row on which any trip was seen; fewer than `days`: some days have no observations */
  days_observed: number;
  /** group=day only: the rolling 7-day figures ending on this day; null otherwise */
  rolling_7d: RollingWindow | null;
}

/**
 * `notes`: days without observations, rows (or their 7-day figures) where more than half the
 * scheduled trips were never observed.
 */
export interface RollupResult extends RollupResultBase<RollupRow> {
  /** null: every route of the mode */
  route_id: string | null;
}

/**
 * Reliability figures of one mode's route (or all its routes) for from..to. Finalized days are
 * read from reliability_days; days not finalized (today, or days the job has not reached, within
 * liveLookbackDays) from the live counts of scheduled_trips and trip_observations (live.ts).
 */
export async function rollup(db: Db, query: RollupQuery, options: RollupOptions = {}): Promise<RollupResult> {
  validateRollupRange(query);
  if (options.timezone !== undefined && !isTimeZone(options.timezone)) {
    throw new RangeError(`unknown time zone: ${options.timezone}`);
  }
  const timezone = options.timezone ?? (await resolveTimezone(db));
  const now = options.now ?? new Date();
  const through = completeThrough(now, timezone, options.serviceDayEnd ?? DEFAULT_CONFIG.reliability.service_day_end);
  const today = wallClock(now, timezone).date;
  const lookbackDays = options.liveLookbackDays ?? 14;
  const liveFrom = addDays(today, -(lookbackDays - 1));
  // the rolling figures (group=day only) reach six days before `from`, but no earlier than
  // history goes; other groups drop those days, so they need not be prepared (nor scanned)
  const rollingFrom = query.group === 'day' ? addDays(query.from, -6) : query.from;
  const history = options.historyFrom ?? rollingFrom;
  const floor = earlierDate(history, query.from);
  const { open } = await preparePastDays(db, {
    from: laterDate(floor, rollingFrom),
    to: query.to,
    completeThrough: through,
    liveFrom,
    now,
  });
  await ensureLiveDays(db, { today, completeThrough: through, lookbackDays, maxAgeMs: options.liveMaxAgeMs ?? 30_000 });
  const byDay = query.group === 'day';
  const calendar = await reliabilityCalendar(db, rollingFrom, query.to);
  const schedules = query.schedules ?? null;
  const sql = rollupStatement(open !== null, query.routeId === undefined, byDay, schedules !== null);
  const split = query.split === true;
  const { names, columns } = await db.exclusive(async (c) => {
    const reader = await runPrepared(
      c,
      sql.text,
      bind(sql, {
        mode: query.mode,
        route_id: query.routeId ?? null,
        schedules: schedules === null ? null : listValue([...schedules]),
        group: query.group,
        split,
        first: rollingFrom,
        from: query.from,
        to: query.to,
        live_from: liveFrom,
        complete_through: through,
        final: calendar.final,
        // constants bound the scan of scheduled_trips; an empty span (from after to) prunes it whole
        open_from: open?.[0] ?? '9999-12-31',
        open_to: open?.[1] ?? '0001-01-01',
      }),
    );
    return { names: reader.columnNames(), columns: reader.getColumns() };
  });
  const rows = byDay
    ? dayRows(names, columns, calendar, split)
    : groupedRows(names, columns, calendar, {
        group: query.group,
        from: query.from,
        to: query.to,
        split,
        routeId: query.routeId,
      });
  const unobserved = daysWithoutObservations(calendar, query.from, earlierDate(query.to, today));
  return {
    mode: query.mode,
    route_id: query.routeId ?? null,
    group: query.group,
    from: query.from,
    to: query.to,
    split: query.split === true,
    timezone,
    complete_through: through,
    rows,
    days_without_observations: unobserved,
    notes: [...(unobserved.length ? [notice(unobserved)] : []), ...coverageNotes(rows, split)],
  };
}

function notice(days: readonly string[]): string {
  const which =
    days.length === 1 ? `service day ${days[0]}` : `${days.length} service days (days_without_observations)`;
  return (
    `No trip observations are recorded for ${which}: scheduled trips there count as unobserved (pending ` +
    `while the day runs), ` +
    'which measures missing data, not missing service. Replay archived snapshots of those days (transit-api replay) ' +
    'to measure them.'
  );
}
