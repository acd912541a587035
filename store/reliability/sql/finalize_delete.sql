-- Finalizing a day replaces whatever an earlier run stored for it, which keeps it idempotent.
DELETE FROM trip_outcomes WHERE service_date = CAST($service_date AS DATE);
DELETE FROM reliability_days WHERE service_date = CAST($service_date AS DATE)
