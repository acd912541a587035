-- Adds the live route-day counts of $outcomes_from..$outcomes_to (one run of days not finalized),
-- computed with the same rules finalize uses.
INSERT INTO reliability_live_days
WITH outcomes AS ({{trip_outcomes}})
SELECT * FROM ({{route_day_counts}})
ORDER BY mode, route_id, schedule_id, service_date
