-- Stop events (issue 24): one row per train or bus (trip instance) per stop it served on a
-- service day, written once by the trip tracker (pipeline/stop-events/) when the stop was passed,
-- never updated. Column meanings and the rules: store/SCHEMA.md, `stop_events`.
CREATE TABLE stop_events (
  feed_id VARCHAR NOT NULL,
  schedule_id VARCHAR,
  service_date DATE NOT NULL,
  trip_id VARCHAR NOT NULL,
  trip_instance VARCHAR,
  route_id VARCHAR,
  mode VARCHAR,
  direction_id INTEGER,
  stop_id VARCHAR NOT NULL,
  station_id VARCHAR NOT NULL,
  stop_sequence INTEGER,
  vehicle_id VARCHAR,
  scheduled_arrival_at TIMESTAMPTZ,
  scheduled_departure_at TIMESTAMPTZ,
  actual_arrival_at TIMESTAMPTZ,
  actual_departure_at TIMESTAMPTZ,
  -- vp | tu | imputed; NULL for a stop not served (skipped, canceled)
  source VARCHAR,
  arrival_source VARCHAR,
  departure_source VARCHAR,
  arrival_delay_s INTEGER,
  departure_delay_s INTEGER,
  dwell_s INTEGER,
  travel_s INTEGER,
  scheduled_travel_s INTEGER,
  headway_s INTEGER,
  scheduled_headway_s INTEGER,
  -- the trip's schedule relationship, or skipped / canceled for a stop not served
  relationship VARCHAR NOT NULL,
  in_schedule BOOLEAN NOT NULL,
  first_stop BOOLEAN NOT NULL,
  last_stop BOOLEAN NOT NULL,
  -- the trip update's predictions for the stop, sampled every 30 s, against the actual arrival
  prediction_errors STRUCT(horizon VARCHAR, error_s INTEGER, samples INTEGER)[],
  written_at TIMESTAMPTZ NOT NULL
);

-- Performance measures (issue 24): per route and finalized service day, what the figures of
-- any day, week or period are computed from (store/performance/). Lists rather than figures, so a
-- week's median is the median of its days' values, and the on-time window applies when asked.
CREATE TABLE performance_days (
  service_date DATE NOT NULL,
  mode VARCHAR NOT NULL,
  route_id VARCHAR NOT NULL,
  -- stop events with an actual time
  observed_stop_events INTEGER NOT NULL,
  -- arrival delays (seconds) of the stop events that have one
  arrival_delays INTEGER[] NOT NULL,
  -- headway and scheduled headway pairs (seconds); s is NULL where the schedule gives none
  headways STRUCT(h INTEGER, s INTEGER)[] NOT NULL,
  dwells INTEGER[] NOT NULL,
  -- first stop's departure to last stop's arrival of each trip that has both (seconds)
  travel_times INTEGER[] NOT NULL,
  -- prediction errors summed by horizon and error (seconds, actual minus predicted)
  predictions STRUCT(horizon VARCHAR, error_s INTEGER, samples INTEGER)[] NOT NULL
);

-- One row per service day whose performance_days rows were stored, with the reliability job's
-- finalize of that day (including days without any stop event).
CREATE TABLE performance_finalized (
  service_date DATE PRIMARY KEY,
  finalized_at TIMESTAMPTZ NOT NULL,
  routes INTEGER NOT NULL
);
