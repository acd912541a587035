-- Route ids (rail line ids) of $mode: in the imported schedules or in finalized reliability rows.
SELECT route_id FROM gtfs_routes WHERE mode = $mode
UNION
SELECT route_id FROM reliability_days WHERE mode = $mode AND route_id IS NOT NULL
ORDER BY route_id
