-- Part of rollup.sql: the days before the live window that are not finalized (expanded on
-- demand, never observed), all unobserved, from scheduled_trips. rollup.ts leaves it out when
-- preparePastDays left no such day open: the branch alone costs about a third of the query.
UNION ALL
  SELECT service_date, route_id, count(DISTINCT trip_id) AS scheduled, 0, 0, 0, 0,
         CASE WHEN service_date <= CAST($complete_through AS DATE) THEN count(DISTINCT trip_id) ELSE 0 END,
         CASE WHEN service_date <= CAST($complete_through AS DATE) THEN 0 ELSE count(DISTINCT trip_id) END, 0
  FROM scheduled_trips
  WHERE mode = $mode
    {{rollup_route_filter}}
    {{rollup_schedule_filter}}
    -- $open_from..$open_to: the days before the live window left open (preparePastDays), as
    -- constants so the scan reads only their row groups (none when there are none)
    AND service_date BETWEEN CAST($open_from AS DATE) AND CAST($open_to AS DATE)
    AND service_date BETWEEN CAST($first AS DATE) AND CAST($to AS DATE)
    AND service_date < CAST($live_from AS DATE)
    AND substr($final, CAST(service_date - CAST($first AS DATE) AS INTEGER) + 1, 1) = '0'
  GROUP BY service_date, route_id
