import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { parseConfig } from '../core/config.ts';
import type { Db } from '../store/db.ts';
import { PRIVATE_TABLE, scheduleSnapshot, writeSnapshot } from './analyst-snapshot.ts';
import { openTempDb, seedDay } from '../test/support/exports.ts';
import { logInto } from '../test/support/logs.ts';

const here = dirname(fileURLToPath(import.meta.url));

interface Counts {
  vehicle_positions: string;
  arrivals: string;
}
interface Report {
  tables: string[];
  info: { taken_at: string; source: string; tables: string[] };
  counts: Counts;
  examples: ({ rows: number } | { error: string })[];
  write: string;
}

/** A second process holding the snapshot open read-only; answers one JSON line per request. */
function openReader(t: Test, snapshot: string) {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(here, '..', 'test', 'support', 'snapshot-reader.ts'), snapshot, join(here, 'README.md')],
    {
      cwd: join(here, '..'),
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  const waiting: ((line: string) => void)[] = [];
  let buffered = '';
  child.stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    for (let nl = buffered.indexOf('\n'); nl !== -1; nl = buffered.indexOf('\n')) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      waiting.shift()?.(line);
    }
  });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  const next = () => new Promise<string>((resolve) => waiting.push(resolve));
  t.teardown(async () => {
    if (child.exitCode === null) child.kill();
    await exited;
  });
  return {
    report: next().then((line) => JSON.parse(line) as Report),
    async counts(): Promise<Counts> {
      const answer = next();
      child.stdin.write('counts\n');
      return JSON.parse(await answer) as Counts;
    },
    async close() {
      child.stdin.end('exit\n');
      await exited;
    },
  };
}

/** One vehicle position and one arrival per transaction: a consistent copy has as many of each. */
async function writePairs(db: Db, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    await db.transaction(async (c) => {
      await c.run(
        `INSERT INTO vehicle_positions (feed_id, vehicle_id, lat, lon, position_at, observed_at)
        VALUES ('live', 'v' || $i::VARCHAR, 1, 2, now(), now())`,
        [i],
      );
      await c.run(
        `INSERT INTO arrivals (feed_id, trip_id, station_id, stop_id, delay_state, trip_relationship, in_schedule,
          observed_at)
        VALUES ('live', 't' || $i::VARCHAR, 's', 's', 'unknown', 'scheduled', true, now())`,
        [i],
      );
    });
  }
}

const counted = async (db: Db) =>
  (
    await db.json<Counts>(`SELECT (SELECT count(*) FROM vehicle_positions) AS vehicle_positions,
  (SELECT count(*) FROM arrivals) AS arrivals`)
  )[0]!;

