-- Route ids (rail line ids) of $mode with their schedule: in the imported schedules or in
-- finalized reliability rows (schedule_id NULL: rows of a feed without a schedule).
SELECT schedule_id, route_id FROM gtfs_routes WHERE mode = $mode
UNION
SELECT schedule_id, route_id FROM reliability_days WHERE mode = $mode AND route_id IS NOT NULL
ORDER BY route_id, schedule_id
