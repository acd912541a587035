-- Snapshots whose rows are in history, so a snapshot polled again after a restart, by another
-- `ingest --once` run or by a replay is not stored twice. The hash covers the whole body, the
-- header timestamp included: same feed, same header and same body is the same snapshot.
CREATE TABLE feed_snapshots (
  feed_id VARCHAR NOT NULL,
  body_sha256 VARCHAR NOT NULL,
  header_timestamp TIMESTAMPTZ,
  -- the stored rows' observed_at: the poll's time, or the header's for a replayed snapshot
  observed_at TIMESTAMPTZ NOT NULL,
  -- poll | replay
  source VARCHAR NOT NULL,
  stored_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY (feed_id, body_sha256)
);

