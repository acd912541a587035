import t from 'tap';
import { until } from '../test/support/wait.ts';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { VirtualTimeScheduler } from 'rxjs';
import { InMemoryEventBus, type DomainEvent } from '../core/events.ts';
import type { FetchFn, RawFetch } from './fetch-feed.ts';
import { startFaultServer, type Fault } from '../test/support/fault-server.ts';
import { captureLogs, silentLogger } from '../test/support/logs.ts';
import { createPipeline } from './ingest.ts';
import { encodeFeed, header, MemoryHistory, testConfig } from '../test/support/pipeline-fakes.ts';

const vehicles = (tsS: number, lat = 40) =>
  encodeFeed({
    header: header(tsS),
    entity: [
      {
        id: '1',
        vehicle: {
          vehicle: { id: 'bus-1' },
          trip: { route_id: '66' },
          position: { latitude: lat, longitude: -73 },
          timestamp: tsS,
        },
      },
    ],
  });

t.test(
  'fault tests: timeout, 500, truncated, huge and slow bodies each give a FeedPoll, and polling goes on',
  async (t) => {
    const body = vehicles(Math.floor(Date.now() / 1000));
    const plan: Fault[] = ['timeout', 'status500', 'truncated', 'huge', 'slow', 'ok'];
    const server = await startFaultServer(body, (_req, n) => plan[n - 1] ?? 'ok');
    t.teardown(() => server.close());
    const config = testConfig({
      feeds: [
        {
          id: 'faulty',
          kind: 'gtfs-rt',
          url: server.url(),
          interval_s: 0.05,
          timeout_s: 1,
          max_bytes: 1024 * 1024,
          backoff_max_s: 0.1,
        },
      ],
    });
    const history = new MemoryHistory();
    const logs = captureLogs();
    const pipeline = createPipeline({
      config,
      bus: new InMemoryEventBus(),
      history,
      scheduleFor: () => undefined,
      log: logs.logger,
    });
    pipeline.start();
    await until('eight polls', () => history.polls.length >= 8);
    await pipeline.stop();

    const polls = history.polls;
    t.same(
      polls.slice(0, 7).map((p) => [p.status, Object.keys(p.rejected).join()]),
      [
        ['timeout', 'timeout'],
        ['http_error', 'http_error'],
        ['network_error', 'truncated_body'],
        ['too_large', 'too_large'],
        ['timeout', 'timeout'],
        ['ok', ''],
        ['unchanged', ''],
      ],
      JSON.stringify(polls.map((p) => [p.status, p.error])),
    );
    t.equal(polls[1]!.http_status, 500);
    t.match(polls[2]!.error, /cut short/);
    t.equal(polls[5]!.stored, 1, 'the vehicle (it names no trip, so no trip observation)');
    t.match(pipeline.state.feed('faulty'), { last_status: 'unchanged', failures: 5 });
    t.equal(pipeline.state.vehicles('bus').length, 0, 'no schedule: mode unknown, not served by mode');
    t.equal(
      logs.lines.filter((l) => l.feed === 'faulty' && l.msg === 'poll failed').length,
      5,
      'one line per failed poll',
    );
    const polled = history.polls.length;
    await new Promise((r) => setTimeout(r, 150));
    t.equal(history.polls.length, polled, 'stop() ends polling');
  },
);

