-- Part of rollup.sql: group=day. Every route gets every day of $first..$to (a day without trips
-- is a row of zeros, not a gap), so in (route, day) order the 6 rows before any day from $from on
-- are that route's 6 previous days: the frame never crosses routes for the rows kept, and
-- without PARTITION BY DuckDB's window is 3-4x cheaper. Routes are numbered in route_id order so
-- the window sorts integers, and the rows come back unordered: rollup-rows.ts puts them in
-- (route_no, day) order (the window's own order, usually: then it only checks). Days are offsets
-- from $first; rollup.ts labels them and adds the calendar's final and observed.
, routes AS (
  SELECT CAST($route_id AS VARCHAR) AS route_id WHERE CAST($route_id AS VARCHAR) IS NOT NULL
  {{rollup_all_routes}}
),
ranked AS (
  SELECT route_id, CAST(row_number() OVER (ORDER BY route_id) AS INTEGER) AS route_no FROM routes
),
daily AS (
  -- finalized, live and open days are disjoint sets of days; a route's rows of one day (one per
  -- schedule, and rows without one) are summed first
  SELECT r.route_id, r.route_no, CAST(t.i AS INTEGER) AS day,
         coalesce(x.scheduled, 0) AS scheduled,
         coalesce(x.delivered, 0) AS delivered,
         coalesce(x.canceled, 0) AS canceled,
         coalesce(x.canceled_unscheduled, 0) AS canceled_unscheduled,
         coalesce(x.partially_canceled, 0) AS partially_canceled,
         coalesce(x.unobserved, 0) AS unobserved,
         coalesce(x.pending, 0) AS pending,
         coalesce(x.added, 0) AS added
  FROM ranked AS r
  CROSS JOIN range(CAST(CAST($to AS DATE) - CAST($first AS DATE) AS BIGINT) + 1) AS t(i)
  LEFT JOIN (
    SELECT service_date, route_id, sum(scheduled) AS scheduled, sum(delivered) AS delivered,
           sum(canceled) AS canceled, sum(canceled_unscheduled) AS canceled_unscheduled,
           sum(partially_canceled) AS partially_canceled, sum(unobserved) AS unobserved,
           sum(pending) AS pending, sum(added) AS added
    FROM route_days GROUP BY service_date, route_id
  ) AS x
    ON x.route_id = r.route_id AND x.service_date = CAST($first AS DATE) + CAST(t.i AS INTEGER)
),
windowed AS (
  SELECT *,
         sum(delivered) OVER w AS delivered_7d,
         sum(scheduled) OVER w AS scheduled_7d,
         sum(unobserved) OVER w AS unobserved_7d,
         sum(pending) OVER w AS pending_7d
  FROM daily
  WINDOW w AS (ORDER BY route_no, day ROWS BETWEEN 6 PRECEDING AND CURRENT ROW)
)
SELECT route_id, route_no, day,
       CAST(scheduled AS INTEGER) AS scheduled,
       CAST(delivered AS INTEGER) AS delivered,
       CAST(canceled AS INTEGER) AS canceled,
       CAST(canceled_unscheduled AS INTEGER) AS canceled_unscheduled,
       CAST(partially_canceled AS INTEGER) AS partially_canceled,
       CAST(unobserved AS INTEGER) AS unobserved,
       CAST(pending AS INTEGER) AS pending,
       CAST(added AS INTEGER) AS added,
       CAST(delivered_7d AS INTEGER) AS delivered_7d,
       CAST(scheduled_7d AS INTEGER) AS scheduled_7d,
       CAST(unobserved_7d AS INTEGER) AS unobserved_7d,
       CAST(pending_7d AS INTEGER) AS pending_7d
FROM windowed
WHERE day >= CAST(CAST($from AS DATE) - CAST($first AS DATE) AS INTEGER)
