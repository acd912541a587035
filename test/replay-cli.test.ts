// `transit-api replay` as operators run it (the CLI from the sources, a config file, a database
// file): Caltrain's captured trip updates replayed, reliability for 2023-11-07 counting the
// schedule's 104 trips, and the same archive again storing nothing. Usage mistakes in process.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import t from 'tap';
import { runCommand } from '../cli/command.ts';
import { UsageError } from '../core/usage-error.ts';
import { replayCommand } from '../cli/commands/replay.ts';
import { FIXTURES_REAL, hasRealFixtures } from './support/pipeline-fakes.ts';
import { Db } from '../store/db.ts';
import { childEnv, cliArgv } from './support/cli.ts';

t.test('usage mistakes are refused before anything is opened', async (t) => {
  const dir = t.testdir();
  const config = join(dir, 'config.json');
  writeFileSync(
    config,
    JSON.stringify({
      db_path: join(dir, 'never.duckdb'),
      feeds: [
        { id: 'notices', kind: 'alerts-json', url: 'file:///nowhere.json' },
        { id: 'tu', kind: 'gtfs-rt', url: 'file:///nowhere.pb' },
      ],
    }),
  );
  await t.rejects(
    runCommand(replayCommand, ['x.pb']),
    new UsageError('replay needs --feed <id>: the feed the snapshots belong to'),
  );
  await t.rejects(
    runCommand(replayCommand, ['--feed', 'tu']),
    new UsageError('replay needs at least one snapshot file or folder after --feed tu'),
  );
  await t.rejects(
    runCommand(replayCommand, ['x.pb', '--feed', 'tu', 'y.pb']),
    new UsageError('x.pb: name its feed first (--feed <id> <files>…)'),
  );
  await t.rejects(
    runCommand(replayCommand, ['--feed', 'tu', 'x.pb', '--feed', 'tu', 'y.pb']),
    new UsageError('--feed tu is given twice: name each feed once, with all its files'),
  );
  await t.rejects(
    runCommand(replayCommand, ['--feed', 'nope', 'x.pb', '--config', config]),
    new UsageError('unknown feed "nope"; configured: notices, tu'),
  );
  await t.rejects(
    runCommand(replayCommand, ['--feed', 'notices', 'x.pb', '--config', config]),
    new UsageError('replay reads GTFS-RT protobuf files; feed notices is alerts-json'),
  );
  await t.rejects(
    runCommand(replayCommand, ['--feed', 'tu', join(dir, 'missing'), '--config', config]),
    new UsageError(`no such file or folder: ${join(dir, 'missing')}`),
  );
});