t.test('freshness over a controlled clock, through the running pipeline', async (t) => {
  const scheduler = new VirtualTimeScheduler();
  const base = Date.parse('2024-03-01T12:00:00Z');
  const now = () => base + scheduler.now();
  let bodyTs = base / 1000;
  let failing = false;
  const fetch: FetchFn = async (): Promise<RawFetch> =>
    failing
      ? { kind: 'failed', status: 'timeout', reason: 'timeout', http_status: null, bytes: 0, error: 'deadline' }
      : { kind: 'body', body: vehicles(bodyTs, 40 + bodyTs / 1e9), http_status: 200, etag: null, last_modified: null };
  const config = testConfig({
    feeds: [{ id: 'vp', kind: 'gtfs-rt', url: 'http://feed.invalid/vp', interval_s: 10, backoff_max_s: 20 }],
    freshness: { stale_after_s: 60, expired_after_s: 120, max_future_s: 30, max_age_days: 30 },
  });
  const bus = new InMemoryEventBus();
  const events: DomainEvent[] = [];
  bus.subscribe((batch) => events.push(...batch));
  const pipeline = createPipeline({
    config,
    bus,
    history: new MemoryHistory(),
    scheduleFor: () => undefined,
    now,
    fetch,
    scheduler,
    tick_ms: 5_000,
    log: silentLogger,
  });
  const advance = async (ms: number) => {
    const target = scheduler.now() + ms;
    while (scheduler.now() < target) {
      await new Promise((r) => setImmediate(r));
      const step = Math.min(target, scheduler.now() + 1_000);
      scheduler.maxFrames = step;
      scheduler.flush();
      scheduler.frame = step;
    }
    await new Promise((r) => setImmediate(r));
  };
  const freshness = () => pipeline.state.feed('vp')!.freshness;

  pipeline.start();
  await advance(1_000);
  t.equal(freshness(), 'fresh');
  failing = true;
  await advance(70_000);
  t.equal(freshness(), 'stale');
  await advance(60_000);
  t.equal(freshness(), 'expired');
  failing = false;
  bodyTs = now() / 1000;
  await advance(25_000);
  t.equal(freshness(), 'fresh');
  await pipeline.stop();
  const feedEvents = events.filter((e) => e.type === 'feed.stale' || e.type === 'feed.recovered');
  t.same(
    feedEvents.map((e) => [e.type, (e.data as { freshness: string }).freshness]),
    [
      ['feed.stale', 'stale'],
      ['feed.stale', 'expired'],
      ['feed.recovered', 'fresh'],
    ],
  );
});

t.test('a failed history write still records the poll, and the body is processed again next time', async (t) => {
  const body = vehicles(1_700_000_000);
  const fetch: FetchFn = async () => ({ kind: 'body', body, http_status: 200, etag: null, last_modified: null });
  const config = testConfig({ feeds: [{ id: 'vp', kind: 'gtfs-rt', url: 'http://feed.invalid/vp' }] });
  const history = new MemoryHistory();
  const logs = captureLogs();
  const pipeline = createPipeline({
    config,
    bus: new InMemoryEventBus(),
    history,
    scheduleFor: () => undefined,
    fetch,
    log: logs.logger,
    now: () => 1_700_000_000_000,
  });
  history.failNext = 1;
  const first = await pipeline.pollOnce('vp');
  t.match(first, { status: 'ok', stored: 0, error: 'history write failed' });
  t.equal(history.batches.length, 1, 'the poll row alone');
  t.match(
    logs.lines[0],
    { msg: 'history write failed', err: { message: /./, stack: /./ } },
    'logged with the error and its stack',
  );
  const second = await pipeline.pollOnce('vp');
  t.equal(second.status, 'ok', 'not "unchanged": the rows were never stored');
  t.equal(second.stored, 1);
  t.equal((await pipeline.pollOnce('vp')).status, 'unchanged');
  const [a, b] = await Promise.all([pipeline.pollOnce('vp'), pipeline.pollOnce('vp')]);
  t.equal(a, b, 'a second ask while a poll runs joins it: polls of one feed never overlap');
  await t.rejects(pipeline.pollOnce('nope'), /unknown feed/);
});

t.test('alerts-json feeds: alerts with lifecycle; a broken file fails the poll', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'alerts-json-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'alerts.json');
  const nowS = 1_700_000_000;
  let clock = nowS * 1000;
  writeFileSync(
    path,
    JSON.stringify({
      timestamp: nowS,
      alerts: [
        {
          id: 'a',
          effect: 'DETOUR',
          header: 'Detour on 66',
          informed_entities: [{ route_id: '66', route_type: 3 }],
          active_periods: [{ start: nowS + 60 }],
        },
      ],
    }),
  );
  const config = testConfig({ feeds: [{ id: 'city', kind: 'alerts-json', url: pathToFileURL(path).href }] });
  const history = new MemoryHistory();
  const bus = new InMemoryEventBus();
  const events: DomainEvent[] = [];
  bus.subscribe((batch) => events.push(...batch));
  const pipeline = createPipeline({
    config,
    bus,
    history,
    scheduleFor: () => undefined,
    now: () => clock,
    log: silentLogger,
    tick_ms: 20,
  });

  const poll = await pipeline.pollOnce('city');
  t.match(poll, { status: 'ok', alerts: 1, stored: 1 });
  t.match(pipeline.state.alerts()[0], {
    id: 'city:a',
    status: 'upcoming',
    modes: ['bus'],
    routes: ['66'],
    impact: 'detour',
  });

  // time alone activates it; the tick records the new version
  clock += 120_000;
  pipeline.start();
  await until('the tick', () => history.batches.some((b) => b.alertVersions.some((a) => a.status === 'active')));
  await pipeline.stop();

  writeFileSync(path, '{"alerts": "nope"}');
  const broken = await pipeline.pollOnce('city');
  t.match(broken, { status: 'decode_error', rejected: { invalid_alerts_json: 1 } });
  t.equal(pipeline.state.alerts()[0]!.status, 'active', 'a broken file resolves nothing');
  await new Promise((r) => setImmediate(r));
  t.same(
    events.filter((e) => e.type.startsWith('alert.')).map((e) => e.type),
    ['alert.created', 'alert.updated'],
  );
});

