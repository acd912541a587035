-- Days of $from..$to that a schedule's calendar covers (calendar ranges, calendar_dates additions)
-- and that were never expanded: what a request for past days, or a finalize, expands first.
WITH spans AS (
  SELECT schedule_id, start_date AS lo, end_date AS hi FROM gtfs_calendar
  UNION ALL
  SELECT schedule_id, date, date FROM gtfs_calendar_dates WHERE exception_type = 1
),
days AS (
  SELECT CAST(d AS DATE) AS service_date
  FROM range(CAST($from AS DATE), CAST($to AS DATE) + INTERVAL 1 DAY, INTERVAL 1 DAY) AS t(d)
)
SELECT DISTINCT s.schedule_id, strftime(d.service_date, '%Y-%m-%d') AS service_date
FROM spans AS s
JOIN days AS d ON d.service_date BETWEEN s.lo AND s.hi
WHERE s.schedule_id IN (SELECT schedule_id FROM schedules)
  AND NOT EXISTS (
    SELECT 1 FROM schedule_days AS x WHERE x.schedule_id = s.schedule_id AND x.service_date = d.service_date)
ORDER BY 1, 2
