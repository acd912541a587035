-- Trip matching (issue 13). NYCT re-publishers carry the agency's own trip id (origin time, route,
-- direction, path, e.g. 036050_2..S07R) in an extra trips.txt column; the matcher indexes it.
ALTER TABLE gtfs_trips ADD COLUMN mta_trip_id VARCHAR;

-- Each poll's trip matching: how many trips of its trip updates and vehicles were found in the
-- schedule, and every strategy's decisions. NULL when the poll looked up no trip.
ALTER TABLE feed_polls ADD COLUMN trips_matched INTEGER;
ALTER TABLE feed_polls ADD COLUMN trips_unmatched INTEGER;
ALTER TABLE feed_polls ADD COLUMN trips_ambiguous INTEGER;
ALTER TABLE feed_polls ADD COLUMN trips_previous_day INTEGER;
ALTER TABLE feed_polls ADD COLUMN matching STRUCT(strategy VARCHAR, matched INTEGER, unmatched INTEGER, ambiguous INTEGER)[];
