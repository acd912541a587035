-- One row per trip and service date in $outcomes_from..$outcomes_to: every scheduled trip, and
-- every trip seen in trip_observations whether scheduled or not. Rules (README.md):
-- canceled   seen CANCELED or DELETED at any poll of the day, unless restored;
-- restored   a later trip update (strictly later observed_at) shows it SCHEDULED again;
-- partially_canceled  seen running with SKIPPED stops;  delivered  seen running;
-- unobserved never seen, day over (service_date <= $complete_through); pending otherwise.
-- Repeated observations of a trip collapse into one row; `observations` counts the polls that
-- saw it (a trip_observations row stands for `polls` of them, store/SCHEMA.md). A DUPLICATED
-- trip carries its original's trip_id, so its copies (one row per original per day) are kept
-- apart from the original and count as added service. $route_id (NULL = all) narrows one route's figures.
-- A trip is a trip of one schedule: observations meet the scheduled trips of the schedule their
-- feed resolves against (their schedule_id; `scope` below, '' for a feed without a schedule,
-- whose trips are all outside any schedule), so two schedules' trip `T1` stay two trips.
-- Cancellations, restorations and duplicates are rare, so each is its own narrow scan: filters
-- on one column are pushed into the scan, where FILTER clauses in one wide aggregate are not.
WITH sched AS (
  SELECT service_date, schedule_id AS scope, trip_id,
         min({'route_id': route_id, 'mode': mode, 'start_at': scheduled_start_at}) AS s
  FROM scheduled_trips
  WHERE service_date BETWEEN CAST($outcomes_from AS DATE) AND CAST($outcomes_to AS DATE)
    AND (CAST($route_id AS VARCHAR) IS NULL OR route_id = $route_id)
  GROUP BY service_date, schedule_id, trip_id
),
observations AS NOT MATERIALIZED (
  -- inlined into each scan below, so every filter reaches the table scan
  -- a row stored without a schedule while exactly one is imported is that schedule's, as every
  -- feed resolves against the only one (rows stored before migration 020 included)
  SELECT *, coalesce(schedule_id, (SELECT CASE WHEN count(*) = 1 THEN min(schedule_id) END FROM schedules), '') AS scope
  FROM trip_observations
  WHERE service_date BETWEEN CAST($outcomes_from AS DATE) AND CAST($outcomes_to AS DATE)
    AND (CAST($route_id AS VARCHAR) IS NULL OR route_id = $route_id OR route_id IS NULL)
),
seen AS (
  SELECT service_date, scope, trip_id,
         any_value(route_id) AS route_id,
         any_value(mode) AS mode,
         max(skipped_stops) AS skipped_stops,
         CAST(sum(polls) AS BIGINT) AS observations,
         min(observed_at) AS first_seen_at,
         max(observed_at) AS last_seen_at
  FROM observations
  WHERE relationship <> 'duplicated'
  GROUP BY service_date, scope, trip_id
),
duplicates AS (
  SELECT service_date, scope, trip_id,
         any_value(route_id) AS route_id,
         any_value(mode) AS mode,
         max(skipped_stops) AS skipped_stops,
         CAST(sum(polls) AS BIGINT) AS observations,
         min(observed_at) AS first_seen_at,
         max(observed_at) AS last_seen_at
  FROM observations
  WHERE relationship = 'duplicated'
  GROUP BY service_date, scope, trip_id
),
canceled AS (
  SELECT service_date, scope, trip_id, max(observed_at) AS canceled_at
  FROM observations
  WHERE relationship IN ('canceled', 'deleted')
  GROUP BY service_date, scope, trip_id
),
running_again AS (
  SELECT o.service_date, o.scope, o.trip_id, max(o.observed_at) AS running_at
  FROM observations AS o
  JOIN canceled AS c ON c.service_date = o.service_date AND c.scope = o.scope AND c.trip_id = o.trip_id
  WHERE o.source = 'trip_update' AND o.relationship = 'scheduled' AND o.observed_at > c.canceled_at
  GROUP BY o.service_date, o.scope, o.trip_id
),
route_modes AS (
  SELECT schedule_id AS scope, route_id, min(mode) AS mode FROM gtfs_routes WHERE mode IS NOT NULL GROUP BY ALL
  UNION ALL
  -- a feed without a schedule: the mode any schedule gives the route
  SELECT '' AS scope, route_id, min(mode) AS mode FROM gtfs_routes WHERE mode IS NOT NULL GROUP BY route_id
),
joined AS (
  SELECT coalesce(s.service_date, o.service_date) AS service_date,
         coalesce(s.scope, o.scope) AS scope,
         coalesce(s.trip_id, o.trip_id) AS trip_id,
         false AS duplicated,
         s.s AS s, o.route_id, o.mode, o.skipped_stops, o.observations, o.first_seen_at, o.last_seen_at
  FROM sched AS s
  FULL JOIN seen AS o
    ON o.service_date = s.service_date AND o.scope = s.scope AND o.trip_id = s.trip_id
  UNION ALL BY NAME
  SELECT service_date, scope, trip_id, true AS duplicated, NULL AS s, route_id, mode, skipped_stops,
         observations, first_seen_at, last_seen_at
  FROM duplicates
)
SELECT j.service_date,
       coalesce(j.s.mode, j.mode, rm.mode) AS mode,
       coalesce(j.s.route_id, j.route_id) AS route_id,
       j.trip_id,
       nullif(j.scope, '') AS schedule_id,
       j.s IS NOT NULL AS in_schedule,
       CASE
         WHEN NOT j.duplicated AND c.canceled_at IS NOT NULL AND r.running_at IS NULL THEN 'canceled'
         WHEN j.observations > 0 AND j.skipped_stops > 0 THEN 'partially_canceled'
         WHEN j.observations > 0 THEN 'delivered'
         WHEN j.service_date <= CAST($complete_through AS DATE) THEN 'unobserved'
         ELSE 'pending'
       END AS outcome,
       NOT j.duplicated AND r.running_at IS NOT NULL AS restored,
       j.duplicated,
       coalesce(j.skipped_stops, 0) AS skipped_stops,
       coalesce(j.observations, 0) AS observations,
       j.first_seen_at,
       j.last_seen_at,
       j.s.start_at AS scheduled_start_at
FROM joined AS j
LEFT JOIN canceled AS c ON c.service_date = j.service_date AND c.scope = j.scope AND c.trip_id = j.trip_id
LEFT JOIN running_again AS r ON r.service_date = j.service_date AND r.scope = j.scope AND r.trip_id = j.trip_id
LEFT JOIN route_modes AS rm ON rm.scope = j.scope AND rm.route_id = j.route_id
WHERE CAST($route_id AS VARCHAR) IS NULL OR coalesce(j.s.route_id, j.route_id) = $route_id
