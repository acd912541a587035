-- Reliability: the schedule expanded per service date, and each finished service day's outcomes.
-- Definitions: store/reliability/README.md.

-- One row per trip active on a service date (calendar + calendar_dates), rebuilt per schedule and
-- date range by refreshScheduledTrips. Stop times past 24:00 stay on their service date.
CREATE TABLE scheduled_trips (
  service_date DATE NOT NULL,
  schedule_id VARCHAR NOT NULL,
  trip_id VARCHAR NOT NULL,
  route_id VARCHAR NOT NULL,
  -- rail | bus | streetcar, or NULL for modes that are kept but not served
  mode VARCHAR,
  service_id VARCHAR NOT NULL,
  direction_id INTEGER,
  -- GTFS seconds after "noon minus 12 h" of the service date; may exceed 86,400
  first_departure_s INTEGER,
  last_arrival_s INTEGER,
  -- the same two times as instants, resolved in the agency time zone (DST days included)
  scheduled_start_at TIMESTAMPTZ,
  scheduled_end_at TIMESTAMPTZ
);

-- One row per trip and finished service day: scheduled trips and trips seen but not scheduled.
-- Appended per day, sorted by mode, route and trip inside the day.
CREATE TABLE trip_outcomes (
  service_date DATE NOT NULL,
  mode VARCHAR,
  route_id VARCHAR,
  trip_id VARCHAR NOT NULL,
  -- NULL for trips not in any schedule for that date ("added")
  schedule_id VARCHAR,
  in_schedule BOOLEAN NOT NULL,
  -- delivered | partially_canceled | canceled | unobserved (pending only in live figures)
  outcome VARCHAR NOT NULL,
  -- seen canceled, then seen running again in a later trip update of the same day
  restored BOOLEAN NOT NULL,
  -- a DUPLICATED copy of trip_id (extra service beside the original, which keeps its own row)
  duplicated BOOLEAN NOT NULL,
  skipped_stops INTEGER NOT NULL,
  observations INTEGER NOT NULL,
  first_seen_at TIMESTAMPTZ,
  last_seen_at TIMESTAMPTZ,
  scheduled_start_at TIMESTAMPTZ
);

-- Per route and finished service day: the counts rollups read. Small (routes x days), so the
-- rollups never scan trip-level rows for finished days.
CREATE TABLE reliability_days (
  service_date DATE NOT NULL,
  mode VARCHAR,
  route_id VARCHAR,
  scheduled INTEGER NOT NULL,
  delivered INTEGER NOT NULL,
  canceled INTEGER NOT NULL,
  canceled_unscheduled INTEGER NOT NULL,
  partially_canceled INTEGER NOT NULL,
  unobserved INTEGER NOT NULL,
  added INTEGER NOT NULL,
  restored INTEGER NOT NULL
);

-- One row per finalized service day, including days with no trips at all.
CREATE TABLE reliability_finalized (
  service_date DATE PRIMARY KEY,
  finalized_at TIMESTAMPTZ NOT NULL,
  trips INTEGER NOT NULL,
  routes INTEGER NOT NULL
);

-- A cache, not history: route-day counts of the service days not finalized yet (today), kept
-- current by the rollups (store/reliability/live.ts) so a request never aggregates raw
-- observations. Rewritten whole on each refresh.
CREATE TABLE reliability_live_days (
  service_date DATE NOT NULL,
  mode VARCHAR,
  route_id VARCHAR,
  scheduled INTEGER NOT NULL,
  delivered INTEGER NOT NULL,
  canceled INTEGER NOT NULL,
  canceled_unscheduled INTEGER NOT NULL,
  partially_canceled INTEGER NOT NULL,
  unobserved INTEGER NOT NULL,
  pending INTEGER NOT NULL,
  added INTEGER NOT NULL,
  restored INTEGER NOT NULL
);
