-- The retained tail of the domain event stream (GET /api/v1/events/stream), so that clients can
-- resume by Last-Event-ID across a restart. Only the newest sse.event_log_size events are needed;
-- older rows are pruned as the stream advances. No index: rows arrive through the appender in id
-- order and are read back only as one "newest N" scan at start.
CREATE TABLE event_log (
  id BIGINT NOT NULL,
  -- dotted event type (alert.created, vehicle.position, ...)
  type VARCHAR NOT NULL,
  observed_at TIMESTAMPTZ NOT NULL,
  -- the event exactly as sent in the SSE data field (JSON text)
  payload VARCHAR NOT NULL
);
