-- Ids across agencies (issue 28, core/served-ids.ts): every stored row keeps its feed's own ids
-- and says which schedule they belong to, so two schedules' route `1` stay two routes. NULL for a
-- feed without a schedule. The API serves ids made unique from the pair; rows stay as the feed
-- and the schedule wrote them.
--
-- Rows stored before: with exactly one schedule imported, every row was that schedule's (each
-- feed resolved against it), and gets it. With several, the route-level tables are attributed
-- to the first schedule (by id) listing the route, as the route directory showed them; realtime
-- history and alert versions stay NULL (unknown).
SET VARIABLE sole_schedule = (SELECT CASE WHEN count(*) = 1 THEN min(schedule_id) END FROM schedules);

-- Added without a DEFAULT and filled by UPDATE: DuckDB replays an ALTER's default expression from
-- the WAL, and a function in it (getvariable) fails that replay ("no default database set"), so a
-- crash before the next checkpoint would leave a file that no longer opens.
ALTER TABLE vehicle_positions ADD COLUMN IF NOT EXISTS schedule_id VARCHAR;
ALTER TABLE arrivals ADD COLUMN IF NOT EXISTS schedule_id VARCHAR;
ALTER TABLE trip_observations ADD COLUMN IF NOT EXISTS schedule_id VARCHAR;
ALTER TABLE alert_versions ADD COLUMN IF NOT EXISTS schedule_id VARCHAR;
ALTER TABLE reliability_days ADD COLUMN IF NOT EXISTS schedule_id VARCHAR;
ALTER TABLE performance_days ADD COLUMN IF NOT EXISTS schedule_id VARCHAR;
UPDATE vehicle_positions SET schedule_id = getvariable('sole_schedule') WHERE getvariable('sole_schedule') IS NOT NULL;
UPDATE arrivals SET schedule_id = getvariable('sole_schedule') WHERE getvariable('sole_schedule') IS NOT NULL;
UPDATE trip_observations SET schedule_id = getvariable('sole_schedule') WHERE getvariable('sole_schedule') IS NOT NULL;
UPDATE alert_versions SET schedule_id = getvariable('sole_schedule') WHERE getvariable('sole_schedule') IS NOT NULL;
UPDATE reliability_days SET schedule_id = getvariable('sole_schedule') WHERE getvariable('sole_schedule') IS NOT NULL;
UPDATE performance_days SET schedule_id = getvariable('sole_schedule') WHERE getvariable('sole_schedule') IS NOT NULL;

-- a cache recomputed on the next rollup
DELETE FROM reliability_live_days;
ALTER TABLE reliability_live_days ADD COLUMN IF NOT EXISTS schedule_id VARCHAR;

-- trip_outcomes.schedule_id was NULL for trips outside the schedule (added); it now names the
-- schedule of the feed that saw them (in_schedule still tells them apart)
UPDATE trip_outcomes SET schedule_id = getvariable('sole_schedule')
WHERE schedule_id IS NULL AND getvariable('sole_schedule') IS NOT NULL;

-- several schedules: the first listing the route
UPDATE reliability_days AS d SET schedule_id = (
  SELECT min(r.schedule_id) FROM gtfs_routes AS r WHERE r.route_id = d.route_id AND r.mode = d.mode)
WHERE d.schedule_id IS NULL AND d.route_id IS NOT NULL;
UPDATE performance_days AS d SET schedule_id = (
  SELECT min(r.schedule_id) FROM gtfs_routes AS r WHERE r.route_id = d.route_id AND r.mode = d.mode)
WHERE d.schedule_id IS NULL;
UPDATE trip_observations AS o SET schedule_id = (
  SELECT min(r.schedule_id) FROM gtfs_routes AS r WHERE r.route_id = o.route_id)
WHERE o.schedule_id IS NULL AND o.route_id IS NOT NULL;
UPDATE trip_outcomes AS o SET schedule_id = (
  SELECT min(r.schedule_id) FROM gtfs_routes AS r WHERE r.route_id = o.route_id)
WHERE o.schedule_id IS NULL AND o.route_id IS NOT NULL;

RESET VARIABLE sole_schedule;
