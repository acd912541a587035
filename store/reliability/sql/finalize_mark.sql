INSERT INTO reliability_finalized (service_date, finalized_at, trips, routes)
SELECT CAST($service_date AS DATE), CAST($finalized_at AS TIMESTAMPTZ),
       (SELECT CAST(count(*) AS INTEGER) FROM trip_outcomes WHERE service_date = CAST($service_date AS DATE)),
       (SELECT CAST(count(*) AS INTEGER) FROM reliability_days WHERE service_date = CAST($service_date AS DATE))
ON CONFLICT (service_date) DO UPDATE SET
  finalized_at = excluded.finalized_at, trips = excluded.trips, routes = excluded.routes
