// Snapshots through the pipeline into a real DuckDB file: stored once whatever restarts in between,
// dated by the feed's own time, and rejected whole (with a message naming the setting) when their
// header lies outside the freshness bounds.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import t from 'tap';
import { InMemoryEventBus } from '../core/events.ts';
import { classifyFeed } from '../status/classify.ts';
import { Db } from '../store/db.ts';
import { importGtfs } from '../store/gtfs-import.ts';
import { createHistoryWriter } from '../store/history-writer.ts';
import { loadScheduleIndex } from '../store/schedule-index.ts';
import { createPipeline, type Pipeline } from './ingest.ts';
import {
  encodeFeed,
  fakeSchedule,
  FIXTURES_REAL,
  hasRealFixtures,
  header,
  testConfig,
} from '../test/support/pipeline-fakes.ts';
import { silentLogger } from '../test/support/logs.ts';

const NOW_MS = Date.parse('2026-11-23T18:00:00Z');
const schedule = fakeSchedule({
  routes: [{ route_id: 'r1', route_type: 3 }],
  trips: [{ trip_id: 'T1', route_id: 'r1' }],
  stopTimes: {
    T1: [
      ['A', '08:00:00'],
      ['B', '08:10:00'],
    ],
  },
});

const vehicles = (tsS: number, lat = 40.5) =>
  encodeFeed({
    header: header(tsS),
    entity: [
      {
        id: 'v1',
        vehicle: {
          vehicle: { id: 'bus-1' },
          trip: { route_id: 'r1' },
          position: { latitude: lat, longitude: -73 },
          timestamp: tsS,
        },
      },
    ],
  });

/** One trip without start_date: its service date can only come from the snapshot's time. */
const tripUpdates = (tsS: number) =>
  encodeFeed({
    header: header(tsS),
    entity: [
      {
        id: 'tu1',
        trip_update: {
          trip: { trip_id: 'X9', route_id: 'r1' },
          stop_time_update: [{ stop_id: 'A', arrival: { time: tsS + 120 } }],
        },
      },
    ],
  });

interface Run {
  db: Db;
  pipeline: Pipeline;
  close(): Promise<void>;
}

/** A process: the database file opened, a pipeline over one file feed, closed as a restart would. */
async function start(dbPath: string, feedFile: string, feed: Record<string, unknown> = {}): Promise<Run> {
  const db = await Db.open(dbPath);
  const pipeline = createPipeline({
    config: testConfig({ feeds: [{ id: 'f', kind: 'gtfs-rt', url: pathToFileURL(feedFile).href, ...feed }] }),
    bus: new InMemoryEventBus(),
    history: createHistoryWriter(db),
    scheduleFor: () => schedule,
    now: () => NOW_MS,
    log: silentLogger,
  });
  return {
    db,
    pipeline,
    close: async () => {
      await pipeline.stop();
      await db.close();
    },
  };
}

const count = async (db: Db, sql: string) => Number((await db.all<{ n: bigint }>(sql))[0]!.n);

t.test('a snapshot polled again after a restart is not stored again, and still fills the live state', async (t) => {
  const dir = t.testdir();
  const dbPath = join(dir, 'transit.duckdb');
  const feedFile = join(dir, 'vp.pb');
  const bodyA = vehicles(NOW_MS / 1000 - 10);
  writeFileSync(feedFile, bodyA);

  const first = await start(dbPath, feedFile);
  t.match(await first.pipeline.pollOnce('f'), { status: 'ok', stored: 1 });
  await first.close();

  for (const restart of [1, 2]) {
    const again = await start(dbPath, feedFile);
    const poll = await again.pipeline.pollOnce('f');
    t.match(
      poll,
      { status: 'duplicate', stored: 0, entities: 1, error: null },
      `restart ${restart}: counted as a duplicate`,
    );
    t.equal(again.pipeline.state.vehicles('bus').length, 1, 'the live state holds the snapshot all the same');
    t.match(again.pipeline.state.feed('f'), { last_status: 'duplicate', failures: 0, freshness: 'fresh' });
    t.same(
      [
        await count(again.db, 'SELECT count(*) AS n FROM vehicle_positions'),
        await count(again.db, 'SELECT count(*) AS n FROM feed_snapshots'),
        await count(again.db, 'SELECT count(*) AS n FROM feed_polls'),
      ],
      [1, 1, 1 + restart],
      'one row, one snapshot, every poll',
    );
    await again.close();
  }

  // in one process: A, then B, then A again (a feed served by two caches)
  const run = await start(dbPath, feedFile);
  writeFileSync(feedFile, vehicles(NOW_MS / 1000 - 5, 40.6));
  t.match(await run.pipeline.pollOnce('f'), { status: 'ok', stored: 1 }, 'a new snapshot is stored');
  writeFileSync(feedFile, bodyA);
  t.match(await run.pipeline.pollOnce('f'), { status: 'duplicate', stored: 0 });
  t.equal(run.pipeline.state.vehicles('bus')[0]!.lat, 40.5, 'live state follows the feed back to A');
  t.equal(await count(run.db, 'SELECT count(*) AS n FROM vehicle_positions'), 2);
  await run.close();
});

