-- The modes that have any route for reliability: in an imported schedule, in finalized
-- reliability rows, or in the observations of days not finalized yet (route_known.sql's sources).
SELECT DISTINCT mode FROM gtfs_routes WHERE mode IS NOT NULL
UNION
SELECT DISTINCT mode FROM reliability_days WHERE mode IS NOT NULL AND route_id IS NOT NULL
UNION
SELECT DISTINCT mode FROM trip_observations
WHERE mode IS NOT NULL AND route_id IS NOT NULL
  AND service_date > (SELECT coalesce(max(service_date), DATE '0001-01-01') FROM reliability_finalized)
ORDER BY mode
