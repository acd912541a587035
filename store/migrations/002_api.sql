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

-- Metered calls of live keys (and unauthenticated calls, key_id NULL). One row per request, or
-- per batch of connection-minutes of an event stream.
CREATE TABLE api_usage (
  key_id VARCHAR,
  plan VARCHAR,
  -- request | connection-minute
  unit VARCHAR NOT NULL,
  quantity INTEGER NOT NULL,
  method VARCHAR NOT NULL,
  -- the route template (/api/v1/bus/{route_id}/realtime), or (unmatched)
  endpoint VARCHAR NOT NULL,
  status SMALLINT NOT NULL,
  latency_ms DOUBLE NOT NULL,
  called_at TIMESTAMPTZ NOT NULL,
  request_id VARCHAR NOT NULL
);

-- Test keys' usage, kept apart so it can never be billed or mixed into live figures by accident.
CREATE TABLE api_usage_test (
  key_id VARCHAR,
  plan VARCHAR,
  unit VARCHAR NOT NULL,
  quantity INTEGER NOT NULL,
  method VARCHAR NOT NULL,
  endpoint VARCHAR NOT NULL,
  status SMALLINT NOT NULL,
  latency_ms DOUBLE NOT NULL,
  called_at TIMESTAMPTZ NOT NULL,
  request_id VARCHAR NOT NULL
);
