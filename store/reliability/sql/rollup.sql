-- Reliability rollup for one mode and one route ($route_id) or all its routes ($route_id NULL),
-- grouped by day, ISO week or the whole period ($group), optionally split by service day type.
-- Finished days come from reliability_days, the days of the live window ($live_from on) from
-- reliability_live_days (live.ts keeps it current), and older days not finalized (expanded on
-- demand, never observed: a past day with observations is finalized before this runs) from
-- scheduled_trips, all unobserved. The rolling 7-day figures need the six days before $from, so
-- the daily series starts there. `days_observed` counts the days on which any trip was seen.
-- route_days is read twice (routes and daily): computed once
WITH route_days AS MATERIALIZED (
  SELECT service_date, route_id, scheduled, delivered, canceled, canceled_unscheduled,
         partially_canceled, unobserved, 0 AS pending, added
  FROM reliability_days
  WHERE mode = $mode AND route_id IS NOT NULL
    AND (CAST($route_id AS VARCHAR) IS NULL OR route_id = $route_id)
    AND service_date BETWEEN CAST($from AS DATE) - 6 AND CAST($to AS DATE)
  UNION ALL
  SELECT service_date, route_id, scheduled, delivered, canceled, canceled_unscheduled,
         partially_canceled, unobserved, pending, added
  FROM reliability_live_days
  WHERE mode = $mode AND route_id IS NOT NULL
    AND (CAST($route_id AS VARCHAR) IS NULL OR route_id = $route_id)
    AND service_date BETWEEN CAST($from AS DATE) - 6 AND CAST($to AS DATE)
    AND service_date >= CAST($live_from AS DATE)
    -- a day finalized since the live counts were taken is read from reliability_days
    AND service_date NOT IN (
      SELECT service_date FROM reliability_finalized
      WHERE service_date BETWEEN CAST($from AS DATE) - 6 AND CAST($to AS DATE))
  {{rollup_open_days}}
),
observed AS ({{observed_days}}),
routes AS (
  SELECT DISTINCT route_id FROM route_days
  WHERE CAST($route_id AS VARCHAR) IS NULL
    AND service_date BETWEEN CAST($from AS DATE) AND CAST($to AS DATE)
  UNION
  SELECT CAST($route_id AS VARCHAR) WHERE CAST($route_id AS VARCHAR) IS NOT NULL
),
days AS (
  SELECT CAST(t.d AS DATE) AS service_date, f.service_date IS NOT NULL AS final, o.service_date IS NOT NULL AS observed
  FROM range(CAST($from AS DATE) - 6, CAST($to AS DATE) + 1, INTERVAL 1 DAY) AS t(d)
  LEFT JOIN reliability_finalized AS f ON f.service_date = CAST(t.d AS DATE)
  LEFT JOIN observed AS o ON o.service_date = CAST(t.d AS DATE)
),
daily AS (
  -- every route gets every day, so a day without trips is a row with zeros, not a gap
  SELECT r.route_id, d.service_date, d.final, d.observed,
         coalesce(sum(x.scheduled), 0) AS scheduled,
         coalesce(sum(x.delivered), 0) AS delivered,
         coalesce(sum(x.canceled), 0) AS canceled,
         coalesce(sum(x.canceled_unscheduled), 0) AS canceled_unscheduled,
         coalesce(sum(x.partially_canceled), 0) AS partially_canceled,
         coalesce(sum(x.unobserved), 0) AS unobserved,
         coalesce(sum(x.pending), 0) AS pending,
         coalesce(sum(x.added), 0) AS added
  FROM routes AS r
  CROSS JOIN days AS d
  LEFT JOIN route_days AS x ON x.route_id = r.route_id AND x.service_date = d.service_date
  GROUP BY r.route_id, d.service_date, d.final, d.observed
),
windowed AS (
  -- daily has exactly one row per route and day from $from - 6 to $to, so in (route, day) order
  -- the 6 rows before any day from $from on are that route's 6 previous days: the frame never
  -- crosses routes for the rows kept, and without PARTITION BY DuckDB's window is 3-4x cheaper
  SELECT *,
         sum(delivered) OVER w AS delivered_7d,
         sum(scheduled) OVER w AS scheduled_7d
  FROM daily
  WINDOW w AS (ORDER BY route_id, service_date ROWS BETWEEN 6 PRECEDING AND CURRENT ROW)
),
labeled AS (
  SELECT *,
         CASE $group
           WHEN 'day' THEN service_date
           WHEN 'week' THEN CAST(date_trunc('week', service_date) AS DATE)
           ELSE CAST($from AS DATE)
         END AS group_start,
         CASE WHEN $split
           THEN CASE isodow(service_date) WHEN 6 THEN 'saturday' WHEN 7 THEN 'sunday' ELSE 'weekday' END
           ELSE 'all'
         END AS service_day
  FROM windowed
  WHERE service_date BETWEEN CAST($from AS DATE) AND CAST($to AS DATE)
)
SELECT route_id,
       CASE $group
         WHEN 'day' THEN strftime(group_start, '%Y-%m-%d')
         WHEN 'week' THEN strftime(group_start, '%G-W%V')
         ELSE strftime(CAST($from AS DATE), '%Y-%m-%d') || '/' || strftime(CAST($to AS DATE), '%Y-%m-%d')
       END AS period,
       strftime(greatest(group_start, CAST($from AS DATE)), '%Y-%m-%d') AS period_start,
       strftime(least(CASE $group WHEN 'week' THEN group_start + 6 WHEN 'day' THEN group_start
                      ELSE CAST($to AS DATE) END, CAST($to AS DATE)), '%Y-%m-%d') AS period_end,
       service_day,
       CAST(count(*) AS INTEGER) AS days,
       bool_and(final) AS final,
       CAST(count(*) FILTER (WHERE observed) AS INTEGER) AS days_observed,
       CAST(sum(scheduled) AS INTEGER) AS scheduled,
       CAST(sum(delivered) AS INTEGER) AS delivered,
       CAST(sum(canceled) AS INTEGER) AS canceled,
       CAST(sum(canceled_unscheduled) AS INTEGER) AS canceled_unscheduled,
       CAST(sum(partially_canceled) AS INTEGER) AS partially_canceled,
       CAST(sum(unobserved) AS INTEGER) AS unobserved,
       CAST(sum(pending) AS INTEGER) AS pending,
       CAST(sum(added) AS INTEGER) AS added,
       CASE WHEN sum(scheduled) > 0 THEN round(100 * CAST(sum(delivered) AS DOUBLE) / sum(scheduled), 2) END AS delivered_pct,
       CAST(CASE WHEN $group = 'day' THEN max(delivered_7d) END AS INTEGER) AS delivered_7d,
       CAST(CASE WHEN $group = 'day' THEN max(scheduled_7d) END AS INTEGER) AS scheduled_7d,
       CASE WHEN $group = 'day' AND max(scheduled_7d) > 0
         THEN round(100 * CAST(max(delivered_7d) AS DOUBLE) / max(scheduled_7d), 2) END AS delivered_pct_7d
FROM labeled
GROUP BY route_id, group_start, service_day
ORDER BY route_id, group_start, CASE service_day WHEN 'saturday' THEN 2 WHEN 'sunday' THEN 3 ELSE 1 END
