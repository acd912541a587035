// Feed rule findings on the status document: the last hour per rule (seeded from feed_polls at
// start, then from the live state's per-rule totals), one example entity, whether the rule still
// fires; a feed whose only problem is findings stays operational unless a rule makes its data
// unusable; the page lists them.
import t from 'tap';
import { parseConfig } from '../core/config.ts';
import { InMemoryEventBus } from '../core/events.ts';
import type { FeedRuleHealth } from '../core/ports.ts';
import type { FeedPoll } from '../core/types.ts';
import { Db } from '../store/db.ts';
import { createHistoryWriter } from '../store/history-writer.ts';
import { FakeLive, makeFeed } from '../test/support/fake-live.ts';
import { classifyFeed } from './classify.ts';
import { StatusCollector } from './collector.ts';
import { FindingsHistory } from './feed-findings.ts';
import { renderFeed } from './render.ts';
import { RequestStats } from './request-stats.ts';
import { StatusStore } from './status-store.ts';

const T0 = Date.UTC(2024, 4, 7, 12, 0, 0);
const config = parseConfig({
  feeds: [
    { id: 'bus', kind: 'gtfs-rt', url: 'http://127.0.0.1:1/bus.pb', interval_s: 10 },
    { id: 'notices', kind: 'alerts-json', url: 'http://127.0.0.1:1/alerts.json', interval_s: 30 },
  ],
  status: { tick_ms: 10_000 },
});

const rule = (over: Partial<FeedRuleHealth> & { rule: string }): FeedRuleHealth => ({
  total: 1,
  last: 1,
  example: null,
  last_seen_ms: T0,
  firing_since_ms: T0,
  clean: 0,
  ...over,
});

function poll(polled_ms: number, findings: FeedPoll['findings']): FeedPoll {
  return {
    feed_id: 'bus',
    polled_ms,
    status: 'ok',
    http_status: 200,
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
    error: null,
    ...(findings ? { findings } : {}),
  };
}

t.test('the last hour per rule, across a restart, with an example and whether it still fires', async (t) => {
  const db = await Db.open(':memory:');
  t.teardown(() => db.close());
  await createHistoryWriter(db).write({
    vehicles: [],
    arrivals: [],
    trips: [],
    alertVersions: [],
    polls: [
      poll(T0 - 2 * 3_600_000, { E022: { count: 100, example: 'too-old' } }),
      poll(T0 - 20 * 60_000, { E022: { count: 4, example: 'tu-1' }, W009: { count: 19, example: 'tu-1' } }),
      poll(T0 - 10 * 60_000, { E022: { count: 2, example: 'tu-7' } }),
      poll(T0 - 5 * 60_000, undefined),
    ],
  });
  const store = await StatusStore.open(db);
  const clock = { now: T0 };
  const live = new FakeLive();
  const bus = makeFeed({
    feed_id: 'bus',
    polls: 3,
    last_poll_ms: T0 - 2_000,
    last_success_ms: T0 - 2_000,
    header_timestamp_ms: T0 - 5_000,
  });
  live.feedList = [
    bus,
    makeFeed({
      feed_id: 'notices',
      kind: 'alerts-json',
      last_poll_ms: T0,
      last_success_ms: T0,
      header_timestamp_ms: T0,
    }),
  ];
  const collector = new StatusCollector({
    live,
    config,
    requests: new RequestStats(T0, () => clock.now),
    store,
    bus: new InMemoryEventBus(),
    clock: () => clock.now,
  });
  await collector.start();
  t.teardown(async () => {
    await collector.stop();
    await store.close();
  });

  let doc = collector.document();
  t.same(
    doc.feeds[0]!.findings.map((f) => [f.rule, f.count_1h, f.example_entity_id, f.firing]),
    [
      ['W009', 19, 'tu-1', false],
      ['E022', 6, 'tu-7', false],
    ],
    'seeded from the poll log: the hour before the start, most findings first, the latest example',
  );
  t.same(doc.feeds[1]!.findings, [], 'alerts-json feeds are not checked');
  t.equal(doc.feeds[0]!.state, 'operational');

  // two polls since the start, one firing E022 and E001
  clock.now = T0 + 30_000;
  bus.rules = [rule({ rule: 'E022', total: 3, last: 3, example: 'tu-3', last_seen_ms: T0 + 20_000 })];
  bus.polls = 4;
  bus.last_poll_ms = bus.last_success_ms = T0 + 20_000;
  collector.tick();
  bus.rules = [
    rule({ rule: 'E022', total: 5, last: 2, example: 'tu-4', last_seen_ms: T0 + 25_000 }),
    rule({ rule: 'W004', total: 1, last: 1, example: 'v-9', last_seen_ms: T0 + 25_000 }),
  ];
  bus.polls = 5;
  bus.last_poll_ms = bus.last_success_ms = bus.header_timestamp_ms = T0 + 25_000;
  collector.tick();
  doc = collector.document();
  const feed = doc.feeds[0]!;
  t.same(
    feed.findings.map((f) => [f.rule, f.count_1h, f.example_entity_id, f.firing, f.severity]),
    [
      ['W009', 19, 'tu-1', false, 'warning'],
      ['E022', 11, 'tu-4', true, 'error'],
      ['W004', 1, 'v-9', true, 'warning'],
    ],
    'findings since the start added to the seed',
  );
  t.match(feed.findings[1], {
    title: 'Sequential stop_time_update times are not increasing',
    last_seen_at: new Date(T0 + 25_000).toISOString(),
    unusable: false,
  });
  t.equal(feed.state, 'operational', 'findings alone leave a feed operational');

  const html = renderFeed(feed, clock.now);
  t.match(html, /<h4>Feed rules \(last hour\)<\/h4><ul class="findings">/);
  t.match(
    html,
    /<li data-rule="E022" class="f-error" data-firing="true"><code>E022<\/code> <span class="title">Sequential stop_time_update times are not increasing<\/span> <small><span class="count">11<\/span> in the last hour · e\.g\. entity <span class="example">tu-4<\/span>/,
  );
  t.match(html, /data-rule="W009"[\s\S]*· stopped<\/small>/, 'a rule that no longer fires says so');

  // an hour later the seed and the first polls have left the window
  clock.now = T0 + 3_600_000 + 60_000;
  collector.tick();
  t.same(collector.document().feeds[0]!.findings, []);
  t.match(renderFeed(collector.document().feeds[0]!, clock.now), /Feed rules: no findings in the last hour/);
});

