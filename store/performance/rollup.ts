// Performance measures of one route by day, ISO week or period, computed in SQL over what
// stop_events says: finalized days from performance_days, days not finalized from stop_events
// itself (day.ts). Every list of a group is unnested and aggregated once, so a week's median is
// the median of its days' values, and the prediction error median is weighted by samples with a
// window over the cumulative count.
import { completeThrough, isTimeZone, wallClock } from '../../core/dates.ts';
import { PREDICTION_BOUNDS_S, PREDICTION_HORIZONS, type Mode } from '../../core/types.ts';
import { listValue } from '@duckdb/node-api';
import type { Db } from '../db.ts';
import { resolveTimezone } from '../reliability/timezone.ts';
import { performanceDayRows } from './day.ts';
import { DEFAULT_CONFIG } from '../../core/config.ts';
import type { PerformanceRow, PredictionAccuracy } from '../../core/performance-row.ts';

export type { PerformanceRow, PredictionAccuracy };
import { type RollupGroup, type RollupResultBase, validateRollupRange } from '../rollup-input.ts';

export interface PerformanceQuery {
  mode: Mode;
  routeId: string;
  /** the schedules whose rows count (core/served-ids.ts resolve; '' for rows without one); absent or null: all */
  schedules?: readonly string[] | null;
  group: RollupGroup;
  from: string;
  to: string;
  /** one row per service day type (weekday / saturday / sunday) inside each group */
  split?: boolean;
}

export interface PerformanceSettings {
  /** arrival delay within [early, late] seconds is on time (config performance.on_time_window_s) */
  on_time_window_s: readonly [number, number];
  /** a figure from fewer observations is null, with a note (config performance.min_observations) */
  min_observations: number;
}

export interface PerformanceOptions {
  timezone?: string;
  serviceDayEnd?: string;
  now?: Date;
}

export interface PerformanceResult extends RollupResultBase<PerformanceRow> {
  route_id: string;
  on_time_window_s: [number, number];
  min_observations: number;
}

/** the rows of the schedules a served route id stands for; $schedules NULL: every schedule's */
const SCHEDULES_FILTER = `(CAST($schedules AS VARCHAR[]) IS NULL
    OR list_contains(CAST($schedules AS VARCHAR[]), coalesce(schedule_id, '')))`;

const BOUNDS_SQL = `CASE p.horizon ${PREDICTION_HORIZONS.map(
  (h) => `WHEN '${h}' THEN p.error_s BETWEEN -${PREDICTION_BOUNDS_S[h][0]} AND ${PREDICTION_BOUNDS_S[h][1]}`,
).join(' ')} ELSE false END`;

/** The days not finalized, computed from stop events with the same parameters as the stored ones. */
const LIVE_DAY_ROWS = performanceDayRows({
  from: '$live_from',
  to: '$live_to',
  route: '$route_id',
  mode: '$mode',
  schedules: '$schedules',
});

/**
 * The figures SQL. `cal` is every date of from..to with its group and service day type; `g` the
 * route's day rows on it (stored when final, computed from stop_events otherwise).
 */
