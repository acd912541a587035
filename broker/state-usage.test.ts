import t from 'tap';
import { until } from '../test/support/wait.ts';
import type { UsageRecord } from '../accounts/meter.ts';
import { Db } from '../store/db.ts';
import { brokerMissing, startBroker } from '../test/support/broker-servers.ts';
import { FakeLive, makeAlert, makeFeed, makeVehicle } from '../test/support/fake-live.ts';
import { captureLogs } from '../test/support/logs.ts';
import { BrokerLiveView, LiveStatePublisher } from './live-state.ts';
import { BrokerMeter, BrokerUsageIngest } from './meter.ts';
import { Broker } from './redis.ts';

const missing = brokerMissing('redis');
const logs = captureLogs('warn');

function usage(over: Partial<UsageRecord> = {}): UsageRecord {
  return {
    keyId: 'key_1',
    plan: 'regular',
    test: false,
    unit: 'request',
    quantity: 1,
    method: 'GET',
    endpoint: '/api/v1/alerts',
    status: 200,
    latencyMs: 2,
    atMs: 1_714_580_000_000,
    requestId: 'req_1',
    ...over,
  };
}

t.test(
  "usage from two nodes reaches the ingest node's DuckDB once, across an ingest restart",
  { skip: missing },
  async (t) => {
    const server = await startBroker('redis');
    const brokers = await Promise.all(
      [0, 1, 2].map(() => new Broker({ url: server.url, prefix: 'u:', log: logs.logger }).ready()),
    );
    const [ingest, a, b] = brokers as [Broker, Broker, Broker];
    const db = await Db.open(':memory:');
    await db.migrate();
    t.teardown(async () => {
      for (const x of brokers) await x.close();
      await db.close();
      await server.close();
    });
    const ma = new BrokerMeter(a, { flushMs: 60_000 });
    const mb = new BrokerMeter(b, { flushMs: 60_000 });
    for (let i = 0; i < 300; i++) ma.record(usage({ atMs: 1_714_580_000_000 + i * 10 }));
    for (let i = 0; i < 200; i++) mb.record(usage({ atMs: 1_714_580_000_000 + i * 10, test: i % 2 === 0 }));
    await ma.flush();
    await mb.flush();
    const total = async () => {
      const [live] = await db.all<{ n: bigint | null }>('SELECT sum(calls) AS n FROM api_usage');
      const [test] = await db.all<{ n: bigint | null }>('SELECT sum(calls) AS n FROM api_usage_test');
      return [Number(live!.n ?? 0), Number(test!.n ?? 0)];
    };
    let reader = await new BrokerUsageIngest(ingest, db, { blockMs: 100 }).start();
    await until('the first rows', async () => (await total())[0] === 400);
    t.same(await total(), [400, 100], 'every call once, live and test apart');
    await reader.close();

    // more usage while the ingest node is away; it resumes from its persisted offset
    for (let i = 0; i < 50; i++) ma.record(usage({ atMs: 1_714_580_100_000 + i }));
    await ma.flush();
    reader = await new BrokerUsageIngest(ingest, db, { blockMs: 100 }).start();
    await until('the rows sent while it was away', async () => (await total())[0] === 450);
    await new Promise((r) => setTimeout(r, 300));
    t.same(await total(), [450, 100], 'nothing counted twice after the restart');
    t.equal(
      await ingest.redis.xlen('u:usage'),
      1,
      'persisted entries are trimmed from the broker (the newest stays as the mark)',
    );

    // a batch sent again (its reply lost with the connection, then resent) is appended once
    const resend = b.redis as unknown as {
      transitUsageOnce(stream: string, marker: string, rows: string, ttlMs: number): Promise<string | null>;
    };
    const rows = JSON.stringify([
      ['key_1', 'regular', 0, 'request', 'GET', '/api/v1/alerts', 200, 1_714_580_300, 5, 5, 10, 2],
    ]);
    t.ok(await resend.transitUsageOnce('u:usage', 'u:usage:sent:node:1', rows, 60_000), 'the first send is appended');
    t.equal(
      await resend.transitUsageOnce('u:usage', 'u:usage:sent:node:1', rows, 60_000),
      null,
      'the same batch again is not',
    );
    mb.record(usage({ atMs: 1_714_580_200_000 }));
    await mb.flush();
    await until('the last ones', async () => (await total())[0] === 456);
    await new Promise((r) => setTimeout(r, 300));
    t.same(await total(), [456, 100], 'the resent batch counted once');
    await reader.close();
    await ma.close();
    await mb.close();
    t.equal(ma.dropped + mb.dropped, 0);
  },
);

t.test(
  "an edge's live state follows the ingest node's and survives the broker going away",
  { skip: missing },
  async (t) => {
    const server = await startBroker('redis');
    const ingest = await new Broker({ url: server.url, prefix: 's:', log: logs.logger }).ready();
    const edge = await new Broker({ url: server.url, prefix: 's:', log: logs.logger }).ready();
    t.teardown(async () => {
      await ingest.close();
      await edge.close();
      await server.close();
    });
    const live = new FakeLive();
    live.change((l) => {
      l.vehicleList = [makeVehicle({ vehicle_id: 'v1', mode: 'bus' }), makeVehicle({ vehicle_id: 'r1', mode: 'rail' })];
      l.alertList = [makeAlert({ id: 'a1' })];
      l.feedList = [makeFeed({ feed_id: 'f1' })];
    });
    const publisher = new LiveStatePublisher(ingest, live, { intervalMs: 50 }).start();
    await publisher.publish();
    const view = await BrokerLiveView.open(edge);
    t.teardown(() => view.close());
    t.same(
      view.vehicles('bus').map((v) => v.vehicle_id),
      ['v1'],
      'an edge that starts reads the current state',
    );
    t.same(
      view.vehicles('rail').map((v) => v.vehicle_id),
      ['r1'],
    );
    t.same(
      view.alerts().map((a) => a.id),
      ['a1'],
    );
    t.same(view.feeds(), live.feeds(), 'feed health as the ingest node has it');
    const v1 = view.version;

    live.change((l) => {
      l.alertList = [makeAlert({ id: 'a1' }), makeAlert({ id: 'a2' })];
    });
    await until('the change', () => view.alerts().length === 2);
    t.ok(view.version > v1, 'the version moves, so response caches and query streams follow');

    // the ingest node stops updating: this node judges the feeds' age from their header times
    const header = Date.now();
    live.change((l) => {
      l.feedList = [
        makeFeed({ feed_id: 'f1', freshness: 'fresh', header_timestamp_ms: header, last_success_ms: header }),
      ];
    });
    await until('the new feed health', () => view.feeds()[0]?.header_timestamp_ms === header);
    const aging = await BrokerLiveView.open(edge, {
      freshness: { stale_after_s: 90, expired_after_s: 300, max_future_s: 300, max_age_days: 365 },
      ageEveryMs: 3_600_000,
    });
    t.teardown(() => aging.close());
    t.equal(aging.feeds()[0]!.freshness, 'fresh');
    const before = aging.version;
    aging.age(header + 120_000);
    t.equal(aging.feeds()[0]!.freshness, 'stale', 'two minutes without an update: stale on the edge');
    t.ok(aging.version > before, 'a verdict that changes moves the version');
    aging.age(header + 400_000);
    t.equal(aging.feeds()[0]!.freshness, 'expired');

    await server.stop();
    live.change((l) => {
      l.alertList = [];
    });
    t.equal(view.alerts().length, 2, 'the broker away: the last state is served');
    await server.restart();
    await until('the state after the broker returns', () => view.alerts().length === 0);
    await publisher.close();
  },
);