t.test('an old snapshot polled today passes the stops before its header, not every stop it predicts', async (t) => {
  // Caltrain's 2023 trip updates ingested in 2026 with allow_old_snapshots wrote all 214 predicted
  // stops as passed: the tracker judged them by the poll's clock instead of the feed's
  const headerS = Date.parse('2023-11-08T01:05:34Z') / 1000;
  const stop = (seq: number, id: string, atS: number) => ({
    stop_sequence: seq,
    stop_id: id,
    arrival: { time: atS },
    departure: { time: atS + 30 },
  });
  const body = encodeFeed({
    header: header(headerS),
    entity: [
      {
        id: 't1',
        trip_update: {
          trip: { trip_id: 'T1', route_id: 'R1', start_date: '20231107' },
          timestamp: headerS,
          stop_time_update: [
            stop(1, 'A', headerS - 900),
            stop(2, 'B', headerS - 300),
            stop(3, 'C', headerS + 300),
            stop(4, 'D', headerS + 900),
          ],
        },
      },
    ],
  });
  const dir = mkdtempSync(join(tmpdir(), 'old-snapshot-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'tu.pb');
  writeFileSync(file, body);
  const config = testConfig({
    feeds: [{ id: 'old', kind: 'gtfs-rt', url: pathToFileURL(file).href, allow_old_snapshots: true, mode: 'rail' }],
  });
  const history = new MemoryHistory();
  const pipeline = createPipeline({
    config,
    bus: new InMemoryEventBus(),
    history,
    scheduleFor: () => undefined,
    log: silentLogger,
  });
  const poll = await pipeline.pollOnce('old');
  t.equal(poll.status, 'ok');
  const written = history.batches.flatMap((b) => b.stopEvents ?? []);
  t.same(
    written.map((e) => e.stop_id),
    ['A'],
    'A is passed: B, the stop after it, had a time before the header (a stop is passed by a later one)',
  );
  t.equal(poll.stop_events?.written, 1);
});

t.test('pollAllOnce fetches every feed at once and applies them in the order configured', async (t) => {
  // the first feed's body arrives last: applied first all the same (feeds of one schedule share a
  // trip tracker, so the order decides the stop events; `ingest --once` must give the same every run)
  const nowS = Math.floor(Date.now() / 1000);
  const bodies: Record<string, Uint8Array> = { first: vehicles(nowS, 40), second: vehicles(nowS, 41) };
  const started: string[] = [];
  const fetch: FetchFn = async (request): Promise<RawFetch> => {
    const id = request.url.endsWith('first') ? 'first' : 'second';
    started.push(id);
    await new Promise((resolve) => setTimeout(resolve, id === 'first' ? 80 : 0));
    return { kind: 'body', body: bodies[id]!, http_status: 200, etag: null, last_modified: null };
  };
  const history = new MemoryHistory();
  const pipeline = createPipeline({
    config: testConfig({
      feeds: ['first', 'second'].map((id) => ({ id, kind: 'gtfs-rt', url: `http://feeds.invalid/${id}` })),
    }),
    bus: new InMemoryEventBus(),
    history,
    scheduleFor: () => undefined,
    fetch,
    log: silentLogger,
  });
  t.teardown(() => pipeline.stop());
  const polls = await pipeline.pollAllOnce();
  t.same(started, ['first', 'second'], 'both fetches started before either answered');
  t.same(
    polls.map((p) => [p.feed_id, p.status]),
    [
      ['first', 'ok'],
      ['second', 'ok'],
    ],
  );
  t.same(
    history.polls.map((p) => p.feed_id),
    ['first', 'second'],
    'applied (and queued for history) in the order configured, not the order the bodies came',
  );
});
