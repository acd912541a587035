-- The modes that know $route_id, from the same sources as route_known.sql: an imported schedule,
-- finalized reliability rows, or the observations of days not finalized yet. Two modes may share
-- an id (a rail line and a bus route both named "1"): the CLI then asks which.
SELECT mode FROM gtfs_routes WHERE route_id = $route_id AND mode IS NOT NULL
UNION
SELECT mode FROM reliability_days WHERE route_id = $route_id AND mode IS NOT NULL
UNION
SELECT mode FROM trip_observations
WHERE route_id = $route_id AND mode IS NOT NULL
  AND service_date > (SELECT coalesce(max(service_date), DATE '0001-01-01') FROM reliability_finalized)
ORDER BY mode
