// Exports select every dataset by service day, whatever the poll time: Caltrain's 2023 captures
// polled today by `ingest --once` (allow_old_snapshots: rows keep their own service dates) and
// exported for 2023-11-07 through the CLI, as the operator who found 0 vehicle positions there
// did. A day nothing was polled for gets no file at all.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import t from 'tap';
import { Db } from '../store/db.ts';
import { runCli } from './support/cli.ts';
import { FIXTURES_REAL, hasRealFixtures } from './support/pipeline-fakes.ts';

t.test('Caltrain polled years after its day: the export of 2023-11-07 holds its rows', async (t) => {
  if (!hasRealFixtures()) {
    t.skip(`${FIXTURES_REAL} is absent`, () => {});
    return;
  }
  const dir = t.testdir();
  const dbPath = join(dir, 'transit.duckdb');
  const exportsDir = join(dir, 'exports');
  const config = join(dir, 'config.json');
  const capture = (name: string) => pathToFileURL(join(FIXTURES_REAL, 'caltrain', name)).href;
  const feed = (id: string, name: string) => ({
    id,
    kind: 'gtfs-rt',
    url: capture(name),
    schedule_id: 'ct',
    allow_old_snapshots: true,
  });
  writeFileSync(
    config,
    JSON.stringify({
      db_path: dbPath,
      exports: { dir: exportsDir },
      schedules: [{ id: 'ct', source: join(FIXTURES_REAL, 'caltrain', 'ct.zip') }],
      feeds: [feed('ct-tu', 'ct-trip-updates.pb'), feed('ct-vp', 'ct-vehicle-positions.pb')],
    }),
  );
  const cli = async (...args: string[]) => {
    const r = await runCli([...args, '--config', config, '--log-level', 'silent'], { timeoutMs: 120_000 });
    t.equal(r.code, 0, `${args[0]}: ${r.stderr}`);
    return r.stdout;
  };
  await cli('import-gtfs', join(FIXTURES_REAL, 'caltrain', 'ct.zip'), '--id', 'ct');
  await cli('ingest', '--once');

  const db = await Db.open(dbPath);
  const [stored] = await db.all<{ positions: number; polled_today: boolean }>(
    `SELECT CAST(count(*) AS INTEGER) AS positions, bool_and(observed_at > TIMESTAMPTZ '2025-01-01') AS polled_today
     FROM vehicle_positions`,
  );
  await db.close();
  t.same(stored, { positions: 14, polled_today: true }, '14 positions, observed by a poll years after their day');

  const run = JSON.parse(
    await cli('export', '--from', '2023-11-07', '--dataset', 'realtime', '--format', 'parquet', '--json'),
  ) as { files: { id: string; outcome: string; manifest: { rows: number } | null }[] };
  t.same(
    run.files.map((f) => [f.id, f.outcome, f.manifest?.rows]).sort(),
    [
      ['realtime-2023-11-07-arrivals.parquet', 'ready', 233],
      ['realtime-2023-11-07-vehicle_positions.parquet', 'ready', 14],
    ],
    "the day's arrivals and vehicle positions, selected by service day",
  );

  // a day nothing was polled for, nor stored: no file, and the command still succeeds
  const idle = JSON.parse(await cli('export', '--from', '2023-11-01', '--dataset', 'realtime,alerts', '--json')) as {
    files: { outcome: string; reason: string }[];
  };
  t.ok(idle.files.length === 6 && idle.files.every((f) => f.outcome === 'no_data'), 'six files not written');
  t.match(idle.files[0]!.reason, /^no service data for service day 2023-11-01/);
  t.notOk(existsSync(join(exportsDir, 'alerts')), 'no alerts file for either day: 2023-11-07 was not asked');
  t.notOk(existsSync(join(exportsDir, 'realtime', 'realtime-2023-11-01-arrivals.parquet')));
});
