-- How far the ingest node has read each broker stream it persists (issue 17): the offset is
-- written in the same transaction as the rows it covers, so a restart neither loses nor repeats.
CREATE TABLE broker_offsets (
  stream VARCHAR PRIMARY KEY,
  -- the last broker entry id persisted (`<ms>-<seq>`)
  last_id VARCHAR NOT NULL,
  updated_at TIMESTAMPTZ NOT NULL
);
