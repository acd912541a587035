-- Schedule versions: every successful import of a schedule source, the source's last check, and
-- which version each expanded service day was computed with. Written by store/schedule-versions.ts.

CREATE SEQUENCE schedule_version_ids START 1;

-- One row per successful import; the newest row of a schedule_id is the version in the gtfs_* tables.
CREATE TABLE schedule_versions (
  version_id INTEGER NOT NULL DEFAULT nextval('schedule_version_ids'),
  schedule_id VARCHAR NOT NULL,
  source VARCHAR NOT NULL,
  -- SHA-256 of the fetched file (zip), or of a folder's files; NULL for imports made before versions
  sha256 VARCHAR,
  imported_at TIMESTAMPTZ NOT NULL,
  feed_version VARCHAR,
  -- feed_info.txt's validity, when given
  feed_start_date DATE,
  feed_end_date DATE,
  -- first and last date any service runs (calendar ranges and calendar_dates additions)
  service_start_date DATE,
  service_end_date DATE,
  routes INTEGER NOT NULL,
  trips INTEGER NOT NULL,
  stops INTEGER NOT NULL,
  stop_times INTEGER NOT NULL,
  import_ms INTEGER
);

-- The last check of each schedule's source: conditional GET validators, outcome, last failure.
CREATE TABLE schedule_sources (
  schedule_id VARCHAR NOT NULL,
  source VARCHAR NOT NULL,
  etag VARCHAR,
  last_modified VARCHAR,
  sha256 VARCHAR,
  checked_at TIMESTAMPTZ NOT NULL,
  -- imported | unchanged | not_modified | failed
  outcome VARCHAR NOT NULL,
  last_error VARCHAR,
  last_error_at TIMESTAMPTZ,
  consecutive_failures INTEGER NOT NULL
);

-- One row per schedule and service date expanded into scheduled_trips, with the version used.
-- Days before today keep their version when a new one is imported; today and later are re-expanded.
CREATE TABLE schedule_days (
  schedule_id VARCHAR NOT NULL,
  service_date DATE NOT NULL,
  version_id INTEGER,
  trips INTEGER NOT NULL,
  expanded_at TIMESTAMPTZ NOT NULL
);

-- Schedules imported before this migration become version rows with no hash (the next refresh
-- imports them again once), and their expanded days are recorded with that version.
INSERT INTO schedule_versions (schedule_id, source, sha256, imported_at, feed_version, service_start_date,
  service_end_date, routes, trips, stops, stop_times)
SELECT s.schedule_id, s.source, NULL, s.imported_at, s.feed_version,
  (SELECT least(min(c.start_date), (SELECT min(d.date) FROM gtfs_calendar_dates d WHERE d.schedule_id = s.schedule_id AND d.exception_type = 1))
   FROM gtfs_calendar c WHERE c.schedule_id = s.schedule_id),
  (SELECT greatest(max(c.end_date), (SELECT max(d.date) FROM gtfs_calendar_dates d WHERE d.schedule_id = s.schedule_id AND d.exception_type = 1))
   FROM gtfs_calendar c WHERE c.schedule_id = s.schedule_id),
  (SELECT count(*) FROM gtfs_routes x WHERE x.schedule_id = s.schedule_id),
  (SELECT count(*) FROM gtfs_trips x WHERE x.schedule_id = s.schedule_id),
  (SELECT count(*) FROM gtfs_stops x WHERE x.schedule_id = s.schedule_id),
  (SELECT count(*) FROM gtfs_stop_times x WHERE x.schedule_id = s.schedule_id)
FROM schedules s
ORDER BY s.imported_at, s.schedule_id;

INSERT INTO schedule_days (schedule_id, service_date, version_id, trips, expanded_at)
SELECT t.schedule_id, t.service_date, max(v.version_id), count(*), now()
FROM scheduled_trips t LEFT JOIN schedule_versions v USING (schedule_id)
GROUP BY t.schedule_id, t.service_date;
