-- History exports: one manifest row per file (dataset, part, service date, format).
-- Lifecycle: pending (queued) → running → ready | failed. Only `ready` rows name a complete file:
-- files are written to a temporary name and renamed before the row turns ready, and start-up
-- recovery puts rows a crash left `running` back to `pending`. Definitions: exports/README.md.
CREATE TABLE export_manifests (
  -- the file's name, e.g. realtime-2024-05-01-arrivals.parquet; stable across re-exports
  manifest_id VARCHAR PRIMARY KEY,
  -- reliability | realtime | alerts
  dataset VARCHAR NOT NULL,
  -- the table the file holds: trip_outcomes | arrivals | vehicle_positions | alert_versions
  part VARCHAR NOT NULL,
  service_date DATE NOT NULL,
  -- parquet | ndjson.gz
  format VARCHAR NOT NULL,
  -- pending | running | ready | failed
  state VARCHAR NOT NULL,
  -- relative to the configured exports.dir
  file_path VARCHAR NOT NULL,
  "rows" BIGINT,
  bytes BIGINT,
  -- hex SHA-256 of the file as stored
  sha256 VARCHAR,
  -- column names and DuckDB types of the dataset (the same for every format)
  "schema" STRUCT(name VARCHAR, type VARCHAR)[],
  error VARCHAR,
  attempts INTEGER NOT NULL,
  queued_at TIMESTAMPTZ NOT NULL,
  started_at TIMESTAMPTZ,
  -- when the file was completed (state ready)
  created_at TIMESTAMPTZ,
  updated_at TIMESTAMPTZ NOT NULL,
  UNIQUE (dataset, part, service_date, format)
);
