// End to end over a real socket with the `eventsource` client: the stream core behind a minimal
// node:http sink (the production socket layer is uWS in http/server.ts), dropped connections
// and a restart of the whole core (hub, DuckDB event log) on the same database file.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventSource } from 'eventsource';
import t from 'tap';
import { until } from '../test/support/wait.ts';
import type { DomainEvent } from '../core/events.ts';
import { Db } from '../store/db.ts';
import { DuckDbEventLog } from './duckdb-event-log.ts';
import { StreamHub } from './hub.ts';
import type { SinkWriteResult, SseSink } from './sse-sink.ts';
import type { Subscription } from './subscriber.ts';
import { rawEvent } from '../test/support/events.ts';

class NodeHttpSink implements SseSink {
  constructor(private readonly res: ServerResponse) {}
  write(chunk: Buffer): SinkWriteResult {
    if (this.res.destroyed || this.res.writableEnded) return 'closed';
    return this.res.write(chunk) ? 'ok' : 'backpressure';
  }
  bufferedBytes(): number {
    return this.res.writableLength;
  }
  close(mode: 'end' | 'abort'): void {
    if (mode === 'end') this.res.end();
    else this.res.destroy();
  }
}

interface Core {
  db: Db;
  log: DuckDbEventLog;
  hub: StreamHub;
  server: Server;
  subs: Set<Subscription>;
  headers: Array<string | undefined>;
}

async function startCore(path: string, port: number): Promise<Core> {
  const db = await Db.open(path);
  const log = await DuckDbEventLog.open(db, { capacity: 1000, flushMs: 5 });
  const hub = new StreamHub(
    { bufferBytes: 1 << 20, pingIntervalMs: 60_000, maxConnectionMs: 3_600_000, coalesceMs: 0, retryMs: 20 },
    log,
  );
  const subs = new Set<Subscription>();
  const headers: Array<string | undefined> = [];
  const server = createServer((req, res) => {
    const lastEventId = (req.headers['last-event-id'] as string | undefined) ?? null;
    const plan = hub.openEvents({ filter: {}, lastEventId });
    headers.push(plan.headers.find(([name]) => name === 'Last-Event-ID')?.[1]);
    res.writeHead(200, Object.fromEntries(plan.headers));
    const sub = plan.start(new NodeHttpSink(res));
    subs.add(sub);
    sub.onClose(() => subs.delete(sub));
    req.on('close', () => sub.close());
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { db, log, hub, server, subs, headers };
}

async function stopCore(core: Core): Promise<void> {
  core.hub.close();
  core.server.closeAllConnections();
  await new Promise((resolve) => core.server.close(resolve));
  await core.log.close();
  await core.db.close();
}

const event = (n: number): DomainEvent => rawEvent('arrival.updated', { modes: ['rail'], lines: ['RED'], data: { n } });

t.test('eventsource resumes with no gap and no duplicate after drops and across a restart', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'stream-resume-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'events.duckdb');
  let core = await startCore(path, 0);
  const port = (core.server.address() as AddressInfo).port;
  const received: Array<{ id: string; n: number }> = [];
  const source = new EventSource(`http://127.0.0.1:${port}/api/v1/events/stream`);
  t.teardown(() => source.close());
  source.addEventListener('arrival.updated', (e) => received.push({ id: e.lastEventId, n: JSON.parse(e.data).data.n }));
  await until('the first connection', () => core.subs.size === 1);

  let n = 0;
  const publish = (count: number) => {
    for (let i = 0; i < count; i++) core.hub.publish([event(n++)]);
    core.hub.flushEvents();
  };
  publish(5);
  await until('5 events', () => received.length === 5);

  // the server drops the client, events keep coming while it is away
  for (const sub of core.subs) sub.close('lifetime');
  publish(5);
  await until('the reconnection', () => core.subs.size === 1);
  publish(5);
  await until('15 events', () => received.length === 15);

  // a restart: everything in memory is gone, the DuckDB file stays
  await stopCore(core);
  core = await startCore(path, port);
  publish(5);
  await until('the reconnection after the restart', () => core.subs.size === 1);
  publish(5);
  await until('25 events', () => received.length === 25);

  t.same(
    received.map((r) => r.n),
    Array.from({ length: 25 }, (_, i) => i),
    'every event once, in order',
  );
  const ids = received.map((r) => Number(r.id));
  t.ok(
    ids.every((id, i) => i === 0 || id > ids[i - 1]!),
    'ids increase',
  );
  t.same(core.headers, [undefined], 'resume after the restart was honoured, no Last-Event-ID: earliest');

  // a client whose id is older than the retained log gets reset and the header
  const stale = await fetch(`http://127.0.0.1:${port}/api/v1/events/stream`, { headers: { 'Last-Event-ID': '5' } });
  t.equal(stale.headers.get('last-event-id'), 'earliest');
  t.equal(stale.headers.get('cache-control'), 'no-store');
  const reader = stale.body!.getReader();
  let text = '';
  while (!text.includes('event: reset')) text += new TextDecoder().decode((await reader.read()).value);
  t.match(text, /^retry: 20\n\n(id: \d+\n)?event: reset\n/);
  await reader.cancel();
  source.close();
  await stopCore(core);
});
