// The real path end to end: the API server as app/serve.ts composes it (createApi, the request
// pipeline, API keys, the allowance, connection-minute metering into DuckDB, http/server.ts and
// its uWS sink) with streaming from app/fanout.ts; events published on the core EventBus.
// Clients request GET /api/v1/events/stream?api_key=… as a browser would.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStreaming } from '../../app/fanout.ts';
import { parseConfig } from '../../core/config.ts';
import { InMemoryEventBus, type DomainEvent } from '../../core/events.ts';
import type { LiveView } from '../../core/ports.ts';
import { createApi } from '../../app/api.ts';
import { createKey } from '../../accounts/keys.ts';
import { startServer } from '../../http/server.ts';
import { Db } from '../../store/db.ts';
import { encodeEventPayload } from '../../stream/event-log.ts';
import { frame } from '../../stream/sse-frame.ts';
import { EventFanout } from '../../stream/event-fanout.ts';
import type { StoredEvent } from '../../stream/event-log.ts';
import { announce, benchEnv, epochMicros, padFor, startPublisher, WriteTrace } from './publisher.ts';
import { BenchAllowance, BenchLimiter } from './unlimited.ts';
import { createLogger } from '../../core/logger.ts';

/** One key opens every connection: the bench measures the fan-out, not the plans' allowance. */
const { rate, eventBytes } = benchEnv();
const coalesce = process.env.FANOUT_COALESCE_MS;
const config = parseConfig({
  signing_secret: 'fanout-bench-secret-0123456789',
  ...(coalesce === undefined ? {} : { sse: { coalesce_ms: Number(coalesce) } }),
});
const log = createLogger();

const ownDir = process.env.FANOUT_DB_PATH ? null : mkdtempSync(join(tmpdir(), 'fanout-api-'));
const db = await Db.open(process.env.FANOUT_DB_PATH ?? join(ownDir!, 'bench.duckdb'));
const bus = new InMemoryEventBus();
const live: LiveView = { vehicles: () => [], arrivals: () => [], alerts: () => [], feeds: () => [], version: 0 };
const streaming = await openStreaming({ db, bus, live, config, log, allowance: new BenchAllowance() });
const api = await createApi({
  db,
  live,
  config,
  log,
  limiter: new BenchLimiter(),
  streams: streaming.provider,
  routes: streaming.routes,
});
streaming.useMeter(api.meter);
const { key } = await createKey(db, { plan: 'max', name: 'fan-out bench' });
const server = await startServer({
  handler: api.handler,
  host: '127.0.0.1',
  port: 0,
  streamBufferBytes: config.sse.buffer_bytes,
  log,
});

// synthetic data the bench client reads ("ts"); the hub and log never look inside `data`
const event = (seq: number, ts: number, pad: string): DomainEvent =>
  ({
    id: `evt_${seq}`,
    type: 'vehicle.position',
    at_ms: Math.floor(ts / 1000),
    modes: ['bus'],
    routes: ['7'],
    lines: [],
    data: { seq, ts, pad },
  }) as unknown as DomainEvent;
// same frame size as the baselines: pad what the envelope does not already take
const pad = padFor(eventBytes, (p) =>
  frame({
    id: 1_700_000_000_000_000,
    event: 'vehicle.position',
    data: encodeEventPayload(event(0, Date.now() * 1000, p)),
  }),
);

// the server's side of the latency: a flush writes its events to every socket before it returns
const trace = new WriteTrace();
const fanout = EventFanout.prototype as unknown as { flush(): void };
const flush = fanout.flush;
fanout.flush = function flushTraced(this: { pending: StoredEvent[] }) {
  const due = this.pending.map((e) => Number(/"ts":(\d+)/.exec(e.payload)?.[1] ?? 0));
  flush.call(this);
  const written = epochMicros();
  for (const d of due) if (d > 0) trace.record(d, written);
};

const stop = startPublisher(rate, (batch) => {
  for (const { seq, ts } of batch) bus.publish(event(seq, ts, pad));
});
announce(
  server.port,
  () => {
    stop();
    trace.save();
    streaming.endStreams();
    if (ownDir) rmSync(ownDir, { recursive: true, force: true });
  },
  `/api/v1/events/stream?api_key=${key}`,
);
