// The collector against a real (in-memory) DuckDB: figures from live state and the poll log,
// state changes persisted and reloaded after a restart, outbox figures, and pages that keep
// being served while the store does not answer.
import t, { type Test } from 'tap';
import { parseConfig } from '../core/config.ts';
import { InMemoryEventBus } from '../core/events.ts';
import type { FeedPoll } from '../core/types.ts';
import { Db } from '../store/db.ts';
import { createHistoryWriter } from '../store/history-writer.ts';
import { FakeLive, makeAlert, makeFeed } from '../test/support/fake-live.ts';
import type { UsageRecord } from '../accounts/meter.ts';
import { StatusCollector, type StatusUpdate } from './collector.ts';
import { RequestStats } from './request-stats.ts';
import { StatusStore } from './status-store.ts';
import { logInto } from '../test/support/logs.ts';
import { rawEvent } from '../test/support/events.ts';

const T0 = Date.UTC(2024, 4, 7, 12, 0, 0);
const config = parseConfig({
  feeds: [
    { id: 'bus', kind: 'gtfs-rt', url: 'http://127.0.0.1:1/bus.pb', interval_s: 10 },
    { id: 'notices', kind: 'alerts-json', url: 'http://127.0.0.1:1/alerts.json', interval_s: 30 },
  ],
  status: { tick_ms: 10_000 },
});

function poll(feed_id: string, polled_ms: number, status: FeedPoll['status'], extra: Partial<FeedPoll> = {}): FeedPoll {
  return {
    feed_id,
    polled_ms,
    status,
    http_status: status === 'ok' ? 200 : 500,
    bytes: 10,
    duration_ms: 5,
    header_timestamp_ms: polled_ms,
    entities: 20,
    vehicles: 20,
    trip_updates: 0,
    alerts: 0,
    stored: 20,
    rejected: {},
    matching: null,
    error: status === 'ok' ? null : 'HTTP 500',
    ...extra,
  };
}

function liveAt(nowMs: number): FakeLive {
  const live = new FakeLive();
  live.feedList = [
    makeFeed({
      feed_id: 'bus',
      polls: 3,
      last_poll_ms: nowMs - 2_000,
      last_success_ms: nowMs - 2_000,
      header_timestamp_ms: nowMs - 5_000,
      entities: 42,
      matching: {
        trips: 40,
        matched: 36,
        unmatched: 3,
        ambiguous: 1,
        previous_day: 2,
        match_rate: 0.9,
        strategies: {
          exact: { matched: 0, unmatched: 40, ambiguous: 0 },
          nyct: { matched: 33, unmatched: 6, ambiguous: 1 },
          nyct_loose: { matched: 3, unmatched: 3, ambiguous: 0 },
        },
      },
    }),
    makeFeed({
      feed_id: 'notices',
      kind: 'alerts-json',
      polls: 1,
      last_poll_ms: nowMs - 3_000,
      last_success_ms: nowMs - 3_000,
      header_timestamp_ms: nowMs - 3_000,
      entities: 3,
    }),
  ];
  live.alertList = [
    makeAlert({ id: 'notices:1', modes: ['bus', 'streetcar'], updated_ms: nowMs - 60_000 }),
    makeAlert({ id: 'notices:2', modes: ['rail'], status: 'upcoming' }),
    makeAlert({ id: 'notices:3', modes: ['rail'], status: 'resolved', resolved_ms: nowMs - 30_000 }),
  ];
  return live;
}

async function setup(t: Test, db: Db, clock: { now: number }, live: FakeLive) {
  const store = await StatusStore.open(db);
  const requests = new RequestStats(clock.now, () => clock.now);
  const logged: string[] = [];
  const collector = new StatusCollector({
    live,
    config,
    requests,
    store,
    bus: new InMemoryEventBus(),
    clock: () => clock.now,
    log: logInto((m) => logged.push(m)),
  });
  await collector.start();
  t.teardown(async () => {
    await collector.stop();
    await store.close();
  });
  return { collector, requests, logged, store };
}

