-- The service dates of $mode with retained rows: from the first day any trip of the mode was
-- seen (finalized days, then live observations after $last_finalized) to the last day with rows.
WITH finalized AS (
  SELECT min(service_date) FILTER (WHERE delivered + canceled + added > 0) AS first_seen,
         max(service_date) AS last_day
  FROM reliability_days
  WHERE mode = $mode
),
live AS (
  SELECT min(service_date) AS first_seen, max(service_date) AS last_day
  FROM trip_observations
  WHERE service_date > coalesce(CAST($last_finalized AS DATE), DATE '0001-01-01') AND mode = $mode
)
SELECT strftime(coalesce(least(f.first_seen, l.first_seen), f.first_seen, l.first_seen), '%Y-%m-%d') AS earliest,
       strftime(coalesce(greatest(f.last_day, l.last_day), f.last_day, l.last_day), '%Y-%m-%d') AS latest,
       strftime(CAST($last_finalized AS DATE), '%Y-%m-%d') AS finalized_through
FROM finalized AS f, live AS l
