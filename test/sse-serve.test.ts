// Streaming as `serve` composes it, on the demo network: simulator → pipeline polling every
// second → startService. A bus realtime stream follows the live state; the event stream carries
// the pipeline's events and resumes across a service restart on the same DuckDB file (and port)
// with exactly the events the log holds: compared with the persisted event_log table at the end.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventSource } from 'eventsource';
import t from 'tap';
import { freePort, until } from './support/wait.ts';
import { startService, type Service } from '../app/serve.ts';
import { parseConfig } from '../core/config.ts';
import { EVENT_TYPES } from '../core/events.ts';
import { DEMO_SCHEDULE_ID } from '../fixtures/demo-config.ts';
import { generateDemoNetwork } from '../fixtures/demo-network.ts';
import { startSimulator } from '../fixtures/simulator.ts';
import { createKey } from '../accounts/keys.ts';
import { Db } from '../store/db.ts';
import { bearer } from './support/harness.ts';
import { openSse } from './support/sse-client.ts';
import { logInto } from './support/logs.ts';

t.test('serve: streams on the live pipeline, resumed across a restart', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sse-serve-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const network = generateDemoNetwork(join(dir, 'network'));
  const sim = await startSimulator({ network, host: '127.0.0.1', port: 0, badBodyEvery: 0, tickMs: 1_000 });
  t.teardown(() => sim.stop());
  const feed = (id: string, kind: 'gtfs-rt', url: string) => ({
    id,
    kind,
    url,
    interval_s: 1,
    timeout_s: 0.8,
    backoff_max_s: 1,
    schedule_id: DEMO_SCHEDULE_ID,
  });
  const config = parseConfig({
    host: '127.0.0.1',
    // a fixed port: the restarted service listens where the clients reconnect
    port: await freePort(),
    db_path: join(dir, 'serve.duckdb'),
    feeds: [feed('demo-vehicles', 'gtfs-rt', sim.feeds.vehicles)],
    schedules: [{ id: DEMO_SCHEDULE_ID, source: sim.scheduleSource }],
    exports: { enabled: false, dir: join(dir, 'exports') },
    snapshot: { enabled: false, path: join(dir, 'snapshot.duckdb') },
  });
  const logs: string[] = [];
  let service: Service = await startService(config, { log: logInto((line) => logs.push(line)) });
  t.teardown(() => service.close());
  const { key } = await createKey(service.runtime.db, { plan: 'max', name: null });

  const received: Array<{ type: string; id: number }> = [];
  let opens = 0;
  let resets = 0;
  const es = new EventSource(`${service.url}/api/v1/events/stream?api_key=${key}`);
  t.teardown(() => es.close());
  es.addEventListener('open', () => opens++);
  es.addEventListener('reset', () => resets++);
  for (const type of EVENT_TYPES) es.addEventListener(type, (e) => received.push({ type, id: Number(e.lastEventId) }));

  const realtime = await openSse(`${service.url}/api/v1/bus/realtime?format=sse&limit=100`, bearer(key));
  t.teardown(() => realtime.close());
  t.equal(realtime.status, 200);
  await realtime.waitFor((events) => events.some((e) => e.event === 'update' || e.event === 'add'), 30_000);
  const reset = JSON.parse(realtime.events[0]!.data) as { data: unknown[] };
  t.equal(realtime.events[0]!.event, 'reset');
  t.ok(Array.isArray(reset.data), 'reset carries the JSON body');
  t.pass(`bus realtime stream: ${realtime.events.length} events after the reset as the pipeline polled`);

  await until('vehicle events on the event stream', () => received.some((e) => e.type === 'vehicle.position'));
  await realtime.close();
  const beforeRestart = received.length;
  await service.close();
  service = await startService(config, { log: logInto((line) => logs.push(line)) });
  await until('reconnection after the restart', () => opens >= 2);
  await until('events after the restart', () => received.length > beforeRestart + 5);
  es.close();
  await service.close();

  t.equal(resets, 0, 'the restarted service resumed the client from its persisted log');
  const ids = received.map((e) => e.id);
  t.ok(
    ids.every((id, i) => i === 0 || id > ids[i - 1]!),
    'ids increase: no event twice',
  );
  const db = await Db.open(config.db_path);
  const rows = await db.all<{ id: bigint; type: string }>(
    'SELECT id, type FROM event_log WHERE id BETWEEN $1 AND $2 ORDER BY id',
    [BigInt(ids[0]!), BigInt(ids.at(-1)!)],
  );
  await db.close();
  t.same(
    received,
    rows.map((r) => ({ type: r.type, id: Number(r.id) })),
    `the client got exactly the ${rows.length} logged events, across the restart`,
  );
});
