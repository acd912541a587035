// The streaming core alone: domain events published on the core EventBus, ids from the
// DuckDB-backed event log, fan-out by the stream hub, written through http/sse-socket-sink.ts's
// SseSocketSink on a bare uWS route (no request chain, keys, allowance or metering; the `api`
// server of the bench has them).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '../../core/config.ts';
import { InMemoryEventBus, type DomainEvent } from '../../core/events.ts';
import { Db } from '../../store/db.ts';
import { DuckDbEventLog } from '../../stream/duckdb-event-log.ts';
import { encodeEventPayload } from '../../stream/event-log.ts';
import { hubOptionsFromConfig, StreamHub } from '../../stream/hub.ts';
import { frame } from '../../stream/sse-frame.ts';
import type { Subscription } from '../../stream/subscriber.ts';
import { announce, benchEnv, padFor, startPublisher } from './publisher.ts';
import uWS, { listenLoopback } from './uws.ts';
import { SseSocketSink } from '../../http/sse-socket-sink.ts';

const { rate, eventBytes } = benchEnv();
const coalesce = process.env.FANOUT_COALESCE_MS;
const config = parseConfig(coalesce === undefined ? {} : { sse: { coalesce_ms: Number(coalesce) } });

// the runner passes a path inside its own temp folder, removed even when this process is killed
const ownDir = process.env.FANOUT_DB_PATH ? null : mkdtempSync(join(tmpdir(), 'fanout-hub-'));
const db = await Db.open(process.env.FANOUT_DB_PATH ?? join(ownDir!, 'bench.duckdb'));
const log = await DuckDbEventLog.open(db, { capacity: config.sse.event_log_size });
const hub = new StreamHub(hubOptionsFromConfig(config.sse), log).start();
const bus = new InMemoryEventBus();
hub.attachBus(bus);

const MODES = ['bus'] as const;
const ROUTES = ['7'];
// synthetic data the bench client reads ("ts"); the hub and log never look inside `data`
const event = (seq: number, ts: number, pad: string): DomainEvent =>
  ({
    id: `evt_${seq}`,
    type: 'vehicle.position',
    at_ms: Math.floor(ts / 1000),
    modes: [...MODES],
    routes: ROUTES,
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

const app = uWS.App().get('/api/v1/events/stream', (res, req) => {
  const lastEventId = req.getHeader('last-event-id') || null;
  const sink = new SseSocketSink(res, Number.POSITIVE_INFINITY, () => undefined);
  let subscription: Subscription | null = null;
  res.onAborted(() => {
    sink.aborted();
    subscription?.close();
  });
  const plan = hub.openEvents({ filter: {}, lastEventId });
  res.writeStatus('200 OK');
  for (const [name, value] of plan.headers) res.writeHeader(name, value);
  subscription = plan.start(sink);
});

const port = await listenLoopback(app);
const stop = startPublisher(rate, (batch) => {
  for (const { seq, ts } of batch) bus.publish(event(seq, ts, pad));
});
announce(port, () => {
  stop();
  hub.close();
  if (ownDir) rmSync(ownDir, { recursive: true, force: true });
});
