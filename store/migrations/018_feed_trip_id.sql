-- The feed's own trip id beside the matched one (issue 24): trip matching may give a row the
-- schedule's trip found by NYCT origin, start time or loosely (a train running up to an hour
-- behind a scheduled trip). NULL when the feed's id is trip_id or the feed gave none, and on
-- rows stored before this migration.
ALTER TABLE vehicle_positions ADD COLUMN IF NOT EXISTS feed_trip_id VARCHAR;
ALTER TABLE arrivals ADD COLUMN IF NOT EXISTS feed_trip_id VARCHAR;
ALTER TABLE trip_observations ADD COLUMN IF NOT EXISTS feed_trip_id VARCHAR;
