-- Counts per route and service date over a relation named `outcomes` (rows shaped like
-- trip_outcomes), which the caller binds in a WITH clause. Definitions:
-- scheduled  trips in the schedule for that date (the denominator of delivered_pct);
-- delivered  scheduled trips seen running, partially canceled ones included (the numerator);
-- canceled   every canceled trip, scheduled or not; canceled_unscheduled the part not scheduled;
-- added      trips seen running that the schedule does not list.
-- So: scheduled = delivered + (canceled - canceled_unscheduled) + unobserved + pending.
-- One row per schedule too: two schedules' route `1` are two routes. schedule_id comes last, as
-- in reliability_live_days (migration 020 appended it), which takes these rows as they come.
SELECT service_date, mode, route_id,
       CAST(count(*) FILTER (WHERE in_schedule) AS INTEGER) AS scheduled,
       CAST(count(*) FILTER (WHERE in_schedule AND outcome IN ('delivered', 'partially_canceled')) AS INTEGER) AS delivered,
       CAST(count(*) FILTER (WHERE outcome = 'canceled') AS INTEGER) AS canceled,
       CAST(count(*) FILTER (WHERE outcome = 'canceled' AND NOT in_schedule) AS INTEGER) AS canceled_unscheduled,
       CAST(count(*) FILTER (WHERE outcome = 'partially_canceled') AS INTEGER) AS partially_canceled,
       CAST(count(*) FILTER (WHERE outcome = 'unobserved') AS INTEGER) AS unobserved,
       CAST(count(*) FILTER (WHERE outcome = 'pending') AS INTEGER) AS pending,
       CAST(count(*) FILTER (WHERE NOT in_schedule AND outcome <> 'canceled') AS INTEGER) AS added,
       CAST(count(*) FILTER (WHERE restored) AS INTEGER) AS restored,
       schedule_id
FROM outcomes
GROUP BY service_date, mode, route_id, schedule_id