t.test('a second process reads the snapshot read-only while the service keeps writing', async (t) => {
  const { db, root } = await openTempDb(t.teardown);
  await seedDay(db);
  await db.run(`INSERT INTO api_keys VALUES ('k1', 'hash', 'tk_live_Ab', 'max', false, NULL, now(), NULL)`);
  const target = join(root, 'analyst', 'snapshot.duckdb');
  const [seeded] = await db.all<{ vp: number; arr: number }>(
    `SELECT (SELECT CAST(count(*) AS INTEGER) FROM vehicle_positions) AS vp,
            (SELECT CAST(count(*) AS INTEGER) FROM arrivals) AS arr`,
  );

  // the writer keeps going while the snapshot is taken
  const [, first] = await Promise.all([
    writePairs(db, 40),
    writeSnapshot(db, target, { now: () => new Date('2024-03-20T00:00:00Z') }),
  ]);
  t.equal(first.path, target);
  t.ok(first.bytes > 0 && existsSync(target));
  t.notOk(
    first.tables.some((table) => PRIVATE_TABLE.test(table.name)),
    'no credential or customer tables',
  );
  t.ok(first.tables.some((table) => table.name === 'alert_versions'));
  t.same(readdirSync(dirname(target)), ['snapshot.duckdb'], 'no temporary file or WAL beside it');

  const reader = openReader(t, target);
  const report = await reader.report;
  const inCopy = { vp: Number(report.counts.vehicle_positions), arr: Number(report.counts.arrivals) };
  t.comment(`the snapshot holds ${inCopy.vp - seeded!.vp} of the 40 pairs written meanwhile`);
  t.equal(
    inCopy.vp - seeded!.vp,
    inCopy.arr - seeded!.arr,
    'every table as of one instant: pairs written in one transaction stay pairs',
  );
  t.equal(
    first.tables.find((x) => x.name === 'vehicle_positions')?.rows,
    inCopy.vp,
    'the summary counts what was copied',
  );
  t.notOk(report.tables.includes('api_keys'));
  t.ok(report.tables.includes('snapshot_info') && report.tables.includes('trip_outcomes'));
  t.match(report.info, { source: db.path, taken_at: /^2024-03-20/ });
  t.same(report.examples.length, 3, 'the README has three example queries');
  for (const [i, result] of report.examples.entries()) {
    t.ok(
      'rows' in result && result.rows > 0,
      `README example ${i + 1} runs and returns rows: ${JSON.stringify(result)}`,
    );
  }
  t.match(report.write, /read-only/i, 'the snapshot cannot be written through');

  // the service keeps writing, and the next snapshot replaces the file under the open reader
  await writePairs(db, 10);
  const second = await writeSnapshot(db, target);
  t.same(await reader.counts(), report.counts, 'an open reader keeps its consistent copy');
  await reader.close();
  const later = await openReader(t, target).report;
  t.same(later.counts, await counted(db), 'a new reader sees the new snapshot');
  t.equal(second.tables.find((x) => x.name === 'arrivals')?.rows, Number(later.counts.arrivals));
});

t.test('snapshot refusals and the scheduled job', async (t) => {
  const { db, root } = await openTempDb(t.teardown);
  await t.rejects(writeSnapshot(db, db.path), /must differ/);
  const blocked = join(root, 'transit.duckdb', 'snapshot.duckdb');
  await t.rejects(writeSnapshot(db, blocked), /EEXIST|ENOTDIR/);

  const path = join(root, 'snap', 'every-minute.duckdb');
  const seen: string[] = [];
  const job = await scheduleSnapshot(db, parseConfig({ snapshot: { path, cron: '* * * * *' } }), {
    runAtStart: true,
    onSnapshot: (s) => seen.push(s.path),
  });
  t.teardown(() => job.stop());
  t.same(seen, [path], 'written at start');
  const [a, b] = await Promise.all([job.runOnce(), job.runOnce()]);
  t.equal(a, b, 'runs never overlap: a second request joins the running one');
  t.same(readdirSync(dirname(path)), ['every-minute.duckdb']);
  await job.stop();
  t.throws(
    () => parseConfig({ snapshot: { path, cron: 'often' } }),
    /snapshot\.cron: not a valid cron/,
    'refused by the config schema',
  );
  const config = parseConfig({ snapshot: { path, cron: '* * * * *' } });
  await t.rejects(
    scheduleSnapshot(db, { ...config, snapshot: { ...config.snapshot, cron: 'often' } }),
    /not a valid cron/,
  );

  const off = join(root, 'snap', 'disabled.duckdb');
  const disabled = await scheduleSnapshot(db, parseConfig({ snapshot: { enabled: false, path: off } }), {
    runAtStart: true,
  });
  t.notOk(existsSync(off), 'a disabled snapshot job writes nothing on its own');
  t.equal((await disabled.runOnce()).path, off, 'but runs on demand');
  await disabled.stop();

  const failures: string[] = [];
  const broken = await scheduleSnapshot(db, parseConfig({ snapshot: { path: blocked, cron: '* * * * *' } }), {
    runAtStart: true,
    log: logInto((message) => failures.push(message)),
  });
  await broken.stop();
  t.same(failures, ['first snapshot failed'], 'a failing snapshot is logged, not thrown');
});
