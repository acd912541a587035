-- Part of rollup.sql: group=week (ISO weeks cut by from..to) or period (from..to whole), optionally
-- split by service day type (1 weekday, 2 saturday, 3 sunday; 0 not split). The sums of the route
-- days that have rows; rollup.ts adds the groups without any and the calendar's days, final and
-- days_observed. Groups are named by their first day as an offset from $first ($from here).
SELECT route_id,
       CAST(CASE $group
         WHEN 'week' THEN CAST(date_trunc('week', service_date) AS DATE)
         ELSE CAST($from AS DATE)
       END - CAST($first AS DATE) AS INTEGER) AS group_day,
       CASE WHEN $split THEN CASE isodow(service_date) WHEN 6 THEN 2 WHEN 7 THEN 3 ELSE 1 END ELSE 0 END AS day_type,
       CAST(sum(scheduled) AS INTEGER) AS scheduled,
       CAST(sum(delivered) AS INTEGER) AS delivered,
       CAST(sum(canceled) AS INTEGER) AS canceled,
       CAST(sum(canceled_unscheduled) AS INTEGER) AS canceled_unscheduled,
       CAST(sum(partially_canceled) AS INTEGER) AS partially_canceled,
       CAST(sum(unobserved) AS INTEGER) AS unobserved,
       CAST(sum(pending) AS INTEGER) AS pending,
       CAST(sum(added) AS INTEGER) AS added
FROM route_days
GROUP BY ALL