const ROLLUP_SQL = `
WITH cal AS (
  SELECT CAST(d AS DATE) AS service_date FROM generate_series(CAST($from AS DATE), CAST($to AS DATE),
    INTERVAL 1 DAY) t(d)
),
keyed AS (
  SELECT service_date,
    CASE $group WHEN 'day' THEN strftime(service_date, '%Y-%m-%d') WHEN 'week' THEN strftime(service_date, '%G-W%V')
      ELSE $from || '/' || $to END AS period,
    CASE WHEN NOT $split THEN 'all' WHEN isodow(service_date) = 6 THEN 'saturday'
      WHEN isodow(service_date) = 7 THEN 'sunday' ELSE 'weekday' END AS service_day,
    service_date IN (SELECT service_date FROM performance_finalized) AS final
  FROM cal
),
stored AS (
  SELECT * FROM performance_days
  WHERE mode = $mode AND route_id = $route_id AND service_date BETWEEN CAST($from AS DATE) AND CAST($to AS DATE)
    AND ${SCHEDULES_FILTER}
),
live AS (
  SELECT * FROM (${LIVE_DAY_ROWS})
  WHERE service_date NOT IN (SELECT service_date FROM performance_finalized)
),
g AS (
  SELECT k.period, k.service_day, r.*
  FROM keyed k JOIN (SELECT * FROM stored UNION ALL SELECT * FROM live) r USING (service_date)
),
groups AS (
  SELECT k.period, k.service_day, strftime(min(k.service_date), '%Y-%m-%d') AS period_start,
    strftime(max(k.service_date), '%Y-%m-%d') AS period_end, CAST(count(*) AS INTEGER) AS days,
      bool_and(k.final) AS final,
    CAST(count(*) FILTER (WHERE k.service_date IN (SELECT service_date FROM g)) AS INTEGER) AS days_observed
  FROM keyed k GROUP BY ALL
),
totals AS (
  SELECT period, service_day, CAST(sum(observed_stop_events) AS INTEGER) AS observed_stop_events FROM g GROUP BY ALL
),
delays AS (
  SELECT period, service_day, CAST(count(*) AS INTEGER) AS n,
    CAST(count(*) FILTER (WHERE d < $early) AS INTEGER) AS early,
      CAST(count(*) FILTER (WHERE d > $late) AS INTEGER) AS late
  FROM (SELECT period, service_day, unnest(arrival_delays) AS d FROM g) GROUP BY ALL
),
heads AS (
  SELECT period, service_day, CAST(count(*) AS INTEGER) AS n, median(x.h) AS median_h, median(x.s) AS median_s,
    CAST(count(*) FILTER (WHERE x.s > 0) AS INTEGER) AS pairs,
    CAST(count(*) FILTER (WHERE x.s > 0 AND x.h BETWEEN 0.75 * x.s AND 1.25 * x.s) AS INTEGER) AS on_time,
    CAST(count(*) FILTER (WHERE x.s > 0 AND x.h <= 0.5 * x.s) AS INTEGER) AS bunched,
    sum(CAST(x.h AS DOUBLE) * x.h) FILTER (WHERE x.s > 0) AS hh, sum(CAST(x.h AS DOUBLE)) FILTER (WHERE x.s > 0) AS h1,
    sum(CAST(x.s AS DOUBLE) * x.s) FILTER (WHERE x.s > 0) AS ss, sum(CAST(x.s AS DOUBLE)) FILTER (WHERE x.s > 0) AS s1
  FROM (SELECT period, service_day, unnest(headways) AS x FROM g) GROUP BY ALL
),
dwells AS (
  SELECT period, service_day, CAST(count(*) AS INTEGER) AS n, median(d) AS median_d
  FROM (SELECT period, service_day, unnest(dwells) AS d FROM g) GROUP BY ALL
),
travel AS (
  SELECT period, service_day, CAST(count(*) AS INTEGER) AS n, median(d) AS median_t, quantile_cont(d, 0.9) AS p90_t
  FROM (SELECT period, service_day, unnest(travel_times) AS d FROM g) GROUP BY ALL
),
samples AS (
  SELECT period, service_day, p.horizon AS horizon, abs(p.error_s) AS abs_error, sum(p.samples) AS n,
    sum(p.samples) FILTER (WHERE ${BOUNDS_SQL}) AS accurate
  FROM (SELECT period, service_day, unnest(predictions) AS p FROM g) GROUP BY ALL
),
ranked AS (
  SELECT *, sum(n) OVER (PARTITION BY period, service_day, horizon ORDER BY abs_error) AS running,
    sum(n) OVER (PARTITION BY period, service_day, horizon) AS total
  FROM samples
),
predictions AS (
  SELECT period, service_day,
    list({'horizon': horizon, 'predictions': total, 'accurate': accurate_total, 'median_abs_error_s': median_abs})
      AS by_horizon
  FROM (
    SELECT period, service_day, horizon, any_value(total) AS total,
      sum(coalesce(accurate, 0)) AS accurate_total,
      -- the weighted median: the first error at which half the samples are counted
      min(abs_error) FILTER (WHERE running * 2 >= total) AS median_abs
    FROM ranked GROUP BY ALL
  )
  GROUP BY ALL
)
SELECT gr.*, coalesce(t.observed_stop_events, 0) AS observed_stop_events,
  coalesce(d.n, 0) AS delays_n, d.early, d.late,
  coalesce(h.n, 0) AS headways_n, h.median_h, h.median_s, coalesce(h.pairs, 0) AS pairs, h.on_time AS headway_on_time,
  h.bunched, h.hh, h.h1, h.ss, h.s1,
  coalesce(dw.n, 0) AS dwells_n, dw.median_d, coalesce(tr.n, 0) AS trips_n, tr.median_t, tr.p90_t, p.by_horizon
FROM groups gr
LEFT JOIN totals t USING (period, service_day)
LEFT JOIN delays d USING (period, service_day)
LEFT JOIN heads h USING (period, service_day)
LEFT JOIN dwells dw USING (period, service_day)
LEFT JOIN travel tr USING (period, service_day)
LEFT JOIN predictions p USING (period, service_day)
ORDER BY gr.period_start, array_position(['all', 'weekday', 'saturday', 'sunday'], gr.service_day)`;

