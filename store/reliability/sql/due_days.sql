-- Service days that are over and not finalized yet: days in $since..$complete_through with
-- scheduled trips, or with observations after $observed_since (observations are large, so only
-- days after the last finalized one are looked for there), once their last scheduled arrival plus
-- the grace period has passed (some trips run past the usual end of the service day). Days before
-- history began (the first finalized day or the first observation) are left alone: a schedule
-- imported today also expands yesterday, which nobody was watching.
WITH candidates AS (
  SELECT DISTINCT service_date FROM scheduled_trips
  WHERE service_date BETWEEN CAST($since AS DATE) AND CAST($complete_through AS DATE)
  UNION
  SELECT DISTINCT service_date FROM trip_observations
  WHERE service_date BETWEEN CAST($observed_since AS DATE) AND CAST($complete_through AS DATE)
),
history AS (
  SELECT least(
    (SELECT min(service_date) FROM reliability_finalized),
    (SELECT min(service_date) FROM trip_observations
     WHERE service_date BETWEEN CAST($since AS DATE) AND CAST($complete_through AS DATE))) AS began
),
last_arrivals AS (
  SELECT service_date, max(scheduled_end_at) AS last_arrival_at
  FROM scheduled_trips
  WHERE service_date BETWEEN CAST($since AS DATE) AND CAST($complete_through AS DATE)
  GROUP BY service_date
)
SELECT strftime(c.service_date, '%Y-%m-%d') AS service_date
FROM candidates AS c
CROSS JOIN history AS h
LEFT JOIN last_arrivals AS a USING (service_date)
WHERE c.service_date >= h.began
  AND c.service_date NOT IN (
    SELECT service_date FROM reliability_finalized
    WHERE service_date BETWEEN CAST($since AS DATE) AND CAST($complete_through AS DATE))
  AND (a.last_arrival_at IS NULL
       OR a.last_arrival_at + to_minutes(CAST($grace_min AS BIGINT)) <= CAST($now AS TIMESTAMPTZ))
ORDER BY c.service_date
