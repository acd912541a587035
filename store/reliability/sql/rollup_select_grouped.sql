-- Part of rollup.sql: group=week (ISO weeks cut by from..to) or period (from..to whole), optionally
-- split by service day type. No rolling figures: the series starts at $from ($first).
, labeled AS (
  SELECT *,
         CASE $group
           WHEN 'week' THEN CAST(date_trunc('week', service_date) AS DATE)
           ELSE CAST($from AS DATE)
         END AS group_start,
         CASE WHEN $split
           THEN CASE isodow(service_date) WHEN 6 THEN 'saturday' WHEN 7 THEN 'sunday' ELSE 'weekday' END
           ELSE 'all'
         END AS service_day
  FROM daily
)
SELECT route_id,
       CASE $group
         WHEN 'week' THEN strftime(group_start, '%G-W%V')
         ELSE strftime(CAST($from AS DATE), '%Y-%m-%d') || '/' || strftime(CAST($to AS DATE), '%Y-%m-%d')
       END AS period,
       strftime(greatest(group_start, CAST($from AS DATE)), '%Y-%m-%d') AS period_start,
       strftime(least(CASE $group WHEN 'week' THEN group_start + 6 ELSE CAST($to AS DATE) END, CAST($to AS DATE)), '%Y-%m-%d') AS period_end,
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
       CAST(NULL AS INTEGER) AS delivered_7d,
       CAST(NULL AS INTEGER) AS scheduled_7d,
       CAST(NULL AS DOUBLE) AS delivered_pct_7d
FROM labeled
GROUP BY route_id, group_start, service_day
ORDER BY route_id, group_start, CASE service_day WHEN 'saturday' THEN 2 WHEN 'sunday' THEN 3 ELSE 1 END
