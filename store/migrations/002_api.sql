-- API keys: only the SHA-256 of a key is stored; the key itself is shown once at creation.
CREATE TABLE api_keys (
  id VARCHAR PRIMARY KEY,
  -- hex SHA-256 of the full key
  key_hash VARCHAR NOT NULL UNIQUE,
  -- first characters of the key, enough for an operator to recognise it (tk_live_AbCd)
  prefix VARCHAR NOT NULL,
  -- free | regular | max
  plan VARCHAR NOT NULL,
  test BOOLEAN NOT NULL,
  name VARCHAR,
  created_at TIMESTAMPTZ NOT NULL,
  revoked_at TIMESTAMPTZ
);

-- Metered calls of live keys (and unauthenticated calls, key_id NULL), summed per second: one
-- row per key, unit, method, endpoint, status and second in which calls happened. Every call
-- is counted; rows stay few at tens of thousands of requests per second.
CREATE TABLE api_usage (
  key_id VARCHAR,
  plan VARCHAR,
  -- request | connection-minute
  unit VARCHAR NOT NULL,
  method VARCHAR NOT NULL,
  -- the route template (/api/v1/bus/{route_id}/realtime), or (unmatched)
  endpoint VARCHAR NOT NULL,
  status SMALLINT NOT NULL,
  -- start of the one-second bucket; a bucket split across two flushes gives two rows to sum
  bucket_at TIMESTAMPTZ NOT NULL,
  calls INTEGER NOT NULL,
  -- what the calls cost in `unit`: requests, or connection-minutes of event streams
  quantity INTEGER NOT NULL,
  latency_ms_total DOUBLE NOT NULL,
  latency_ms_max DOUBLE NOT NULL
);

-- Test keys' usage, kept apart so it can never be billed or mixed into live figures by accident.
CREATE TABLE api_usage_test (
  key_id VARCHAR,
  plan VARCHAR,
  unit VARCHAR NOT NULL,
  method VARCHAR NOT NULL,
  endpoint VARCHAR NOT NULL,
  status SMALLINT NOT NULL,
  bucket_at TIMESTAMPTZ NOT NULL,
  calls INTEGER NOT NULL,
  quantity INTEGER NOT NULL,
  latency_ms_total DOUBLE NOT NULL,
  latency_ms_max DOUBLE NOT NULL
);
