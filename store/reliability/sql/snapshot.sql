-- Last finalized days' figures per schedule and route, for the route directory.
SELECT schedule_id, route_id,
       CAST(sum(scheduled) AS INTEGER) AS scheduled,
       CAST(sum(delivered) AS INTEGER) AS delivered,
       CAST(sum(canceled) AS INTEGER) AS canceled,
       CAST(sum(partially_canceled) AS INTEGER) AS partially_canceled,
       CAST(sum(unobserved) AS INTEGER) AS unobserved,
       CAST(sum(added) AS INTEGER) AS added
FROM reliability_days
WHERE mode = $mode
  AND route_id IN (SELECT unnest(CAST($route_ids AS VARCHAR[])))
  AND service_date BETWEEN CAST($from AS DATE) AND CAST($to AS DATE)
GROUP BY schedule_id, route_id