interface SqlRow {
  period: string;
  service_day: PerformanceRow['service_day'];
  period_start: string;
  period_end: string;
  days: number;
  final: boolean;
  days_observed: number;
  observed_stop_events: number;
  delays_n: number;
  early: number | null;
  late: number | null;
  headways_n: number;
  median_h: number | null;
  median_s: number | null;
  pairs: number;
  headway_on_time: number | null;
  bunched: number | null;
  hh: number | null;
  h1: number | null;
  ss: number | null;
  s1: number | null;
  dwells_n: number;
  median_d: number | null;
  trips_n: number;
  median_t: number | null;
  p90_t: number | null;
  by_horizon: { horizon: string; predictions: number; accurate: number; median_abs_error_s: number | null }[] | null;
}

const pct = (part: number, whole: number): number => Math.round((10_000 * part) / whole) / 100;
const secs = (v: number | null): number | null => (v === null ? null : Math.round(Number(v)));

/** The route's performance figures for from..to. */
export async function performanceRollup(
  db: Db,
  query: PerformanceQuery,
  settings: PerformanceSettings,
  options: PerformanceOptions = {},
): Promise<PerformanceResult> {
  validateRollupRange(query);
  if (options.timezone !== undefined && !isTimeZone(options.timezone)) {
    throw new RangeError(`unknown time zone: ${options.timezone}`);
  }
  const timezone = options.timezone ?? (await resolveTimezone(db));
  const now = options.now ?? new Date();
  const through = completeThrough(now, timezone, options.serviceDayEnd ?? DEFAULT_CONFIG.reliability.service_day_end);
  const today = wallClock(now, timezone).date;
  // days not finalized are computed from stop_events: only those, bounded by the range
  const [open] = await db.all<{ first: string | null }>(
    `SELECT strftime(min(d), '%Y-%m-%d') AS first FROM generate_series(CAST($from AS DATE), CAST($to AS DATE),
      INTERVAL 1 DAY) t(d)
     WHERE CAST(d AS DATE) NOT IN (SELECT service_date FROM performance_finalized)`,
    { from: query.from, to: query.to },
  );
  const [early, late] = settings.on_time_window_s;
  const schedules = query.schedules ? listValue([...query.schedules]) : null;
  const rows = await db.all<SqlRow>(ROLLUP_SQL, {
    mode: query.mode,
    route_id: query.routeId,
    schedules,
    group: query.group,
    split: query.split === true,
    from: query.from,
    to: query.to,
    live_from: open?.first ?? '9999-12-31',
    live_to: open?.first ? query.to : '0001-01-01',
    early,
    late,
  });
  const min = settings.min_observations;
  const result = rows.map((r) => performanceRow(query.routeId, r, min));
  const unobserved = await daysWithoutStopEvents(db, query, today);
  return {
    mode: query.mode,
    route_id: query.routeId,
    group: query.group,
    from: query.from,
    to: query.to,
    split: query.split === true,
    timezone,
    complete_through: through,
    on_time_window_s: [early, late],
    min_observations: min,
    rows: result,
    days_without_observations: unobserved,
    notes: unobserved.length
      ? [
          `No stop event of this route is recorded for ` +
            `${
              unobserved.length === 1
                ? `service day ${unobserved[0]}`
                : `${unobserved.length} service days (days_without_observations)`
            }: ` +
            'their figures are missing data, not a measure of service. Stop events come from vehicle positions ' +
            'and trip updates ' +
            '(transit-api replay writes them for archived snapshots).',
        ]
      : [],
  };
}

