import t from 'tap';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Db } from './db.ts';
import { importGtfs, type ImportSummary } from './gtfs-import.ts';
import { feedZip, SMALL_FEED, writeFeedFolder } from '../test/support/gtfs-fixture.ts';
import { FIXTURES_REAL, noRealFixtures } from '../test/support/fixtures-real.ts';

const fixtures = FIXTURES_REAL;
const noFixtures = noRealFixtures();
const dir = mkdtempSync(join(tmpdir(), 'gtfs-import-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

async function memoryDb(t: { teardown(fn: () => unknown): void }): Promise<Db> {
  const db = await Db.open(':memory:');
  t.teardown(() => db.close());
  return db;
}

async function count(db: Db, sql: string): Promise<number> {
  const [row] = await db.all<{ n: bigint }>(sql);
  return Number(row!.n);
}

async function tableCounts(db: Db, scheduleId: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const table of [
    'gtfs_agency',
    'gtfs_routes',
    'gtfs_stops',
    'gtfs_trips',
    'gtfs_stop_times',
    'gtfs_calendar',
    'gtfs_calendar_dates',
    'gtfs_frequencies',
    'gtfs_shapes',
  ]) {
    out[table] = await count(db, `SELECT count(*) AS n FROM ${table} WHERE schedule_id = '${scheduleId}'`);
  }
  return out;
}

async function modes(db: Db, scheduleId: string): Promise<Record<string, number>> {
  const rows = await db.all<{ k: string; n: bigint }>(
    `SELECT route_type || ':' || coalesce(mode, 'null') AS k, count(*) AS n FROM gtfs_routes
     WHERE schedule_id = '${scheduleId}' GROUP BY 1 ORDER BY 1`,
  );
  return Object.fromEntries(rows.map((r) => [r.k, Number(r.n)]));
}

t.test(
  'Caltrain ct.zip: rail and bus, exact counts, junk after the archive tolerated',
  { skip: noFixtures },
  async (t) => {
    const db = await memoryDb(t);
    const steps = new Set<string>();
    const summary = await importGtfs(db, 'ct', join(fixtures, 'caltrain', 'ct.zip'), (p) => steps.add(p.step));
    t.equal(summary.timezone, 'America/Los_Angeles');
    t.equal(summary.feed_version, '20230922');
    t.equal(summary.files.length, 18);
    t.same(summary.warnings, []);
    t.equal(summary.tables.trips?.rows, 176);
    // the fixtures README says 3,497; the file holds 3,498 data rows (its last line has no newline)
    t.equal(summary.tables.stop_times?.rows, 3498);
    t.equal(summary.tables.frequencies, undefined, 'absent optional file is not loaded');
    t.ok(summary.tables.shapes!.rows > 0);
    t.ok(
      steps.has('extract') && steps.has('read stop_times.txt') && steps.has('store stop_times'),
      'progress reported',
    );
    t.same(await modes(db, 'ct'), { '2:rail': 8, '3:bus': 1 });
    const counts = await tableCounts(db, 'ct');
    t.equal(counts.gtfs_trips, 176);
    t.equal(counts.gtfs_stop_times, 3498);
    const [latest] = await db.all<{ a: number; d: number }>(
      `SELECT max(arrival_s) AS a, max(departure_s) AS d FROM gtfs_stop_times WHERE schedule_id = 'ct'`,
    );
    t.ok(latest!.a > 86_400, 'times past midnight stay on their service day');
    const [sched] = await db.all<{ files: string[]; agency_timezone: string }>(
      `SELECT * FROM schedules WHERE schedule_id = 'ct'`,
    );
    t.ok(sched!.files.includes('fare_rules.txt'), 'file list records every file');

    // re-import replaces: same counts, not doubled
    await importGtfs(db, 'ct', join(fixtures, 'caltrain', 'ct.zip'));
    t.same(await tableCounts(db, 'ct'), counts);
    t.equal(await count(db, `SELECT count(*) AS n FROM schedules`), 1);
  },
);

t.test('BART and Sound Transit', { skip: noFixtures }, async (t) => {
  const db = await memoryDb(t);
  const bart = await importGtfs(db, 'bart', join(fixtures, 'bart', 'bart-rt.zip'));
  t.equal(bart.tables.trips?.rows, 2641);
  t.equal(bart.tables.frequencies?.rows, 0, 'header-only file loads as empty');
  t.equal(bart.feed_version, '49');
  t.same(await modes(db, 'bart'), { '1:rail': 8 });

  const st = await importGtfs(db, 'st', join(fixtures, 'sound-transit', 'st.zip'));
  t.equal(st.tables.trips?.rows, 734);
  t.equal(st.feed_version, null, 'no feed_info.txt');
  t.same(await modes(db, 'st'), { '0:streetcar': 3, '2:rail': 2 });
  t.equal((await tableCounts(db, 'bart')).gtfs_trips, 2641, 'schedules live side by side');
});

t.test('a corrupt zip is refused and the previous schedule stays intact', { skip: noFixtures }, async (t) => {
  const db = await memoryDb(t);
  await importGtfs(db, 'ct', join(fixtures, 'caltrain', 'ct.zip'));
  const before = await tableCounts(db, 'ct');
  await t.rejects(importGtfs(db, 'ct', join(fixtures, 'bad', 'corrupted-gtfs.zip')), {
    name: 'ZipError',
    message: /corrupted-gtfs\.zip is not a ZIP archive or is truncated/,
  });
  t.same(await tableCounts(db, 'ct'), before);
  t.equal(await count(db, `SELECT count(*) AS n FROM schedules WHERE schedule_id = 'ct'`), 1);
});

t.test('nested folders: found, and a nested feed with files missing is explained', { skip: noFixtures }, async (t) => {
  const db = await memoryDb(t);
  // the real capture holds only agency.txt under schedule/: the message says where it looked
  await t.rejects(importGtfs(db, 'nested', join(fixtures, 'bad', 'nested-folder-gtfs.zip')), {
    name: 'GtfsSourceError',
    message: new RegExp(
      String.raw`missing required file\(s\): routes\.txt, trips\.txt, stop_times\.txt, stops\.txt, calendar\.tx` +
        String.raw`t or calendar_dates\.txt \(looked in schedule\/ inside nested-folder-gtfs\.zip; found: agency` +
        String.raw`\.txt\)`,
    ),
  });

  // a complete feed in a nested folder, with macOS litter beside it, imports
  const zipPath = join(dir, 'nested-ok.zip');
  writeFileSync(zipPath, Buffer.concat([feedZip({ ...SMALL_FEED, '._stops.txt': 'junk' }, 'my feed/')]));
  const summary = await importGtfs(db, 'nested', zipPath);
  t.equal(summary.location, 'my feed/ inside nested-ok.zip');
  t.equal(summary.tables.trips?.rows, 4);
});

t.test('real-world CSV quirks: BOM, CRLF, quotes, extra and missing columns, bad values', async (t) => {
  const db = await memoryDb(t);
  const summary = await importGtfs(db, 'small', writeFeedFolder(join(dir, 'small')));
  t.equal(summary.timezone, 'Europe/Paris');
  t.same(summary.files, [
    'README.txt',
    'agency.txt',
    'calendar.txt',
    'calendar_dates.txt',
    'routes.txt',
    'stop_times.txt',
    'stops.txt',
    'trips.txt',
  ]);
  t.same(summary.tables.routes, { rows: 9, skipped: 1, ms: summary.tables.routes!.ms });
  t.same(summary.warnings, [
    'routes.txt: 1 row(s) skipped: route_id, route_type missing or malformed',
    'stop_times.txt: 1 rows with an arrival_time or departure_time that is not H:MM:SS (kept, time stored as NULL)',
  ]);
  t.same(await modes(db, 'small'), {
    '0:streetcar': 1,
    '1:rail': 1,
    '1100:null': 1,
    '109:rail': 1,
    '2:rail': 1,
    '204:bus': 1,
    '3:bus': 1,
    '4:null': 1,
    '900:streetcar': 1,
  });
  const [agency] = await db.all(`SELECT agency_name FROM gtfs_agency`);
  t.same(agency, { agency_name: 'Metro, Inc.' });
  const [tram] = await db.all(`SELECT route_long_name, route_color FROM gtfs_routes WHERE route_id = 'TRAM'`);
  t.same(tram, { route_long_name: 'Tram "One"', route_color: 'FF0000' });
  const stops = await db.all(
    `SELECT stop_id, stop_name, location_type, parent_station FROM gtfs_stops ORDER BY stop_id`,
  );
  t.same(stops, [
    { stop_id: 'P1', stop_name: 'Central platform 1', location_type: 0, parent_station: 'STA' },
    { stop_id: 'P2', stop_name: 'Second', location_type: null, parent_station: null },
    { stop_id: 'P3', stop_name: 'Third', location_type: null, parent_station: null },
    { stop_id: 'STA', stop_name: 'Central, Main Hall', location_type: 1, parent_station: null },
  ]);
  const times = await db.all(`SELECT trip_id, stop_sequence, arrival_s, departure_s FROM gtfs_stop_times
    ORDER BY trip_id, stop_sequence`);
  t.same(times, [
    { trip_id: 'T1', stop_sequence: 1, arrival_s: 28_800, departure_s: 28_830 },
    { trip_id: 'T1', stop_sequence: 2, arrival_s: 29_400, departure_s: 29_460 },
    { trip_id: 'T1', stop_sequence: 3, arrival_s: null, departure_s: null },
    { trip_id: 'T1', stop_sequence: 4, arrival_s: 30_600, departure_s: 30_600 },
    { trip_id: 'T2', stop_sequence: 1, arrival_s: 85_800, departure_s: 85_800 },
    { trip_id: 'T2', stop_sequence: 2, arrival_s: 90_605, departure_s: 90_605 },
    { trip_id: 'T3', stop_sequence: 1, arrival_s: null, departure_s: 25_500 },
  ]);
  const [trip] = await db.all(`SELECT direction_id, shape_id FROM gtfs_trips WHERE trip_id = 'T2'`);
  t.same(trip, { direction_id: 1, shape_id: null }, 'ragged row padded with NULLs');
  const [cal] = await db.json(
    `SELECT monday, saturday, start_date, end_date FROM gtfs_calendar WHERE service_id = 'WEEK'`,
  );
  t.same(cal, { monday: true, saturday: false, start_date: '2024-01-01', end_date: '2024-12-31' });
});

t.test('sources: zip path, folder with a nested feed, file:// URL, http:// URL', async (t) => {
  const db = await memoryDb(t);
  const zipPath = join(dir, 'feed.zip');
  writeFileSync(zipPath, feedZip());
  const viaFile = await importGtfs(db, 'a', pathToFileURL(zipPath).href);
  t.equal(viaFile.tables.trips?.rows, 4);

  const outer = join(dir, 'outer');
  writeFeedFolder(join(outer, 'gtfs'));
  writeFeedFolder(join(outer, '__MACOSX'), { 'stops.txt': 'junk' });
  const viaFolder = await importGtfs(db, 'b', outer);
  t.equal(viaFolder.location, `gtfs/ inside ${outer}`);

  const body = readFileSync(zipPath);
  const server = createServer((req, res) => {
    if (req.url === '/feed.zip') {
      res.writeHead(200, { 'content-length': body.length });
      res.end(body);
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const downloads: number[] = [];
  const viaHttp = await importGtfs(db, 'c', `${base}/feed.zip`, (p) => {
    if (p.step === 'download') downloads.push(p.done);
  });
  t.equal(viaHttp.tables.stop_times?.rows, 7);
  t.equal(downloads.at(-1), body.length, 'download progress reaches the full size');
  await t.rejects(importGtfs(db, 'd', `${base}/missing.zip`), /GTFS download failed: .*missing\.zip: HTTP 404/);
  await t.rejects(importGtfs(db, 'd', 'http://127.0.0.1:1/none.zip'), /GTFS download failed/);
  await t.rejects(importGtfs(db, 'd', join(dir, 'nope.zip')), /GTFS source not found/);
  t.equal(await count(db, `SELECT count(*) AS n FROM schedules WHERE schedule_id = 'd'`), 0);
});

t.test('broken feeds fail with a clear message and change nothing', async (t) => {
  const db = await memoryDb(t);
  await importGtfs(db, 'x', writeFeedFolder(join(dir, 'good')));
  const before = await tableCounts(db, 'x');
  const attempt = async (name: string, files: Record<string, string>, message: RegExp): Promise<void> => {
    const folder = writeFeedFolder(join(dir, name), files);
    await t.rejects(importGtfs(db, 'x', folder), message, name);
    t.same(await tableCounts(db, 'x'), before, `${name}: previous schedule intact`);
  };
  const without = (...names: string[]): Record<string, string> =>
    Object.fromEntries(Object.entries(SMALL_FEED).filter(([k]) => !names.includes(k)));

  await attempt('no-stops', without('stops.txt'), /missing required file\(s\): stops\.txt \(looked in/);
  await attempt('no-calendars', without('calendar.txt', 'calendar_dates.txt'), /calendar\.txt or calendar_dates\.txt/);
  await attempt('empty-trips', { ...SMALL_FEED, 'trips.txt': '' }, /trips\.txt is empty/);
  await attempt(
    'no-route-type',
    { ...SMALL_FEED, 'routes.txt': 'route_id,route_short_name\nR,1\n' },
    /routes\.txt lacks required column\(s\): route_type/,
  );
  await attempt(
    'bad-tz',
    { ...SMALL_FEED, 'agency.txt': 'agency_name,agency_timezone\nA,Mars/Olympus\n' },
    /"Mars\/Olympus" is not a known IANA time zone/,
  );
  await attempt('no-tz', { ...SMALL_FEED, 'agency.txt': 'agency_name,agency_timezone\nA,\n' }, /no agency_timezone/);
  await attempt('no-gtfs', { 'notes.txt': 'hello' }, /no GTFS files/);
  await t.rejects(importGtfs(db, '', join(dir, 'good')), /schedule id must not be empty/);

  const two = join(dir, 'two');
  writeFeedFolder(join(two, 'a'));
  writeFeedFolder(join(two, 'b'));
  await t.rejects(importGtfs(db, 'x', two), /several folders \(a, b\)/);
});

t.test('optional files: calendar_dates alone, unusable shapes and frequencies skipped with a warning', async (t) => {
  const db = await memoryDb(t);
  const files = Object.fromEntries(Object.entries(SMALL_FEED).filter(([k]) => k !== 'calendar.txt'));
  files['shapes.txt'] = 'shape_id,lat\nS,1\n';
  files['frequencies.txt'] = 'trip_id,start_time,end_time,headway_secs\nT1,"06:00:00,07:00:00,600\nT2,1,2,3\n';
  files['feed_info.txt'] = 'feed_publisher_name,feed_version\r\nMe,"2024-05"\r\n';
  const summary: ImportSummary = await importGtfs(db, 'o', writeFeedFolder(join(dir, 'optional'), files));
  t.equal(summary.tables.calendar, undefined);
  t.equal(summary.tables.calendar_dates?.rows, 3);
  t.equal(summary.tables.shapes, undefined);
  t.equal(summary.feed_version, '2024-05');
  t.same(
    summary.warnings.filter((w) => w.includes('file ignored')),
    [
      'frequencies.txt is not readable CSV: Invalid Input Error: Error when sniffing file "' +
        `${join(dir, 'optional', 'frequencies.txt')}".: It was not possible to automatically detect the CSV parsing ` +
        `dialect; file ignored`,
      'shapes.txt lacks required column(s): shape_pt_sequence, shape_pt_lat, shape_pt_lon; file ignored',
    ],
  );
});

t.test('concurrent imports into one database run one after the other', async (t) => {
  const db = await memoryDb(t);
  const folder = writeFeedFolder(join(dir, 'concurrent'));
  const results = await Promise.allSettled([
    importGtfs(db, 's', folder),
    importGtfs(db, 's', folder),
    importGtfs(db, 't', folder),
  ]);
  t.same(
    results.map((r) => r.status),
    ['fulfilled', 'fulfilled', 'fulfilled'],
  );
  t.equal((await tableCounts(db, 's')).gtfs_stop_times, 7);
});

t.test('Latin-1 files are read as Latin-1; unreadable CSV is named with its reason', async (t) => {
  const db = await memoryDb(t);
  const folder = writeFeedFolder(join(dir, 'latin1'));
  writeFileSync(
    join(folder, 'stops.txt'),
    Buffer.from('stop_id,stop_name\nP1,Caf\xe9 de la Gare\nP2,Z\xfcrich\n', 'latin1'),
  );
  writeFileSync(
    join(folder, 'feed_info.txt'),
    Buffer.from('feed_publisher_name,feed_version\nSoci\xe9t\xe9,v\xe9\n', 'latin1'),
  );
  const summary = await importGtfs(db, 'l', folder);
  t.ok(summary.warnings.includes('stops.txt is not UTF-8; read as Latin-1'));
  t.equal(summary.feed_version, 'vé');
  const names = await db.all<{ stop_name: string }>(`SELECT stop_name FROM gtfs_stops ORDER BY stop_id`);
  t.same(
    names.map((r) => r.stop_name),
    ['Café de la Gare', 'Zürich'],
  );

  writeFileSync(join(folder, 'trips.txt'), 'route_id,service_id,trip_id\nMETRO,"WEEK,T1\nMETRO,WEEK,T2\n');
  await t.rejects(
    importGtfs(db, 'l', folder),
    /^trips\.txt (is not readable CSV|could not be read): Invalid Input Error: .+: .+/,
  );
  t.equal((await tableCounts(db, 'l')).gtfs_stops, 2, 'previous import intact');
});

t.test('an import into a database file survives closing and reopening it', async (t) => {
  const path = join(dir, 'persist.duckdb');
  const db = await Db.open(path);
  await importGtfs(db, 'p', writeFeedFolder(join(dir, 'persist')));
  await db.close();
  const again = await Db.open(path);
  t.teardown(() => again.close());
  t.same(await tableCounts(again, 'p'), {
    gtfs_agency: 1,
    gtfs_routes: 9,
    gtfs_stops: 4,
    gtfs_trips: 4,
    gtfs_stop_times: 7,
    gtfs_calendar: 2,
    gtfs_calendar_dates: 3,
    gtfs_frequencies: 0,
    gtfs_shapes: 0,
  });
});
