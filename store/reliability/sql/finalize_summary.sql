-- What a finalized day covers, for the reliability.updated event: per schedule and route.
SELECT schedule_id, mode, route_id,
       CAST(sum(scheduled) AS INTEGER) AS scheduled,
       CAST(sum(delivered) AS INTEGER) AS delivered,
       CAST(sum(canceled) AS INTEGER) AS canceled,
       CAST(sum(unobserved) AS INTEGER) AS unobserved
FROM reliability_days
WHERE service_date = CAST($service_date AS DATE)
GROUP BY schedule_id, mode, route_id
ORDER BY mode, route_id, schedule_id
