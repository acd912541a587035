// The rules on every poll, through the real pipeline: each poll's findings, the feed's rules in
// its health, feed.rule_firing when a rule fires and feed.rule_cleared after 3 clean bodies in a
// row, T001 for a body that is no feed, and what is stored left as before.
import t from 'tap';
import type { FeedConfig } from '../../core/config.ts';
import { InMemoryEventBus, type DomainEvent } from '../../core/events.ts';
import { silentLogger } from '../../core/logger.ts';
import { encodeFeed, MemoryHistory, testConfig } from '../../test/support/pipeline-fakes.ts';
import type { FetchFn } from '../fetch-feed.ts';
import { createPipeline } from '../ingest.ts';

const T = 1_714_564_800; // 2024-05-01T12:00:00Z

const vehicles = (headerS: number, vehicleId: string | null): Uint8Array =>
  encodeFeed({
    header: { gtfs_realtime_version: '2.0', incrementality: 0, timestamp: headerS },
    entity: [
      {
        id: 'e1',
        vehicle: {
          ...(vehicleId ? { vehicle: { id: vehicleId } } : {}),
          position: { latitude: 42.35, longitude: -71.06 },
          timestamp: headerS - 2,
        },
      },
    ],
  });

t.test('findings per poll, the rules in the feed health, events when a rule starts and stops', async (t) => {
  const bodies: Uint8Array[] = [
    vehicles(T, null), // W002
    vehicles(T + 10, 'bus-1'),
    vehicles(T + 5, 'bus-1'), // back in time: E018
    vehicles(T + 20, 'bus-1'), // W002's third clean body
    new TextEncoder().encode('<html>maintenance</html>'), // T001
    vehicles(T + 30, 'bus-1'), // E018's third
    vehicles(T + 40, 'bus-1'),
    vehicles(T + 50, 'bus-1'), // T001's third
  ];
  let next = 0;
  let nowMs = 0;
  const fetch: FetchFn = async () => ({
    kind: 'body',
    body: bodies[next++]!,
    http_status: 200,
    etag: null,
    last_modified: null,
  });
  const bus = new InMemoryEventBus();
  const events: DomainEvent[] = [];
  bus.subscribe((batch) => events.push(...batch.filter((e) => e.type.startsWith('feed.rule_'))));
  const history = new MemoryHistory();
  const feed = { id: 'vp', kind: 'gtfs-rt', url: 'http://feed.invalid/vp', interval_s: 10, mode: 'bus' };
  const pipeline = createPipeline({
    config: testConfig({ feeds: [feed] }),
    bus,
    history,
    scheduleFor: () => undefined,
    now: () => nowMs,
    fetch,
    log: silentLogger,
  });
  t.teardown(() => pipeline.stop());

  const polls = [];
  for (let i = 0; i < bodies.length; i++) {
    nowMs = (T + 10 * i + 1) * 1000;
    polls.push(await pipeline.pollOnce('vp'));
  }
  t.same(
    polls.map((p) => [p.status, p.findings]),
    [
      ['ok', { W002: { count: 1, example: 'e1' } }],
      ['ok', {}],
      ['ok', { E018: { count: 1, example: null } }],
      ['ok', {}],
      ['decode_error', { T001: { count: 1, example: null } }],
      ['ok', {}],
      ['ok', {}],
      ['ok', {}],
    ],
  );
  t.same(
    polls.map((p) => p.stored),
    [1, 1, 1, 1, 0, 1, 1, 1],
    'what is stored does not change: every vehicle kept',
  );
  t.same(
    history.polls.map((p) => p.findings),
    polls.map((p) => p.findings),
    'the findings go to history with the poll',
  );
  t.same(
    events.map((e) => [e.type, (e.data as { rule: string }).rule, e.at_ms / 1000 - T]),
    [
      ['feed.rule_firing', 'W002', 1],
      ['feed.rule_firing', 'E018', 21],
      ['feed.rule_cleared', 'W002', 31],
      ['feed.rule_firing', 'T001', 41],
      ['feed.rule_cleared', 'E018', 51],
      ['feed.rule_cleared', 'T001', 71],
    ],
  );
  t.match(events[1], {
    modes: ['bus'],
    data: {
      source: 'vp',
      rule: 'E018',
      severity: 'error',
      unusable: true,
      firing: true,
      findings: 1,
      example_entity_id: null,
      since: new Date((T + 21) * 1000).toISOString(),
    },
  });
  t.match(events[2]!.data, { firing: false, findings: 0, since: new Date((T + 1) * 1000).toISOString() });
  t.match(pipeline.state.feed('vp')!.rules, [
    { rule: 'W002', total: 1, last: 0, firing_since_ms: null },
    { rule: 'E018', total: 1, last: 0, firing_since_ms: null },
    { rule: 'T001', total: 1, last: 0, firing_since_ms: null, clean: 3 },
  ]);
});

t.test(
  'a poll that fails between two snapshots is a gap for W007; unchanged bodies are not checked again',
  async (t) => {
    const body = (s: number) => vehicles(s, 'bus-1');
    const answers: Awaited<ReturnType<FetchFn>>[] = [
      { kind: 'body', body: body(T), http_status: 200, etag: null, last_modified: null },
      { kind: 'body', body: body(T), http_status: 200, etag: null, last_modified: null },
      { kind: 'failed', status: 'timeout', reason: 'timeout', http_status: null, bytes: 0, error: 'deadline' },
      { kind: 'body', body: body(T + 60), http_status: 200, etag: null, last_modified: null },
      { kind: 'body', body: body(T + 120), http_status: 200, etag: null, last_modified: null },
    ];
    let next = 0;
    const feed: Partial<FeedConfig> = { id: 'vp', kind: 'gtfs-rt', url: 'http://feed.invalid/vp', interval_s: 30 };
    const pipeline = createPipeline({
      config: testConfig({ feeds: [feed] }),
      bus: new InMemoryEventBus(),
      history: new MemoryHistory(),
      scheduleFor: () => undefined,
      now: () => (T + 30 * next) * 1000,
      fetch: async () => answers[next++]!,
      log: silentLogger,
    });
    t.teardown(() => pipeline.stop());
    const polls = [];
    for (let i = 0; i < answers.length; i++) polls.push(await pipeline.pollOnce('vp'));
    t.same(
      polls.map((p) => [p.status, p.findings ?? 'not checked']),
      [
        ['ok', {}],
        ['unchanged', 'not checked'],
        ['timeout', 'not checked'],
        ['ok', {}],
        ['ok', { W007: { count: 1, example: null } }],
      ],
      '60 s between headers after a timeout says nothing; 60 s between two polls 30 s apart is W007',
    );
  },
);