t.test('a rule that makes the data unusable degrades the feed while the last body has it', async (t) => {
  const facts = (rules: FeedRuleHealth[]) => ({
    health: makeFeed({
      feed_id: 'bus',
      last_poll_ms: T0 - 1_000,
      last_success_ms: T0 - 1_000,
      header_timestamp_ms: T0 - 2_000,
      rules,
    }),
    interval_s: 10,
    consecutive_failures: 0,
    nowMs: T0,
    sinceMs: T0 - 60_000,
  });
  t.same(classifyFeed(facts([rule({ rule: 'E022', last: 40 }), rule({ rule: 'W009', last: 19 })]), config.status), {
    state: 'operational',
    reason: 'polling normally',
  });
  t.same(classifyFeed(facts([rule({ rule: 'E018', last: 1 })]), config.status), {
    state: 'degraded',
    reason:
      'last snapshot breaks E018 (GTFS-rt header timestamp decreased between two sequential iterations): 1 finding',
  });
  t.match(classifyFeed(facts([rule({ rule: 'E001', last: 12, example: 'tu-3' })]), config.status), {
    state: 'degraded',
    reason: 'last snapshot breaks E001 (Not in POSIX time): 12 findings, e.g. entity tu-3',
  });
  t.match(
    classifyFeed(facts([rule({ rule: 'E018', last: 0, firing_since_ms: T0 - 5_000, clean: 1 })]), config.status),
    { state: 'operational' },
    'the next body without it: operational again',
  );
});

t.test('FindingsHistory: totals counted from 0, a pipeline restart starts over', async (t) => {
  const h = new FindingsHistory();
  h.observe(undefined);
  h.observe([rule({ rule: 'E022', total: 5, last_seen_ms: T0 })]);
  t.same(
    h.lastHour(T0).map((f) => [f.rule, f.count]),
    [['E022', 5]],
    'polls before the first look count',
  );
  h.observe([rule({ rule: 'E022', total: 7, last_seen_ms: T0 + 1_000 })]);
  h.observe([rule({ rule: 'E022', total: 7, last_seen_ms: T0 + 1_000 })]);
  h.observe([rule({ rule: 'E022', total: 2, last_seen_ms: T0 + 2_000 })]);
  t.same(
    h.lastHour(T0 + 3_000).map((f) => [f.rule, f.count]),
    [['E022', 9]],
    '2 more, nothing twice, 2 after a restart',
  );
});
