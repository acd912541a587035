-- Webhooks: endpoints per API key, a durable outbox of messages and deliveries, and an audit
-- row per attempt. A delivery row exists before its first attempt, so a crash loses nothing.

CREATE TABLE webhook_endpoints (
  endpoint_id VARCHAR PRIMARY KEY,
  key_id VARCHAR NOT NULL,
  url VARCHAR NOT NULL,
  description VARCHAR,
  -- NULL means "no filter on this dimension"
  filter_modes VARCHAR[],
  filter_routes VARCHAR[],
  filter_lines VARCHAR[],
  filter_event_types VARCHAR[],
  enabled BOOLEAN NOT NULL,
  -- user | gone (the target answered 410) | failing (failed continuously for 5 days) | deleted
  disabled_reason VARCHAR,
  disabled_at TIMESTAMPTZ,
  -- kept in the clear: signing needs the raw secret
  secret VARCHAR NOT NULL,
  -- the secret replaced by the last rotation, still signing until previous_secret_until
  previous_secret VARCHAR,
  previous_secret_until TIMESTAMPTZ,
  -- start of the current run of failed attempts; NULL after a success
  failing_since TIMESTAMPTZ,
  created_at TIMESTAMPTZ NOT NULL,
  updated_at TIMESTAMPTZ NOT NULL,
  deleted_at TIMESTAMPTZ
);

-- One row per event that matched at least one endpoint. message_id is the webhook-id.
CREATE TABLE webhook_messages (
  message_id VARCHAR PRIMARY KEY,
  event_type VARCHAR NOT NULL,
  occurred_at TIMESTAMPTZ NOT NULL,
  created_at TIMESTAMPTZ NOT NULL,
  -- the exact body sent: {type, timestamp, data}
  body VARCHAR NOT NULL
);

CREATE SEQUENCE webhook_delivery_seq START 1;

-- One row per (message, endpoint); a redelivery adds a row with the same message_id.
CREATE TABLE webhook_deliveries (
  delivery_id VARCHAR PRIMARY KEY,
  -- keyset order for listings: increasing with creation, never reused
  seq BIGINT NOT NULL,
  message_id VARCHAR NOT NULL,
  endpoint_id VARCHAR NOT NULL,
  key_id VARCHAR NOT NULL,
  event_type VARCHAR NOT NULL,
  -- pending | retrying | succeeded | failed
  state VARCHAR NOT NULL,
  attempt_count INTEGER NOT NULL,
  -- attempts cut short by a stop or crash; they do not use up the retry schedule
  interrupted_count INTEGER NOT NULL,
  -- true while an attempt runs, committed before the request is sent; left true by a crash,
  -- which start-up recovery turns into an audited 'interrupted' attempt
  in_flight BOOLEAN NOT NULL,
  attempt_started_at TIMESTAMPTZ,
  next_attempt_at TIMESTAMPTZ,
  last_status_code INTEGER,
  last_error VARCHAR,
  created_at TIMESTAMPTZ NOT NULL,
  updated_at TIMESTAMPTZ NOT NULL
);

-- Written when the verdict is known; an attempt cut short by a crash is written at recovery.
CREATE TABLE webhook_attempts (
  delivery_id VARCHAR NOT NULL,
  attempt INTEGER NOT NULL,
  started_at TIMESTAMPTZ NOT NULL,
  finished_at TIMESTAMPTZ,
  -- succeeded | http_error | gone | timeout | network_error | redirect | unsafe_target | interrupted
  outcome VARCHAR NOT NULL,
  status_code INTEGER,
  latency_ms DOUBLE,
  -- (delivery_id, attempt) is unique by construction; no index, since an ART index would
  -- triple the cost of the audit insert on the delivery path
  error VARCHAR
);
