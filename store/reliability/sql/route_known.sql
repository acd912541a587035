-- Does $mode know $route_id: in an imported schedule, in finalized reliability rows, or seen in
-- the observations of days not finalized yet? Reliability answers for routes that left the
-- schedule too, as long as their history is retained. $schedules (NULL: any) narrows it to the
-- rows of the schedules a served id stands for ('' for rows without a schedule).
SELECT EXISTS (
      SELECT 1 FROM gtfs_routes WHERE mode = $mode AND route_id = $route_id
        AND (CAST($schedules AS VARCHAR[]) IS NULL OR list_contains(CAST($schedules AS VARCHAR[]), schedule_id)))
    OR EXISTS (
      SELECT 1 FROM reliability_days WHERE mode = $mode AND route_id = $route_id
        AND (CAST($schedules AS VARCHAR[]) IS NULL
             OR list_contains(CAST($schedules AS VARCHAR[]), coalesce(schedule_id, ''))))
    OR EXISTS (
      SELECT 1 FROM trip_observations
      WHERE mode = $mode AND route_id = $route_id
        AND (CAST($schedules AS VARCHAR[]) IS NULL
             OR list_contains(CAST($schedules AS VARCHAR[]), coalesce(schedule_id, '')))
        AND service_date > (SELECT coalesce(max(service_date), DATE '0001-01-01') FROM reliability_finalized)
    ) AS known
