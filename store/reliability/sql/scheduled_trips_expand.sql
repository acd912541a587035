-- Expands one schedule into trips per service date for $from..$to, in SQL over a date range.
-- calendar gives weekday patterns between start_date and end_date; calendar_dates exception 1
-- adds a service on a date, 2 removes it (a removal wins when a feed lists both). A trip's
-- times stay on its service date even past 24:00. Instants use GTFS "noon minus 12 h" in the
-- agency time zone $tz, which keeps times right on DST change days.
INSERT INTO scheduled_trips (
  service_date, schedule_id, trip_id, route_id, mode, service_id, direction_id,
  first_departure_s, last_arrival_s, scheduled_start_at, scheduled_end_at
)
WITH days AS (
  SELECT CAST(d AS DATE) AS service_date
  FROM range(CAST($from AS DATE), CAST($to AS DATE) + INTERVAL 1 DAY, INTERVAL 1 DAY) AS t(d)
),
by_calendar AS (
  SELECT d.service_date, c.service_id
  FROM days AS d
  JOIN gtfs_calendar AS c
    ON c.schedule_id = $schedule_id
   AND d.service_date BETWEEN c.start_date AND c.end_date
  WHERE coalesce(CASE isodow(d.service_date)
      WHEN 1 THEN c.monday WHEN 2 THEN c.tuesday WHEN 3 THEN c.wednesday
      WHEN 4 THEN c.thursday WHEN 5 THEN c.friday WHEN 6 THEN c.saturday
      ELSE c.sunday END, false)
),
exceptions AS (
  SELECT date AS service_date, service_id,
         bool_or(exception_type = 1) AS added,
         bool_or(exception_type = 2) AS removed
  FROM gtfs_calendar_dates
  WHERE schedule_id = $schedule_id
    AND date BETWEEN CAST($from AS DATE) AND CAST($to AS DATE)
  GROUP BY ALL
),
active AS (
  SELECT service_date, service_id FROM by_calendar
  UNION
  SELECT service_date, service_id FROM exceptions WHERE added
  EXCEPT
  SELECT service_date, service_id FROM exceptions WHERE removed
),
trip_times AS (
  SELECT trip_id,
         min(coalesce(departure_s, arrival_s)) AS first_departure_s,
         max(coalesce(arrival_s, departure_s)) AS last_arrival_s
  FROM gtfs_stop_times
  WHERE schedule_id = $schedule_id
  GROUP BY trip_id
),
trips AS (
  -- a trip_id listed twice in trips.txt is one trip
  SELECT a.service_date, t.trip_id, t.route_id, t.service_id, t.direction_id
  FROM active AS a
  JOIN gtfs_trips AS t ON t.schedule_id = $schedule_id AND t.service_id = a.service_id
  QUALIFY row_number() OVER (PARTITION BY a.service_date, t.trip_id ORDER BY t.route_id, t.service_id) = 1
),
noon_minus_12h AS (
  SELECT service_date,
         epoch(timezone($tz, service_date + INTERVAL 12 HOUR)) - 43200 AS base_epoch
  FROM days
)
SELECT tr.service_date, $schedule_id, tr.trip_id, tr.route_id, r.mode, tr.service_id, tr.direction_id,
       tt.first_departure_s, tt.last_arrival_s,
       to_timestamp(n.base_epoch + tt.first_departure_s),
       to_timestamp(n.base_epoch + tt.last_arrival_s)
FROM trips AS tr
JOIN noon_minus_12h AS n USING (service_date)
LEFT JOIN trip_times AS tt USING (trip_id)
LEFT JOIN (
  SELECT route_id, any_value(mode) AS mode FROM gtfs_routes WHERE schedule_id = $schedule_id GROUP BY route_id
) AS r USING (route_id)
ORDER BY tr.service_date, r.mode, tr.route_id, tr.trip_id