t.test('figures, state changes, persistence and a restart', async (t) => {
  const db = await Db.open(':memory:');
  t.teardown(() => db.close());
  // the poll log before this process started: 2 ok polls and a failure 10 minutes ago, alerts in one
  await createHistoryWriter(db).write({
    vehicles: [],
    arrivals: [],
    trips: [],
    alertVersions: [],
    polls: [
      poll('bus', T0 - 10 * 60_000, 'ok'),
      poll('bus', T0 - 10 * 60_000 + 10_000, 'http_error'),
      poll('bus', T0 - 10 * 60_000 + 20_000, 'ok', { entities: 25 }),
      poll('notices', T0 - 5 * 60_000, 'ok', { alerts: 3 }),
      poll('bus', T0 - 2 * 3_600_000, 'ok'),
    ],
  });
  await db.run(`INSERT INTO webhook_deliveries VALUES ('d1', 1, 'm1', 'e1', 'k1', 'alert.created', 'retrying',
    1, 0, false,
    NULL, NULL, 500, 'HTTP 500', to_timestamp(${(T0 - 90_000) / 1000}), to_timestamp(${T0 / 1000})),
    ('d2', 2, 'm2', 'e1', 'k1', 'alert.created', 'succeeded', 1, 0, false, NULL, NULL, 200, NULL,
      to_timestamp(${(T0 - 99_000) / 1000}), to_timestamp(${T0 / 1000}))`);

  const clock = { now: T0 };
  const live = liveAt(T0);
  const { collector, requests } = await setup(t, db, clock, live);
  const updates: StatusUpdate[] = [];
  collector.onUpdate((u) => updates.push(u));
  collector.setOpenStreams(() => 3);
  const usage = (status: number, latencyMs: number): UsageRecord => ({
    keyId: 'k',
    plan: 'max',
    test: false,
    unit: 'request',
    quantity: 1,
    method: 'GET',
    endpoint: '/api/v1/alerts',
    status,
    latencyMs,
    atMs: clock.now,
    requestId: 'r',
  });
  for (let i = 0; i < 30; i++) requests.record(usage(i < 3 ? 500 : 200, 4));

  // the outbox read started by the first tick: waited for, not timed (the machine may be loaded)
  const reading = () => (collector as unknown as { outboxReading: boolean }).outboxReading;
  for (let waited = 0; reading() && waited < 10_000; waited += 20) {
    await new Promise((r) => setTimeout(r, 20));
  }
  clock.now += 500;
  collector.tick();
  const doc = collector.document();
  t.equal(doc.state, 'degraded', 'the API has 10 % server errors');
  t.same(
    doc.feeds.map((f) => [f.feed_id, f.state]),
    [
      ['bus', 'operational'],
      ['notices', 'operational'],
    ],
  );
  const bus = doc.feeds[0]!;
  t.equal(bus.polls_1h, 3, 'the hour before the start comes from feed_polls (the 2-hour-old poll is not in it)');
  t.equal(bus.failures_1h, 1);
  t.equal(bus.error_rate_1h, 0.3333);
  t.equal(bus.last_error, 'HTTP 500', 'the last error comes from the poll log');
  t.equal(bus.sparkline.entities.at(-11), 25);
  t.equal(bus.entities, 42);
  t.equal(bus.header_age_s, 5.5);
  t.same(
    bus.schedule_match,
    { trips: 40, matched: 36, unmatched: 3, ambiguous: 1, loose: 3, rate: 0.9 },
    'loose matches counted apart',
  );
  t.same(doc.alerts.active_by_mode, { rail: 0, bus: 1, streetcar: 1 });
  t.same(doc.alerts.upcoming_by_mode, { rail: 1, bus: 0, streetcar: 0 });
  t.equal(doc.alerts.last_change_at, new Date(T0 - 30_000).toISOString(), 'a resolution is a change');
  t.same(
    doc.alerts.sources.map((s) => [s.feed_id, s.alerts]),
    [['notices', 2]],
  );
  t.equal(doc.api.last_5m.requests, 30);
  t.equal(doc.api.state, 'degraded');
  t.equal(doc.api.open_streams, 3);
  t.same({ depth: doc.api.webhooks.depth, oldest: doc.api.webhooks.oldest_pending_age_s }, { depth: 1, oldest: 91 });
  t.ok(updates.length >= 1 && updates.at(-1)!.stateChanged, 'listeners hear about state changes');

  // the bus feed stops answering: its poll hangs; two intervals later it is down
  const count = updates.length;
  clock.now += 1_000;
  collector.tick();
  t.equal(updates.length, count, 'nothing changed but ages: no update');
  clock.now = T0 + 18_500;
  collector.tick();
  t.equal(collector.document().feeds[0]!.state, 'down');
  t.equal(updates.at(-1)!.doc.feeds[0]!.state, 'down');
  await collector.flushWrites();
  const rows = await db.all<{ component: string; state: string; previous_state: string | null }>(
    'SELECT component, state, previous_state FROM status_changes ORDER BY changed_at, component',
  );
  t.same(
    rows.map((r) => `${r.component}:${r.previous_state}>${r.state}`),
    [
      'alerts:null>operational',
      'api:null>operational',
      'feed:bus:null>operational',
      'feed:notices:null>operational',
      'api:operational>degraded',
      'feed:bus:operational>down',
    ],
  );
  t.same(
    collector.document().history.incidents.map((i) => [i.component, i.ended_at]),
    [
      ['feed:bus', null],
      ['api', null],
    ],
  );

  // a restart: the history comes back, and an unchanged state is not recorded again
  await collector.stop();
  clock.now += 5_000;
  const again = await setup(t, db, clock, live);
  again.collector.tick();
  const restarted = again.collector.document();
  t.same(
    restarted.history.incidents.map((i) => i.component),
    ['feed:bus', 'api'],
  );
  t.equal(restarted.api.state, 'operational', 'no requests since the restart');
  await again.collector.flushWrites();
  const after = await db.all<{ n: number }>('SELECT count(*)::INTEGER AS n FROM status_changes');
  t.equal(after[0]!.n, 7, 'only the API change was added (bus is still down)');
  t.same(restarted.history.incidents[1]!.ended_at, new Date(clock.now).toISOString(), 'the API incident ended');
});

