// The real path end to end: the API server as app/serve.ts composes it (createApi, the request
// pipeline, API keys, the allowance, connection-minute metering into DuckDB, http/server.ts and
// its uWS sink) with streaming from app/fanout.ts; events published on the core EventBus.
// Clients request GET /api/v1/events/stream?api_key=… as a browser would.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InMemoryEventBus } from '../../core/events.ts';
import { Db } from '../../store/db.ts';
import { encodeEventPayload } from '../../stream/event-log.ts';
import { frame } from '../../stream/sse-frame.ts';
import { EventFanout } from '../../stream/event-fanout.ts';
import type { StoredEvent } from '../../stream/event-log.ts';
import { announce, benchEnv, epochMicros, padFor, startPublisher, WriteTrace } from './publisher.ts';
import { benchConfig, benchEvent as event, serveBenchApi } from './api-server.ts';
import { createLogger } from '../../core/logger.ts';

const { rate, eventBytes } = benchEnv();
const config = benchConfig();
const log = createLogger();

const ownDir = process.env.FANOUT_DB_PATH ? null : mkdtempSync(join(tmpdir(), 'fanout-api-'));
const db = await Db.open(process.env.FANOUT_DB_PATH ?? join(ownDir!, 'bench.duckdb'));
const bus = new InMemoryEventBus();
const { server, streaming, path } = await serveBenchApi({ db, bus, config, log });

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
  path,
);
