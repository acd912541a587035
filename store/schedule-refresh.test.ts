import { createHash } from 'node:crypto';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { FIXTURES_REAL, hasRealFixtures } from '../test/support/pipeline-fakes.ts';
import { gtfsDate, writeSmallGtfsZip } from '../test/support/small-gtfs.ts';
import { Db } from './db.ts';
import { addDays, wallClock } from '../core/dates.ts';
import { importScheduleVersion, refreshSchedule, startScheduleRefresh } from './schedule-refresh.ts';
import { lastCheck, listScheduleVersions } from './schedule-versions.ts';

const TZ = 'America/Chicago';
const today = (): string => wallClock(new Date(), TZ).date;

async function setup(t: Test) {
  const dir = mkdtempSync(join(tmpdir(), 'schedule-refresh-'));
  const db = await Db.open(':memory:');
  t.teardown(async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const range = { start: gtfsDate(-30), end: gtfsDate(60) };
  return { dir, db, range };
}

async function dayVersions(db: Db, id: string): Promise<Map<string, { version: number | null; trips: number }>> {
  const rows = await db.all<{ d: string; v: number | null; trips: number }>(
    `SELECT strftime(service_date, '%Y-%m-%d') AS d, version_id AS v, trips FROM schedule_days WHERE schedule_id ` +
      `= $id ORDER BY 1`,
    { id },
  );
  return new Map(rows.map((r) => [r.d, { version: r.v === null ? null : Number(r.v), trips: Number(r.trips) }]));
}

t.test('each import is a version; an unchanged copy imports nothing; past days keep their version', async (t) => {
  const { dir, db, range } = await setup(t);
  const zip = writeSmallGtfsZip(join(dir, 'feed.zip'), { trips: 3, ...range });
  const first = await importScheduleVersion(db, 'small', zip, { timezone: TZ, horizonDays: 3 });
  t.equal(first.version.version_id, 1);
  t.equal(first.version.trips, 6);
  t.equal(
    first.version.service_start_date,
    `${range.start.slice(0, 4)}-${range.start.slice(4, 6)}-${range.start.slice(6)}`,
  );
  t.equal(first.version.feed_version, 'v1');
  t.equal(first.version.sha256, createHash('sha256').update(readFileSync(zip)).digest('hex'));
  t.same(
    first.expanded,
    { from: addDays(today(), -1), to: addDays(today(), 3) },
    'a first import also expands yesterday',
  );
  let days = await dayVersions(db, 'small');
  t.same(days.get(today()), { version: 1, trips: 6 });

  const unchanged = await refreshSchedule(db, { id: 'small', source: zip }, { timezone: TZ, horizonDays: 3 });
  t.equal(unchanged.outcome, 'unchanged');
  t.equal(unchanged.imported, null);
  t.equal((await listScheduleVersions(db, 'small')).length, 1, 'no new version for the same bytes');
  t.match(await lastCheck(db, 'small'), { outcome: 'unchanged', consecutive_failures: 0 });

  writeSmallGtfsZip(zip, { trips: 5, ...range, feedVersion: 'v2' });
  const changed = await refreshSchedule(
    db,
    { id: 'small', source: zip },
    { timezone: TZ, horizonDays: 3, loadIndex: true },
  );
  t.equal(changed.outcome, 'imported');
  t.equal(changed.version?.version_id, 2);
  t.same(changed.imported?.expanded, { from: today(), to: addDays(today(), 3) }, 'today to the horizon re-expanded');
  t.equal(changed.imported?.index?.trips().length, 10, 'the new index was read with the commit');
  days = await dayVersions(db, 'small');
  t.same(days.get(addDays(today(), -1)), { version: 1, trips: 6 }, 'yesterday keeps the version it was computed with');
  t.same(days.get(today()), { version: 2, trips: 10 });
  t.same(days.get(addDays(today(), 3)), { version: 2, trips: 10 });
  const [row] = await db.all<{ n: number }>(
    `SELECT CAST(count(*) AS INTEGER) AS n FROM scheduled_trips WHERE schedule_id = 'small' AND service_date = ` +
      `CAST($d AS DATE)`,
    { d: today() },
  );
  t.equal(row?.n, 10);
});

t.test('a failing import leaves the running version in place and is recorded', async (t) => {
  const { dir, db, range } = await setup(t);
  const zip = writeSmallGtfsZip(join(dir, 'feed.zip'), { trips: 2, ...range });
  await importScheduleVersion(db, 'small', zip, { timezone: TZ });
  const broken = join(dir, 'broken.zip');
  if (hasRealFixtures()) copyFileSync(join(FIXTURES_REAL, 'bad', 'corrupted-gtfs.zip'), broken);
  else writeSmallGtfsZip(broken, { trips: 0, ...range });
  const failed = await refreshSchedule(db, { id: 'small', source: broken }, { timezone: TZ });
  t.equal(failed.outcome, 'failed');
  t.ok(failed.error && failed.error.length > 0, `error: ${failed.error}`);
  t.equal(failed.version?.version_id, 1, 'version 1 still serves');
  t.equal((await listScheduleVersions(db, 'small')).length, 1);
  const [row] = await db.all<{ n: number }>(
    `SELECT CAST(count(*) AS INTEGER) AS n FROM gtfs_trips WHERE schedule_id = 'small'`,
  );
  t.equal(row?.n, 4, 'the old rows are untouched');
  t.match(await lastCheck(db, 'small'), { outcome: 'failed', consecutive_failures: 1, last_error: failed.error });
  await refreshSchedule(db, { id: 'small', source: broken }, { timezone: TZ });
  t.match(await lastCheck(db, 'small'), { consecutive_failures: 2 });
  const back = await refreshSchedule(db, { id: 'small', source: zip }, { timezone: TZ });
  t.equal(back.outcome, 'unchanged', 'the good copy again: nothing to import');
  t.match(await lastCheck(db, 'small'), { outcome: 'unchanged', consecutive_failures: 0, last_error: failed.error });
});

t.test('a feed with no trips is refused before it replaces a working one', async (t) => {
  const { dir, db, range } = await setup(t);
  const zip = writeSmallGtfsZip(join(dir, 'feed.zip'), { trips: 2, ...range });
  await importScheduleVersion(db, 'small', zip, { timezone: TZ });
  writeSmallGtfsZip(zip, { trips: 0, ...range });
  const r = await refreshSchedule(db, { id: 'small', source: zip }, { timezone: TZ });
  t.equal(r.outcome, 'failed');
  t.match(r.error, /no usable rows in trips\.txt, stop_times\.txt/);
  t.equal((await listScheduleVersions(db, 'small')).length, 1);
});

t.test("http sources: conditional GET with the last copy's validators; a 304 costs nothing", async (t) => {
  const { dir, db, range } = await setup(t);
  let body = readFileSync(writeSmallGtfsZip(join(dir, 'a.zip'), { trips: 2, ...range }));
  const seen: Array<string | undefined> = [];
  const server: Server = createServer((req, res) => {
    seen.push(req.headers['if-none-match']);
    const etag = `"${createHash('sha256').update(body).digest('hex').slice(0, 16)}"`;
    if (req.headers['if-none-match'] === etag) {
      res.writeHead(304).end();
      return;
    }
    res.writeHead(200, { etag, 'content-type': 'application/zip' }).end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/gtfs.zip`;
  const schedule = { id: 'web', source: url };
  t.equal((await refreshSchedule(db, schedule, { timezone: TZ })).outcome, 'imported', 'never imported: imported');
  const second = await refreshSchedule(db, schedule, { timezone: TZ });
  t.equal(second.outcome, 'not_modified');
  t.ok(seen[1]?.startsWith('"'), 'the ETag was sent back');
  body = readFileSync(writeSmallGtfsZip(join(dir, 'b.zip'), { trips: 4, ...range }));
  t.equal((await refreshSchedule(db, schedule, { timezone: TZ })).outcome, 'imported');
  t.equal((await listScheduleVersions(db, 'web')).length, 2);
  t.equal(
    (await refreshSchedule(db, schedule, { timezone: TZ, force: true })).outcome,
    'imported',
    'force imports the same copy',
  );
  t.equal(seen.at(-1), undefined, 'force sends no validators');
});

t.test('the job: refreshSchedule swaps the index in, joins a running refresh, reports health', async (t) => {
  const { dir, db, range } = await setup(t);
  const zip = writeSmallGtfsZip(join(dir, 'feed.zip'), { trips: 2, ...range });
  await importScheduleVersion(db, 'small', zip, { timezone: TZ });
  const swaps: Array<[string, number, number]> = [];
  const job = await startScheduleRefresh(db, {
    schedules: [{ id: 'small', source: zip, refresh_cron: '0 0 1 1 *' }],
    timezone: TZ,
    horizonDays: 2,
    onSwap: (id, index, version) => {
      swaps.push([id, index.trips().length, version.version_id]);
    },
  });
  t.teardown(() => job.stop());
  t.match(job.health(), [{ schedule_id: 'small', version: { version_id: 1 }, last_check: { outcome: 'imported' } }]);
  writeSmallGtfsZip(zip, { trips: 3, ...range });
  const [a, b] = await Promise.all([job.refreshSchedule('small'), job.refreshSchedule('small')]);
  t.equal(a, b, 'a second call joins the running refresh');
  t.same(swaps, [['small', 6, 2]]);
  t.match(job.health(), [{ version: { version_id: 2, trips: 6 }, last_check: { outcome: 'imported' } }]);
  await t.rejects(job.refreshSchedule('nope'), /not configured/);
  writeSmallGtfsZip(zip, { trips: 4, ...range });
  await importScheduleVersion(db, 'small', zip, { timezone: TZ });
  await job.scheduleImported('small');
  t.same(swaps.at(-1), ['small', 8, 3], 'a version imported through import-gtfs is swapped in too');
  t.match(job.health(), [{ version: { version_id: 3 } }]);
  const results = await job.update([{ id: 'other', source: zip, refresh_cron: '0 0 1 1 *' }]);
  t.match(results, [{ schedule_id: 'other', outcome: 'imported' }], 'an added schedule is imported at once');
  t.same(
    job.health().map((h) => h.schedule_id),
    ['other'],
    'a removed one is no longer refreshed',
  );
});