t.test('pages are built while the store does not answer', async (t) => {
  const never = new Promise<never>(() => {});
  const stuck = {
    loadChanges: () => never,
    insertChanges: () => never,
    prune: () => never,
    pollSeed: () => never,
    outbox: () => never,
    close: async () => {},
  } as unknown as StatusStore;
  const clock = { now: T0 };
  const collector = new StatusCollector({
    live: liveAt(T0),
    config,
    requests: new RequestStats(T0),
    store: stuck,
    clock: () => clock.now,
  });
  void collector.start(); // waits for the history forever
  clock.now += 25_000;
  const doc = collector.document();
  t.equal(doc.feeds.length, 2);
  t.equal(doc.feeds[0]!.state, 'down', 'judged from memory alone');
  t.equal(doc.api.webhooks.depth, null, 'outbox figures are simply not there yet');
});

t.test('without a store, with a failing store, and with a bus', async (t) => {
  const clock = { now: T0 };
  const live = liveAt(T0);
  const bus = new InMemoryEventBus();
  const failing = {
    loadChanges: async () => Promise.reject(new Error('disk on fire')),
    insertChanges: async () => Promise.reject(new Error('disk on fire')),
    prune: async () => Promise.reject(new Error('disk on fire')),
    pollSeed: async () => Promise.reject(new Error('disk on fire')),
    outbox: async () => Promise.reject(new Error('disk on fire')),
    close: async () => {},
  } as unknown as StatusStore;
  const logged: string[] = [];
  const collector = new StatusCollector({
    live,
    config,
    requests: new RequestStats(T0),
    store: failing,
    bus,
    clock: () => clock.now,
    log: logInto((m) => logged.push(m)),
  });
  await collector.start();
  t.teardown(() => collector.stop());
  await collector.flushWrites();
  await new Promise((r) => setTimeout(r, 10));
  t.ok(logged.some((m) => /incident history/.test(m)) && logged.some((m) => /last hour of polls/.test(m)));
  t.ok(logged.some((m) => /storing state changes failed/.test(m)));
  t.ok(logged.some((m) => /webhook outbox/.test(m)));
  await collector.flushWrites();
  t.equal(logged.filter((m) => /storing state changes failed/.test(m)).length, 1, 'one line per failure streak');

  const seen: StatusUpdate[] = [];
  collector.onUpdate((u) => seen.push(u));
  live.change((l) => {
    l.feedList = [
      { ...l.feedList[0]!, polls: 4, failures: 1, last_status: 'timeout', last_error: 'timed out', last_poll_ms: T0 },
      l.feedList[1]!,
    ];
  });
  bus.publish(rawEvent('feed.stale', { at_ms: T0 }));
  bus.publish(rawEvent('alert.created', { at_ms: T0 + 100, modes: ['bus'] }));
  await new Promise((r) => setImmediate(r));
  await new Promise((r) => setImmediate(r));
  t.equal(
    seen.at(-1)?.doc.feeds[0]?.state,
    'degraded',
    'a feed event re-evaluates at once, without waiting for the tick',
  );
  t.equal(seen.at(-1)?.doc.alerts.last_change_at, new Date(T0 + 100).toISOString());

  const bare = new StatusCollector({
    live,
    config,
    requests: new RequestStats(T0),
    store: null,
    clock: () => clock.now,
  });
  t.equal(bare.document().feeds.length, 2, 'a document without ever starting');
  await bare.start();
  await bare.stop();
});
