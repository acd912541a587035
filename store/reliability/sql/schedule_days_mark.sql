-- Records which days of one schedule were expanded for $from..$to, with the schedule's newest
-- version (NULL for a schedule imported without versions) and the trips each day got.
DELETE FROM schedule_days
WHERE schedule_id = $schedule_id
  AND service_date BETWEEN CAST($from AS DATE) AND CAST($to AS DATE);

INSERT INTO schedule_days (schedule_id, service_date, version_id, trips, expanded_at)
SELECT $schedule_id, CAST(d.d AS DATE),
       (SELECT max(version_id) FROM schedule_versions WHERE schedule_id = $schedule_id),
       coalesce(n.trips, 0), now()
FROM range(CAST($from AS DATE), CAST($to AS DATE) + INTERVAL 1 DAY, INTERVAL 1 DAY) AS d(d)
LEFT JOIN (
  SELECT service_date, count(*) AS trips FROM scheduled_trips
  WHERE schedule_id = $schedule_id AND service_date BETWEEN CAST($from AS DATE) AND CAST($to AS DATE)
  GROUP BY service_date
) AS n ON n.service_date = CAST(d.d AS DATE);