t.test(
  'a 2019 snapshot is rejected whole by default, and stored with its own service dates when allowed',
  async (t) => {
    const dir = t.testdir();
    const feedFile = join(dir, 'tu.pb');
    const headerS = Date.parse('2019-08-07T17:45:21Z') / 1000;
    writeFileSync(feedFile, tripUpdates(headerS));

    const strict = await start(join(dir, 'strict.duckdb'), feedFile);
    const rejected = await strict.pipeline.pollOnce('f');
    t.match(rejected, {
      status: 'rejected',
      stored: 0,
      rejected: { timestamp_too_old: 1 },
      header_timestamp_ms: headerS * 1000,
    });
    t.match(
      rejected.error,
      /header timestamp 2019-08-07T17:45:21Z is 2,(\d{3}) days old, beyond freshness\.max_age_days \(365\)/,
    );
    t.match(rejected.error, /feeds\[\]\.allow_old_snapshots/, 'names the setting that changes it');
    t.same(
      [
        await count(strict.db, 'SELECT count(*) AS n FROM arrivals'),
        await count(strict.db, 'SELECT count(*) AS n FROM trip_observations'),
      ],
      [0, 0],
    );
    t.equal(strict.pipeline.state.arrivals().length, 0);
    t.match(await strict.pipeline.pollOnce('f'), { status: 'rejected' }, 'not "unchanged": it keeps being reported');
    await strict.close();

    const allowed = await start(join(dir, 'allowed.duckdb'), feedFile, { allow_old_snapshots: true });
    t.match(await allowed.pipeline.pollOnce('f'), { status: 'ok', stored: 2, rejected: {} });
    t.same(
      await allowed.db.json(`SELECT strftime(service_date, '%Y-%m-%d') AS day FROM trip_observations`),
      [{ day: '2019-08-07' }],
      "the service date is the snapshot's, not today",
    );
    t.same(await allowed.db.json(`SELECT strftime(service_date, '%Y-%m-%d') AS day, predicted_at FROM arrivals`), [
      { day: '2019-08-07', predicted_at: '2019-08-07 17:47:21+00' },
    ]);
    await allowed.close();
  },
);

t.test('a header three years ahead: rejected whole, the feed is not ok and the reason names the setting', async (t) => {
  const dir = t.testdir();
  const feedFile = join(dir, 'vp.pb');
  writeFileSync(feedFile, vehicles(NOW_MS / 1000 + 3 * 365 * 86_400));
  const run = await start(join(dir, 't.duckdb'), feedFile);
  t.teardown(() => run.close());
  const poll = await run.pipeline.pollOnce('f');
  t.match(poll, { status: 'rejected', stored: 0, rejected: { timestamp_future: 1 } });
  t.match(poll.error, /is 94,608,000 s ahead of this server's clock, beyond freshness\.max_future_s \(300\)/);
  const health = run.pipeline.state.feed('f')!;
  t.match(health, { last_status: 'rejected', failures: 1, header_timestamp_ms: null });
  t.not(health.freshness, 'fresh', 'a future header never makes a feed fresh');
  const verdict = classifyFeed(
    { health, interval_s: 15, consecutive_failures: 1, nowMs: NOW_MS, sinceMs: NOW_MS },
    testConfig().status,
  );
  t.not(verdict.state, 'operational');
  t.match(verdict.reason, /freshness\.max_future_s/);
});

t.test('a snapshot whose every entity is rejected is not ok', async (t) => {
  const dir = t.testdir();
  const feedFile = join(dir, 'vp.pb');
  writeFileSync(feedFile, vehicles(NOW_MS / 1000, 123));
  const run = await start(join(dir, 't.duckdb'), feedFile);
  t.teardown(() => run.close());
  t.match(await run.pipeline.pollOnce('f'), {
    status: 'rejected',
    stored: 0,
    rejected: { lat_lon_out_of_range: 1 },
    error: 'every entity rejected (lat_lon_out_of_range 1)',
  });
});

t.test("BART's 2019 capture: rejected whole today, stored on its own service date when allowed", async (t) => {
  if (!hasRealFixtures()) {
    t.skip(`${FIXTURES_REAL} is absent`, () => {});
    return;
  }
  const db = await Db.open(join(t.testdir(), 'bart.duckdb'));
  t.teardown(() => db.close());
  await importGtfs(db, 'bart', join(FIXTURES_REAL, 'bart', 'bart-rt.zip'));
  const bart = await loadScheduleIndex(db, 'bart');
  const url = pathToFileURL(join(FIXTURES_REAL, 'bart', 'bart-trip-updates.pb')).href;
  const poll = async (allow: boolean) => {
    const pipeline = createPipeline({
      config: testConfig({
        feeds: [{ id: allow ? 'bart-archive' : 'bart-tu', kind: 'gtfs-rt', url, allow_old_snapshots: allow }],
      }),
      bus: new InMemoryEventBus(),
      history: createHistoryWriter(db),
      scheduleFor: () => bart,
      now: () => NOW_MS,
      log: silentLogger,
    });
    const result = await pipeline.pollOnce(allow ? 'bart-archive' : 'bart-tu');
    await pipeline.stop();
    return result;
  };
  t.match(await poll(false), { status: 'rejected', trip_updates: 91, stored: 0, rejected: { timestamp_too_old: 91 } });
  t.match(await poll(true), { status: 'ok', rejected: {}, matching: { trips: 91, matched: 65 } });
  t.same(
    await db.json(
      `SELECT feed_id, strftime(service_date, '%Y-%m-%d') AS day, count(*) AS n FROM trip_observations GROUP BY ALL`,
    ),
    [{ feed_id: 'bart-archive', day: '2019-08-07', n: '91' }],
    '91 observations, none dated today',
  );
});
