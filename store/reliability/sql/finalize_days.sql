-- Route-day counts of the finished day, from the outcomes just stored.
INSERT INTO reliability_days (
  service_date, mode, route_id, scheduled, delivered, canceled, canceled_unscheduled,
  partially_canceled, unobserved, added, restored, schedule_id
)
WITH outcomes AS (
  SELECT * FROM trip_outcomes WHERE service_date = CAST($service_date AS DATE)
)
SELECT service_date, mode, route_id, scheduled, delivered, canceled, canceled_unscheduled,
       partially_canceled, unobserved, added, restored, schedule_id
FROM ({{route_day_counts}})
ORDER BY mode, route_id, schedule_id