function performanceRow(routeId: string, r: SqlRow, min: number): PerformanceRow {
  const notes: string[] = [];
  const enough = (n: number, what: string, figures: string): boolean => {
    if (n >= min) return true;
    notes.push(`${figures}: ${n} ${what}, fewer than the ${min} needed (performance.min_observations)`);
    return false;
  };
  const delays = enough(r.delays_n, 'arrival delays', 'on_time_pct, early_pct, late_pct');
  const headways = enough(r.headways_n, 'headways', 'median_headway_s, scheduled_median_headway_s');
  const pairs = enough(r.pairs, 'headways with a scheduled headway', 'headway_on_time_pct, bunched_pct, excess_wait_s');
  const trips = enough(r.trips_n, 'complete trips', 'median_travel_time_s, p90_travel_time_s');
  const dwells = enough(r.dwells_n, 'dwell times', 'median_dwell_s');
  const byHorizon = new Map((r.by_horizon ?? []).map((p) => [p.horizon, p]));
  const accuracy = PREDICTION_HORIZONS.map((horizon): PredictionAccuracy => {
    const p = byHorizon.get(horizon);
    const n = Number(p?.predictions ?? 0);
    const ok = n >= min;
    return {
      horizon,
      predictions: n,
      accurate_pct: ok ? pct(Number(p!.accurate), n) : null,
      median_abs_error_s: ok ? secs(p!.median_abs_error_s) : null,
    };
  });
  const short = accuracy.filter((a) => a.accurate_pct === null).map((a) => a.horizon);
  if (short.length) notes.push(`prediction_accuracy ${short.join(', ')}: fewer than ${min} predictions judged`);
  const waits = pairs && r.h1 && r.s1 ? r.hh! / (2 * r.h1) - r.ss! / (2 * r.s1) : null;
  return {
    route_id: routeId,
    period: r.period,
    period_start: r.period_start,
    period_end: r.period_end,
    service_day: r.service_day,
    days: r.days,
    final: r.final,
    days_observed: r.days_observed,
    observed_stop_events: r.observed_stop_events,
    delays_observed: r.delays_n,
    on_time_pct: delays ? pct(r.delays_n - r.early! - r.late!, r.delays_n) : null,
    early_pct: delays ? pct(r.early!, r.delays_n) : null,
    late_pct: delays ? pct(r.late!, r.delays_n) : null,
    headways_observed: r.headways_n,
    median_headway_s: headways ? secs(r.median_h) : null,
    scheduled_median_headway_s: headways && r.median_s !== null ? secs(r.median_s) : null,
    headway_on_time_pct: pairs ? pct(r.headway_on_time!, r.pairs) : null,
    bunched_pct: pairs ? pct(r.bunched!, r.pairs) : null,
    excess_wait_s: waits === null ? null : Math.round(waits),
    complete_trips: r.trips_n,
    median_travel_time_s: trips ? secs(r.median_t) : null,
    p90_travel_time_s: trips ? secs(r.p90_t) : null,
    dwells_observed: r.dwells_n,
    median_dwell_s: dwells ? secs(r.median_d) : null,
    prediction_accuracy: accuracy,
    notes,
  };
}

async function daysWithoutStopEvents(db: Db, q: PerformanceQuery, today: string): Promise<string[]> {
  const to = q.to < today ? q.to : today;
  if (to < q.from) return [];
  const rows = await db.all<{ d: string }>(
    `SELECT strftime(CAST(d AS DATE), '%Y-%m-%d') AS d
     FROM generate_series(CAST($from AS DATE), CAST($to AS DATE), INTERVAL 1 DAY) t(d)
     WHERE CAST(d AS DATE) NOT IN (
       SELECT service_date FROM performance_days WHERE mode = $mode AND route_id = $route_id AND ${SCHEDULES_FILTER}
       UNION ALL
       SELECT DISTINCT service_date FROM stop_events
       WHERE mode = $mode AND route_id = $route_id AND service_date BETWEEN CAST($from AS DATE) AND CAST($to AS DATE)
         AND ${SCHEDULES_FILTER})
     ORDER BY 1`,
    {
      from: q.from,
      to,
      mode: q.mode,
      route_id: q.routeId,
      schedules: q.schedules ? listValue([...q.schedules]) : null,
    },
  );
  return rows.map((r) => r.d);
}
