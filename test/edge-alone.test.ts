// Edges that stand alone (issue 28): with Redis and the ingest node both stopped, every edge keeps
// answering its live data and its own /status.json (degraded, saying why) within 1 s of each
// request; when both return, the edges follow the new live state, open streams and streams resumed
// by Last-Event-ID on another edge get every event once, and every request is metered once. A
// real redis-server and the real ingest and edge nodes on loopback (as test/multi-node.test.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { createKey } from '../accounts/keys.ts';
import { startEdge, type EdgeService } from '../app/edge.ts';
import { startService, type Service } from '../app/serve.ts';
import { parseConfig } from '../core/config.ts';
import { newPoll, type FeedPoll, type VehiclePosition } from '../core/types.ts';
import type { NormalizedPoll } from '../pipeline/normalize-feed.ts';
import type { StatusDocument } from '../status/schema.ts';
import { brokerMissing, startBroker } from './support/broker-servers.ts';
import { captureLogs } from './support/logs.ts';
import { openSse, type SseConnection } from './support/sse-client.ts';
import { freePort, until } from './support/wait.ts';

const missing = brokerMissing('redis');
/** what "keeps answering" means here: every answer within this */
const ANSWER_MS = 1_000;

function poll(at: number): FeedPoll {
  return {
    ...newPoll('vp', at),
    http_status: 200,
    bytes: 1,
    duration_ms: 1,
    header_timestamp_ms: at,
    entities: 1,
    vehicles: 1,
  };
}

function vehicle(id: string, lat: number, at: number): VehiclePosition {
  return {
    feed_id: 'vp',
    vehicle_id: id,
    route_id: '66',
    trip_id: null,
    mode: 'bus',
    lat,
    lon: -71.1,
    position_source: 'gps',
    bearing: null,
    speed_mps: null,
    stop_id: null,
    current_status: null,
    timestamp_ms: at,
    observed_ms: at,
  };
}

function rows(at: number, vehicles: VehiclePosition[]): NormalizedPoll {
  return {
    header_timestamp_ms: at,
    entities: vehicles.length,
    vehicle_entities: vehicles.length,
    trip_update_entities: 0,
    alert_entities: 0,
    vehicles,
    arrivals: [],
    trips: [],
    alerts: [],
    rejected: {},
    matching: null,
  };
}

const positions = (s: SseConnection) =>
  s.events.filter((e) => e.event === 'vehicle.position').map((e) => (JSON.parse(e.data) as { data: unknown }).data);
const idsOf = (s: SseConnection) => s.events.filter((e) => e.event === 'vehicle.position').map((e) => e.id);

