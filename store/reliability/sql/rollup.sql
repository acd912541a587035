-- Reliability rollup for one mode and one route ($route_id) or all its routes ($route_id NULL),
-- grouped by day, ISO week or the whole period ($group), optionally split by service day type.
-- Finished days come from reliability_days, the days of the live window ($live_from on) from
-- reliability_live_days (live.ts keeps it current), and older days not finalized (expanded on
-- demand, never observed: a past day with observations is finalized before this runs) from
-- scheduled_trips, all unobserved. The series starts at $first: $from for weeks and periods, six
-- days earlier for days (their rolling 7-day figures). `days_observed` counts the days on which
-- any trip was seen.
--
-- rollup.ts runs one of eight variants, leaving out with statementWithout the includes a query
-- does not need: rollup_open_days (no day before the live window left open), rollup_all_routes
-- (one route asked), and one of rollup_select_days / rollup_select_grouped. On these small inputs
-- DuckDB's cost is per operator, not per row: a hash aggregate or a window that changes nothing
-- costs more than the scan, so the day series has no GROUP BY and weeks have no window.
-- route_days is read twice (routes and daily): computed once
WITH route_days AS MATERIALIZED (
  SELECT service_date, route_id, scheduled, delivered, canceled, canceled_unscheduled,
         partially_canceled, unobserved, 0 AS pending, added
  FROM reliability_days
  WHERE mode = $mode AND route_id IS NOT NULL
    AND (CAST($route_id AS VARCHAR) IS NULL OR route_id = $route_id)
    AND service_date BETWEEN CAST($first AS DATE) AND CAST($to AS DATE)
  UNION ALL
  SELECT service_date, route_id, scheduled, delivered, canceled, canceled_unscheduled,
         partially_canceled, unobserved, pending, added
  FROM reliability_live_days
  WHERE mode = $mode AND route_id IS NOT NULL
    AND (CAST($route_id AS VARCHAR) IS NULL OR route_id = $route_id)
    AND service_date BETWEEN CAST($first AS DATE) AND CAST($to AS DATE)
    AND service_date >= CAST($live_from AS DATE)
    -- a day finalized since the live counts were taken is read from reliability_days
    AND service_date NOT IN (
      SELECT service_date FROM reliability_finalized
      WHERE service_date BETWEEN CAST($first AS DATE) AND CAST($to AS DATE))
  {{rollup_open_days}}
),
observed AS ({{observed_days}}),
routes AS (
  SELECT CAST($route_id AS VARCHAR) AS route_id WHERE CAST($route_id AS VARCHAR) IS NOT NULL
  {{rollup_all_routes}}
),
days AS (
  SELECT CAST(t.d AS DATE) AS service_date, f.service_date IS NOT NULL AS final, o.service_date IS NOT NULL AS observed
  FROM range(CAST($first AS DATE), CAST($to AS DATE) + 1, INTERVAL 1 DAY) AS t(d)
  LEFT JOIN reliability_finalized AS f ON f.service_date = CAST(t.d AS DATE)
  LEFT JOIN observed AS o ON o.service_date = CAST(t.d AS DATE)
),
daily AS (
  -- every route gets every day, so a day without trips is a row with zeros, not a gap; route_days
  -- holds at most one row per route and day (finalized, live and open days are disjoint sets of
  -- days, and reliability_days one row per mode, route and day), so nothing is summed here
  SELECT r.route_id, d.service_date, d.final, d.observed,
         coalesce(x.scheduled, 0) AS scheduled,
         coalesce(x.delivered, 0) AS delivered,
         coalesce(x.canceled, 0) AS canceled,
         coalesce(x.canceled_unscheduled, 0) AS canceled_unscheduled,
         coalesce(x.partially_canceled, 0) AS partially_canceled,
         coalesce(x.unobserved, 0) AS unobserved,
         coalesce(x.pending, 0) AS pending,
         coalesce(x.added, 0) AS added
  FROM routes AS r
  CROSS JOIN days AS d
  LEFT JOIN route_days AS x ON x.route_id = r.route_id AND x.service_date = d.service_date
)
{{rollup_select_days}}
{{rollup_select_grouped}}
