-- Part of rollup.sql: group=day. One row per route and day, each with the rolling 7-day figures
-- ending on it; the series starts six days before $from ($first) for them.
, windowed AS (
  -- daily has exactly one row per route and day from $first to $to, so in (route, day) order the
  -- 6 rows before any day from $from on are that route's 6 previous days: the frame never crosses
  -- routes for the rows kept, and without PARTITION BY DuckDB's window is 3-4x cheaper
  SELECT *,
         sum(delivered) OVER w AS delivered_7d,
         sum(scheduled) OVER w AS scheduled_7d
  FROM daily
  WINDOW w AS (ORDER BY route_id, service_date ROWS BETWEEN 6 PRECEDING AND CURRENT ROW)
)
SELECT route_id,
       strftime(service_date, '%Y-%m-%d') AS period,
       strftime(service_date, '%Y-%m-%d') AS period_start,
       strftime(service_date, '%Y-%m-%d') AS period_end,
       CASE WHEN $split
         THEN CASE isodow(service_date) WHEN 6 THEN 'saturday' WHEN 7 THEN 'sunday' ELSE 'weekday' END
         ELSE 'all'
       END AS service_day,
       1 AS days,
       final,
       CAST(observed AS INTEGER) AS days_observed,
       CAST(scheduled AS INTEGER) AS scheduled,
       CAST(delivered AS INTEGER) AS delivered,
       CAST(canceled AS INTEGER) AS canceled,
       CAST(canceled_unscheduled AS INTEGER) AS canceled_unscheduled,
       CAST(partially_canceled AS INTEGER) AS partially_canceled,
       CAST(unobserved AS INTEGER) AS unobserved,
       CAST(pending AS INTEGER) AS pending,
       CAST(added AS INTEGER) AS added,
       CASE WHEN scheduled > 0 THEN round(100 * CAST(delivered AS DOUBLE) / scheduled, 2) END AS delivered_pct,
       CAST(delivered_7d AS INTEGER) AS delivered_7d,
       CAST(scheduled_7d AS INTEGER) AS scheduled_7d,
       CASE WHEN scheduled_7d > 0 THEN round(100 * CAST(delivered_7d AS DOUBLE) / scheduled_7d, 2) END AS delivered_pct_7d
FROM windowed
WHERE service_date BETWEEN CAST($from AS DATE) AND CAST($to AS DATE)
ORDER BY route_id, service_date