t.test('edges stand alone while Redis and the ingest node are down, and recover', { skip: missing }, async (t) => {
  const redis = await startBroker('redis');
  const dir = mkdtempSync(join(tmpdir(), 'transit-alone-'));
  const logs = captureLogs('error');
  const ingestPort = await freePort();
  const base = {
    host: '127.0.0.1',
    signing_secret: 'test-secret-0123456789abcdef',
    broker: { url: redis.url, prefix: 'alone:', forward_timeout_ms: 2_000 },
    api: { meter_flush_ms: 100 },
  };
  const ingestConfig = parseConfig({
    ...base,
    role: 'ingest',
    port: ingestPort,
    db_path: join(dir, 'ingest.duckdb'),
    // polled by the test (applyPoll), never fetched
    feeds: [{ id: 'vp', kind: 'gtfs-rt', url: 'http://127.0.0.1:9/vp', mode: 'bus', interval_s: 15 }],
  });
  let ingest: Service | null = await startService(ingestConfig, { log: logs.logger, poll: false });
  const edges: EdgeService[] = [];
  const streams: SseConnection[] = [];
  t.teardown(async () => {
    for (const s of streams) await s.close().catch(() => undefined);
    for (const e of edges) await e.close().catch(() => undefined);
    await ingest?.close().catch(() => undefined);
    await redis.close();
    rmSync(dir, { recursive: true, force: true });
  });
  for (let i = 0; i < 2; i++) {
    const config = parseConfig({
      ...base,
      role: 'edge',
      port: 0,
      ingest: { url: `http://127.0.0.1:${ingestPort}` },
    });
    edges.push(await startEdge(config, { log: logs.logger }));
  }
  const key = await createKey(ingest.runtime.db, { plan: 'max', name: 'alone' });
  const auth = { authorization: `Bearer ${key.key}` };
  // every answer with the key but a 401 (before the key reached an edge) is one metered request
  // (streams are metered in connection-minutes)
  let metered = 0;
  const asked = async (url: string, timeoutMs = 10_000) => {
    const started = performance.now();
    const res = await fetch(url, { headers: auth, signal: AbortSignal.timeout(timeoutMs) });
    const body = await res.text();
    if (res.status !== 401) metered++;
    return { status: res.status, body, ms: performance.now() - started };
  };
  const statusOf = async (url: string, timeoutMs = 10_000) => {
    const started = performance.now();
    const res = await fetch(`${url}/status.json`, { signal: AbortSignal.timeout(timeoutMs) });
    return { status: res.status, doc: (await res.json()) as StatusDocument, ms: performance.now() - started };
  };
  for (const edge of edges) {
    await until('the key on the edge', async () => (await asked(`${edge.url}/api/v1/alerts`)).status === 200);
  }

  const state = () => ingest!.runtime.pipeline.state;
  const first = Date.now();
  state().applyPoll(poll(first), rows(first, [vehicle('v1', 42.31, first)]));
  for (const edge of edges) {
    await until('the vehicle on the edge', async () =>
      (await asked(`${edge.url}/api/v1/bus/realtime`)).body.includes('"v1"'),
    );
  }

  await t.test('all up: each edge is operational; the ingest node lists both edges', async (t) => {
    for (const edge of edges) {
      const { doc } = await until('the edge operational', async () => {
        const s = await statusOf(edge.url);
        return s.doc.node?.state === 'operational' ? s : null;
      });
      t.equal(doc.node!.role, 'edge');
      t.equal(doc.node!.ingest!.source, 'config', 'ingest.url');
      t.equal(doc.node!.ingest!.reachable, true);
      t.ok(doc.node!.live_state!.age_s! < 5, `live state ${doc.node!.live_state!.age_s} s old`);
      t.same(
        doc.feeds.map((f) => f.feed_id),
        ['vp'],
        "the feeds as the edge's live copy has them",
      );
    }
    const listed = await until('both edges on the ingest node', async () => {
      const { doc } = await statusOf(ingest!.url);
      return doc.edges.length === 2 && doc.edges.every((e) => e.state === 'operational') ? doc : null;
    });
    t.equal(listed.node!.role, 'ingest');
    t.same(listed.edges.map((e) => e.url).sort(), edges.map((e) => e.url).sort());
  });

  const open: SseConnection[] = [];
  for (const edge of edges) {
    const s = await openSse(`${edge.url}/api/v1/events/stream`, auth);
    streams.push(s);
    open.push(s);
    t.equal(s.status, 200);
  }
  const second = Date.now();
  state().applyPoll(poll(second), rows(second, [vehicle('v1', 42.32, second)]));
  for (const s of open) await s.waitFor(() => positions(s).length >= 1, 20_000);
  const heldId = idsOf(open[0]!).at(-1)!;

  await t.test('Redis and the ingest node stopped: every edge answers within 1 s, degraded, saying why', async (t) => {
    await redis.stop();
    // a poll while the broker is away: its event waits in the ingest node, then in its spill file
    const during = Date.now();
    state().applyPoll(poll(during), rows(during, [vehicle('v1', 42.325, during)]));
    await ingest!.close();
    ingest = null;
    const slowest = { live: 0, status: 0, forwarded: 0 };
    for (const edge of edges) {
      const degraded = await until(
        'the edge says why',
        async () => {
          const s = await statusOf(edge.url, ANSWER_MS);
          t.equal(s.status, 200);
          slowest.status = Math.max(slowest.status, s.ms);
          const reason = s.doc.node?.reason ?? '';
          return /broker is unreachable/.test(reason) && /ingest node .* is not answering/.test(reason) ? s.doc : null;
        },
        { timeoutMs: 20_000, intervalMs: 200 },
      );
      t.equal(degraded.node!.state, 'degraded');
      t.equal(degraded.state, 'degraded', "the edge's own page, never ingest_unavailable");
      t.equal(degraded.node!.broker.state, 'down');
      t.equal(degraded.node!.ingest!.reachable, false);
      t.match(degraded.node!.ingest!.error, /ECONNREFUSED/);
      t.match(degraded.api.reason, /broker is unreachable/);
    }
    // a few seconds of requests on every edge: live data, its own status page, a forwarded path
    for (let round = 0; round < 6; round++) {
      for (const edge of edges) {
        const live = await asked(`${edge.url}/api/v1/bus/realtime`, ANSWER_MS);
        t.equal(live.status, 200);
        t.match(live.body, /"v1"/, 'the last live state');
        slowest.live = Math.max(slowest.live, live.ms);
        const s = await statusOf(edge.url, ANSWER_MS);
        t.equal(s.doc.node?.state, 'degraded');
        slowest.status = Math.max(slowest.status, s.ms);
        const page = await fetch(`${edge.url}/status`, { signal: AbortSignal.timeout(ANSWER_MS) });
        t.equal(page.status, 200);
        t.match(await page.text(), /data-component="node" data-state="degraded"/, 'the page shows this node');
        const started = performance.now();
        const forwarded = await fetch(`${edge.url}/api/v1/account`, {
          headers: auth,
          signal: AbortSignal.timeout(ANSWER_MS),
        });
        slowest.forwarded = Math.max(slowest.forwarded, performance.now() - started);
        t.equal(forwarded.status, 503, 'history and account paths: ingest_unavailable at once');
        await forwarded.arrayBuffer();
      }
      await new Promise((r) => setTimeout(r, 300));
    }
    const age = (await statusOf(edges[0]!.url, ANSWER_MS)).doc.node!.live_state!.age_s!;
    t.ok(age >= 2, `the live state's age grows while alone (${age} s)`);
    t.comment(
      `slowest answers while alone: live ${slowest.live.toFixed(1)} ms, status ${slowest.status.toFixed(1)} ms, ` +
        `forwarded 503 ${slowest.forwarded.toFixed(1)} ms`,
    );
    for (const s of open)
      t.notOk(await Promise.race([s.ended.then(() => true), Promise.resolve(false)]), 'streams stay open');
  });

  await t.test('both back: the new live state, every event once, every request metered once', async (t) => {
    await redis.restart();
    ingest = await startService(ingestConfig, { log: logs.logger, poll: false });
    const third = Date.now();
    state().applyPoll(poll(third), rows(third, [vehicle('v1', 42.33, third), vehicle('v2', 42.4, third)]));
    for (const edge of edges) {
      await until('the new state on the edge', async () =>
        (await asked(`${edge.url}/api/v1/bus/realtime`)).body.includes('"v2"'),
      );
      const { doc } = await until('the edge operational again', async () => {
        const s = await statusOf(edge.url);
        return s.doc.node?.state === 'operational' ? s : null;
      });
      t.equal(doc.node!.broker.state, 'up');
      t.ok(doc.node!.live_state!.snapshots >= 2, 'the state read whole again after the outage');
    }
    // the open streams follow on: what came after the outage, nothing twice
    for (const s of open) {
      await s.waitFor(() => positions(s).length >= 4, 20_000);
      const ids = idsOf(s);
      t.equal(new Set(ids).size, ids.length, 'no event twice');
      t.same(
        positions(s).map((p) => [JSON.stringify(p).match(/"v\d"/)?.[0], JSON.stringify(p).match(/42\.\d+/)?.[0]]),
        [
          ['"v1"', '42.32'],
          ['"v1"', '42.325'],
          ['"v1"', '42.33'],
          ['"v2"', '42.4'],
        ],
        'the move before the outage, the one during it (kept by the ingest node), the two after',
      );
    }
    t.same(idsOf(open[1]!), idsOf(open[0]!), 'the same ids on both edges');
    // a client of the first edge resumes on the second with the id it held before the outage
    const resumed = await openSse(`${edges[1]!.url}/api/v1/events/stream`, { ...auth, 'last-event-id': heldId });
    streams.push(resumed);
    await resumed.waitFor(() => positions(resumed).length >= 3, 20_000);
    t.same(idsOf(resumed), idsOf(open[0]!).slice(1), 'after the held id: no gap, no duplicate');

    const listed = await until('both edges listed again', async () => {
      const { doc } = await statusOf(ingest!.url);
      return doc.edges.length === 2 && doc.edges.every((e) => e.state === 'operational') ? doc : null;
    });
    t.equal(listed.edges.length, 2);

    const db = ingest!.runtime.db;
    const calls = async () =>
      Number(
        (
          await db.all<{ n: bigint | null }>(
            "SELECT sum(calls) AS n FROM api_usage WHERE key_id = $1 AND unit = 'request'",
            [key.id],
          )
        )[0]!.n ?? 0,
      );
    await until('the usage of the outage on the ingest node', async () => (await calls()) >= metered);
    await new Promise((r) => setTimeout(r, 500));
    t.equal(await calls(), metered, `every request metered once (${metered}), the outage's included`);
  });
});