t.test('Caltrain replayed: stored once, with reliability for its day', async (t) => {
  if (!hasRealFixtures()) {
    t.skip(`${FIXTURES_REAL} is absent`, () => {});
    return;
  }
  const dir = t.testdir();
  const dbPath = join(dir, 'transit.duckdb');
  const config = join(dir, 'config.json');
  writeFileSync(
    config,
    JSON.stringify({
      db_path: dbPath,
      schedules: [{ id: 'ct', source: join(FIXTURES_REAL, 'caltrain', 'ct.zip') }],
      // the live URL is never fetched by a replay
      feeds: [{ id: 'ct-tu', kind: 'gtfs-rt', url: pathToFileURL(join(dir, 'live.pb')).href, schedule_id: 'ct' }],
    }),
  );
  const replay = () => {
    const r = spawnSync(
      process.execPath,
      cliArgv(
        'replay',
        '--feed',
        'ct-tu',
        join(FIXTURES_REAL, 'caltrain', 'ct-trip-updates.pb'),
        '--json',
        '--config',
        config,
        '--log-level',
        'silent',
      ),
      { encoding: 'utf8', env: childEnv(), timeout: 120_000 },
    );
    t.equal(r.status, 0, r.stderr);
    return JSON.parse(r.stdout) as Record<string, any>;
  };

  const first = replay();
  t.match(
    first,
    {
      feed_id: 'ct-tu',
      files: 1,
      snapshots: 1,
      outcomes: { ok: 1 },
      rejected: {},
      matching: { trips: 19, matched: 19 },
      first_header_ms: Date.parse('2023-11-08T01:05:34Z'),
      reliability: { schedule_id: 'ct', days: ['2023-11-07'], scheduled_trips: 104, finalized: ['2023-11-07'] },
    },
    'an old snapshot is stored in a replay, dated by its own header',
  );
  t.ok(first.rows_stored > 0 && first.snapshots_per_s > 0 && first.rows_per_s > 0);

  const again = replay();
  t.match(again, { snapshots: 1, outcomes: { duplicate: 1 }, rows_stored: 0 }, 'the same archive again stores nothing');

  const db = await Db.open(dbPath);
  t.teardown(() => db.close());
  const [day] = await db.all<{ scheduled: bigint; delivered: bigint }>(
    `SELECT sum(scheduled) AS scheduled, sum(delivered) AS delivered FROM reliability_days WHERE service_date = DATE '2023-11-07'`,
  );
  t.equal(Number(day!.scheduled), 104, "the schedule's 104 trips of 2023-11-07 are counted");
  t.ok(Number(day!.delivered) > 0);
  t.same(
    await db.json(
      `SELECT strftime(service_date, '%Y-%m-%d') AS day, count(*) AS n FROM trip_observations GROUP BY ALL`,
    ),
    [{ day: '2023-11-07', n: '19' }],
  );
});

t.test("an agency's two feeds replayed together: one summary per feed, stop events written once", async (t) => {
  if (!hasRealFixtures()) {
    t.pass(`skipped: ${FIXTURES_REAL} is absent`);
    return;
  }
  const dir = t.testdir();
  const dbPath = join(dir, 'transit.duckdb');
  const config = join(dir, 'config.json');
  const feed = (id: string) => ({
    id,
    kind: 'gtfs-rt',
    url: pathToFileURL(join(dir, 'live.pb')).href,
    schedule_id: 'ct',
  });
  writeFileSync(
    config,
    JSON.stringify({
      db_path: dbPath,
      schedules: [{ id: 'ct', source: join(FIXTURES_REAL, 'caltrain', 'ct.zip') }],
      feeds: [feed('ct-vp'), feed('ct-tu')],
    }),
  );
  const replay = () => {
    const r = spawnSync(
      process.execPath,
      cliArgv(
        'replay',
        '--feed',
        'ct-vp',
        join(FIXTURES_REAL, 'caltrain', 'ct-vehicle-positions.pb'),
        '--feed',
        'ct-tu',
        join(FIXTURES_REAL, 'caltrain', 'ct-trip-updates.pb'),
        '--json',
        '--config',
        config,
        '--log-level',
        'silent',
      ),
      { encoding: 'utf8', env: childEnv(), timeout: 120_000 },
    );
    t.equal(r.status, 0, r.stderr);
    return r.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, any>);
  };
  const first = replay();
  t.match(first, [
    { feed_id: 'ct-vp', snapshots: 1, outcomes: { ok: 1 }, matching: { trips: 14, matched: 14 } },
    { feed_id: 'ct-tu', snapshots: 1, outcomes: { ok: 1 }, matching: { trips: 19, matched: 19 } },
  ]);
  const written = first.reduce((n, s) => n + s.stop_events.written, 0);
  t.ok(written > 0, `${written} stop events: the stops the feeds gave times for, closed at the archive's end`);
  const again = replay();
  t.same(
    again.map((s) => s.stop_events.written),
    [0, 0],
    'the same archives again write no stop event twice',
  );
  const db = await Db.open(dbPath);
  t.teardown(() => db.close());
  t.same(await db.json('SELECT count(*) AS n FROM stop_events'), [{ n: String(written) }]);
});
