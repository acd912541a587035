// What performance figures are computed from, per route and service day, out of stop_events:
// the lists a day's (or a week's) figures take their medians and shares of. Stored in
// performance_days when the reliability job finalizes the day (in the same transaction), and
// computed the same way, on request, for days not finalized yet.
import type { DuckDBConnection } from '@duckdb/node-api';

/** The statement's parameters, by name (`$from`), so a larger statement can embed it with its own. */
export interface DayRowParams {
  from: string;
  to: string;
  /** a route id, or NULL for every route */
  route: string;
  /** a mode, or NULL for every mode */
  mode: string;
  /** a VARCHAR[] of schedule ids ('' for rows without one), or NULL for every schedule's rows */
  schedules: string;
}

/**
 * Route-day rows of the service days in [from, to] (of one route and mode when given), with the
 * columns of performance_days: one row per schedule too (two schedules' route `1`), schedule_id
 * last as migration 020 appended it. The travel time of a trip is its first stop's departure to
 * its last stop's arrival, when both were measured (a trip seen mid-route has none).
 */
export const performanceDayRows = (p: DayRowParams): string => `
WITH ev AS (
  SELECT * FROM stop_events
  WHERE service_date BETWEEN CAST(${p.from} AS DATE) AND CAST(${p.to} AS DATE)
    AND route_id IS NOT NULL AND mode IS NOT NULL
    AND (CAST(${p.route} AS VARCHAR) IS NULL OR route_id = CAST(${p.route} AS VARCHAR))
    AND (CAST(${p.mode} AS VARCHAR) IS NULL OR mode = CAST(${p.mode} AS VARCHAR))
    AND (CAST(${p.schedules} AS VARCHAR[]) IS NULL
         OR list_contains(CAST(${p.schedules} AS VARCHAR[]), coalesce(schedule_id, '')))
),
trips AS (
  SELECT service_date, mode, route_id, schedule_id,
    CAST(epoch(max(actual_arrival_at) FILTER (WHERE last_stop))
       - epoch(max(actual_departure_at) FILTER (WHERE first_stop)) AS INTEGER) AS travel_s
  FROM ev
  GROUP BY service_date, mode, route_id, schedule_id, coalesce(schedule_id, feed_id), trip_id, trip_instance
),
travel AS (
  SELECT service_date, mode, route_id, schedule_id, list(travel_s ORDER BY travel_s) AS travel_times
  FROM trips WHERE travel_s >= 0 GROUP BY ALL
),
errors AS (
  SELECT service_date, mode, route_id, schedule_id,
    list({'horizon': horizon, 'error_s': error_s, 'samples': samples} ORDER BY horizon, error_s) AS predictions
  FROM (
    SELECT service_date, mode, route_id, schedule_id, p.horizon AS horizon, p.error_s AS error_s,
      CAST(sum(p.samples) AS INTEGER) AS samples
    FROM (SELECT service_date, mode, route_id, schedule_id,
      unnest(prediction_errors) AS p FROM ev WHERE prediction_errors IS NOT NULL)
    GROUP BY ALL
  )
  GROUP BY ALL
),
days AS (
  SELECT service_date, mode, route_id, schedule_id,
    CAST(count(*) FILTER (WHERE actual_arrival_at IS NOT NULL OR actual_departure_at IS NOT NULL) AS INTEGER)
      AS observed_stop_events,
    coalesce(list(arrival_delay_s ORDER BY arrival_delay_s) FILTER (WHERE arrival_delay_s IS NOT NULL), [])
      AS arrival_delays,
    coalesce(list({'h': headway_s, 's': scheduled_headway_s} ORDER BY headway_s) FILTER (WHERE headway_s IS
      NOT NULL), [])
      AS headways,
    coalesce(list(dwell_s ORDER BY dwell_s) FILTER (WHERE dwell_s IS NOT NULL), []) AS dwells
  FROM ev GROUP BY ALL
)
SELECT d.service_date, d.mode, d.route_id, d.observed_stop_events, d.arrival_delays, d.headways, d.dwells,
  coalesce(t.travel_times, []) AS travel_times, coalesce(e.predictions, []) AS predictions, d.schedule_id
FROM days d
LEFT JOIN travel t ON t.service_date = d.service_date AND t.mode = d.mode AND t.route_id = d.route_id
  AND t.schedule_id IS NOT DISTINCT FROM d.schedule_id
LEFT JOIN errors e ON e.service_date = d.service_date AND e.mode = d.mode AND e.route_id = d.route_id
  AND e.schedule_id IS NOT DISTINCT FROM d.schedule_id`;

/**
 * Stores the performance rows of `serviceDate`, replacing an earlier run's: inside the reliability
 * finalize's transaction, so a day is finalized for both or neither.
 */
export async function storePerformanceDay(
  conn: DuckDBConnection,
  serviceDate: string,
  finalizedAt: string,
): Promise<void> {
  await conn.run('DELETE FROM performance_days WHERE service_date = CAST($1 AS DATE)', [serviceDate]);
  await conn.run('DELETE FROM performance_finalized WHERE service_date = CAST($1 AS DATE)', [serviceDate]);
  await conn.run(
    `INSERT INTO performance_days ` +
      `${performanceDayRows({ from: '$1', to: '$1', route: 'NULL', mode: 'NULL', schedules: 'NULL' })}`,
    [serviceDate],
  );
  await conn.run(
    `INSERT INTO performance_finalized
     SELECT CAST($1 AS DATE), CAST($2 AS TIMESTAMPTZ), CAST(count(*) AS INTEGER)
     FROM performance_days WHERE service_date = CAST($1 AS DATE)`,
    [serviceDate, finalizedAt],
  );
}
