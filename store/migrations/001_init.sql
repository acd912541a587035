-- Static GTFS, one copy per schedule_id; replaced atomically on re-import.
CREATE TABLE schedules (
  schedule_id VARCHAR PRIMARY KEY,
  source VARCHAR NOT NULL,
  imported_at TIMESTAMPTZ NOT NULL,
  agency_timezone VARCHAR,
  feed_version VARCHAR,
  files VARCHAR[] NOT NULL
);

CREATE TABLE gtfs_agency (
  schedule_id VARCHAR NOT NULL,
  agency_id VARCHAR,
  agency_name VARCHAR,
  agency_url VARCHAR,
  agency_timezone VARCHAR
);

CREATE TABLE gtfs_routes (
  schedule_id VARCHAR NOT NULL,
  route_id VARCHAR NOT NULL,
  agency_id VARCHAR,
  route_short_name VARCHAR,
  route_long_name VARCHAR,
  route_type INTEGER NOT NULL,
  route_color VARCHAR,
  route_text_color VARCHAR,
  -- rail | bus | streetcar, or NULL for modes that are kept but not served
  mode VARCHAR
);

CREATE TABLE gtfs_stops (
  schedule_id VARCHAR NOT NULL,
  stop_id VARCHAR NOT NULL,
  stop_code VARCHAR,
  stop_name VARCHAR,
  stop_lat DOUBLE,
  stop_lon DOUBLE,
  location_type INTEGER,
  parent_station VARCHAR
);

CREATE TABLE gtfs_trips (
  schedule_id VARCHAR NOT NULL,
  trip_id VARCHAR NOT NULL,
  route_id VARCHAR NOT NULL,
  service_id VARCHAR NOT NULL,
  direction_id INTEGER,
  trip_headsign VARCHAR,
  shape_id VARCHAR
);

-- Times are seconds after local noon minus 12 h of the service date (GTFS semantics), so
-- values past 86400 stay on the service date they belong to.
CREATE TABLE gtfs_stop_times (
  schedule_id VARCHAR NOT NULL,
  trip_id VARCHAR NOT NULL,
  stop_sequence INTEGER NOT NULL,
  stop_id VARCHAR NOT NULL,
  arrival_s INTEGER,
  departure_s INTEGER
);

CREATE TABLE gtfs_calendar (
  schedule_id VARCHAR NOT NULL,
  service_id VARCHAR NOT NULL,
  monday BOOLEAN, tuesday BOOLEAN, wednesday BOOLEAN, thursday BOOLEAN,
  friday BOOLEAN, saturday BOOLEAN, sunday BOOLEAN,
  start_date DATE NOT NULL,
  end_date DATE NOT NULL
);

CREATE TABLE gtfs_calendar_dates (
  schedule_id VARCHAR NOT NULL,
  service_id VARCHAR NOT NULL,
  date DATE NOT NULL,
  -- 1 = service added, 2 = service removed
  exception_type INTEGER NOT NULL
);

CREATE TABLE gtfs_frequencies (
  schedule_id VARCHAR NOT NULL,
  trip_id VARCHAR NOT NULL,
  start_s INTEGER NOT NULL,
  end_s INTEGER NOT NULL,
  headway_secs INTEGER NOT NULL,
  exact_times INTEGER
);

CREATE TABLE gtfs_shapes (
  schedule_id VARCHAR NOT NULL,
  shape_id VARCHAR NOT NULL,
  shape_pt_sequence INTEGER NOT NULL,
  shape_pt_lat DOUBLE NOT NULL,
  shape_pt_lon DOUBLE NOT NULL
);

-- History, appended in batches.
CREATE TABLE vehicle_positions (
  feed_id VARCHAR NOT NULL,
  vehicle_id VARCHAR NOT NULL,
  route_id VARCHAR,
  trip_id VARCHAR,
  mode VARCHAR,
  lat DOUBLE NOT NULL,
  lon DOUBLE NOT NULL,
  bearing DOUBLE,
  speed_mps DOUBLE,
  stop_id VARCHAR,
  current_status VARCHAR,
  position_at TIMESTAMPTZ NOT NULL,
  observed_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE arrivals (
  feed_id VARCHAR NOT NULL,
  trip_id VARCHAR NOT NULL,
  route_id VARCHAR,
  mode VARCHAR,
  station_id VARCHAR NOT NULL,
  stop_id VARCHAR NOT NULL,
  stop_sequence INTEGER,
  direction_id INTEGER,
  service_date DATE,
  scheduled_at TIMESTAMPTZ,
  predicted_at TIMESTAMPTZ,
  delay_s INTEGER,
  delay_state VARCHAR NOT NULL,
  trip_relationship VARCHAR NOT NULL,
  in_schedule BOOLEAN NOT NULL,
  vehicle_id VARCHAR,
  observed_at TIMESTAMPTZ NOT NULL
);

-- One row per trip per poll in which it was seen: reliability's raw facts.
CREATE TABLE trip_observations (
  feed_id VARCHAR NOT NULL,
  service_date DATE NOT NULL,
  trip_id VARCHAR NOT NULL,
  route_id VARCHAR,
  mode VARCHAR,
  -- scheduled | added | unscheduled | canceled | replacement | duplicated | deleted | new
  relationship VARCHAR NOT NULL,
  skipped_stops INTEGER NOT NULL,
  -- trip_update | vehicle_position
  source VARCHAR NOT NULL,
  in_schedule BOOLEAN NOT NULL,
  observed_at TIMESTAMPTZ NOT NULL
);

-- Every version of every alert; the current state is the newest version per alert_id.
CREATE TABLE alert_versions (
  alert_id VARCHAR NOT NULL,
  feed_id VARCHAR NOT NULL,
  entity_id VARCHAR NOT NULL,
  version INTEGER NOT NULL,
  status VARCHAR NOT NULL,
  modes VARCHAR[] NOT NULL,
  impact VARCHAR NOT NULL,
  cause VARCHAR NOT NULL,
  severity VARCHAR,
  header STRUCT(language VARCHAR, text VARCHAR)[] NOT NULL,
  description STRUCT(language VARCHAR, text VARCHAR)[] NOT NULL,
  url STRUCT(language VARCHAR, text VARCHAR)[] NOT NULL,
  active_periods STRUCT(start_at TIMESTAMPTZ, end_at TIMESTAMPTZ)[] NOT NULL,
  routes VARCHAR[] NOT NULL,
  stations VARCHAR[] NOT NULL,
  trips VARCHAR[] NOT NULL,
  first_seen_at TIMESTAMPTZ NOT NULL,
  updated_at TIMESTAMPTZ NOT NULL,
  resolved_at TIMESTAMPTZ
);

CREATE TABLE feed_polls (
  feed_id VARCHAR NOT NULL,
  polled_at TIMESTAMPTZ NOT NULL,
  -- ok | unchanged | http_error | timeout | network_error | too_large | decode_error
  status VARCHAR NOT NULL,
  http_status INTEGER,
  bytes BIGINT NOT NULL,
  duration_ms DOUBLE NOT NULL,
  header_timestamp TIMESTAMPTZ,
  entities INTEGER NOT NULL,
  vehicles INTEGER NOT NULL,
  trip_updates INTEGER NOT NULL,
  alerts INTEGER NOT NULL,
  stored INTEGER NOT NULL,
  rejected INTEGER NOT NULL,
  rejected_by_reason STRUCT(reason VARCHAR, count INTEGER)[] NOT NULL,
  error VARCHAR
);
