-- The finished day's outcomes, appended sorted by mode, route and trip so a route's rows of a
-- day sit together.
INSERT INTO trip_outcomes (
  service_date, mode, route_id, trip_id, schedule_id, in_schedule, outcome, restored, duplicated,
  skipped_stops, observations, first_seen_at, last_seen_at, scheduled_start_at
)
SELECT service_date, mode, route_id, trip_id, schedule_id, in_schedule, outcome, restored, duplicated,
       skipped_stops, observations, first_seen_at, last_seen_at, scheduled_start_at
FROM ({{trip_outcomes}})
ORDER BY mode, route_id, trip_id, duplicated, schedule_id
