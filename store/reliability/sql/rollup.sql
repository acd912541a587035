-- Reliability rollup for one mode and one route ($route_id) or all its routes ($route_id NULL),
-- from $first to $to: $from for weeks and periods, six days earlier for days (their rolling
-- 7-day figures). Finished days come from reliability_days, the days of the live window
-- ($live_from on) from reliability_live_days (live.ts keeps it current), and older days not
-- finalized (expanded on demand, never observed: a past day with observations is finalized
-- before this runs) from scheduled_trips, all unobserved.
--
-- The calendar (which days are final, which observed) is the same for every route: rollup.ts
-- reads it once per change (calendar.ts) and passes it as $final, one character per day of
-- $first..$to ('1' finalized); the day labels and the rows of days and groups without trips are
-- added there too. On inputs this small DuckDB's cost is per operator and pipeline, not per row:
-- every join and materialized CTE left out here is worth more than the scan.
--
-- rollup.ts runs one of the variants, leaving out with statementWithout the includes a query
-- does not need: rollup_open_days (no day before the live window left open),
-- rollup_route_filter and rollup_all_routes (all routes or one), rollup_schedule_filter (ids not
-- scoped), and one of rollup_select_days / rollup_select_grouped. Rows are per schedule too
-- (two schedules' route `1`): the day series sums a route's rows of a day.
WITH route_days AS (
  SELECT service_date, route_id, scheduled, delivered, canceled, canceled_unscheduled,
         partially_canceled, unobserved, 0 AS pending, added
  FROM reliability_days
  WHERE mode = $mode AND route_id IS NOT NULL
    {{rollup_route_filter}}
    {{rollup_schedule_filter}}
    AND service_date BETWEEN CAST($first AS DATE) AND CAST($to AS DATE)
  UNION ALL
  SELECT service_date, route_id, scheduled, delivered, canceled, canceled_unscheduled,
         partially_canceled, unobserved, pending, added
  FROM reliability_live_days
  WHERE mode = $mode AND route_id IS NOT NULL
    {{rollup_route_filter}}
    {{rollup_schedule_filter}}
    AND service_date BETWEEN CAST($first AS DATE) AND CAST($to AS DATE)
    AND service_date >= CAST($live_from AS DATE)
    -- a day finalized since the live counts were taken is read from reliability_days
    AND substr($final, CAST(service_date - CAST($first AS DATE) AS INTEGER) + 1, 1) = '0'
  {{rollup_open_days}}
)
{{rollup_select_days}}
{{rollup_select_grouped}}
