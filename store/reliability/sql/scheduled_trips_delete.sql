-- Clears one schedule's expansion for a date range before it is rebuilt.
DELETE FROM scheduled_trips
WHERE schedule_id = $schedule_id
  AND service_date BETWEEN CAST($from AS DATE) AND CAST($to AS DATE)
