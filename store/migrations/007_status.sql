-- The status page's incident history: one row per change of a component's state. Components are
-- `feed:<feed_id>`, `alerts` (alert ingestion) and `api` (the public API). Written rarely (only on
-- changes), read once at start for the last days and the last known state of each component.
CREATE TABLE status_changes (
  component VARCHAR NOT NULL,
  -- operational | degraded | down
  state VARCHAR NOT NULL,
  -- NULL for a component's first recorded state
  previous_state VARCHAR,
  -- why, in words: the failed poll's error, "no successful poll for 12 s", "5xx share 7 %"
  reason VARCHAR NOT NULL,
  changed_at TIMESTAMPTZ NOT NULL
);
