import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { epochDay, weekdayOfEpochDay } from '../core/dates.ts';
import { Db } from './db.ts';
import { importGtfs } from './gtfs-import.ts';
import { listSchedules, loadScheduleIndex, ScheduleNotFoundError } from './schedule-index.ts';
import { writeFeedFolder } from '../test/support/gtfs-fixture.ts';
import { FIXTURES_REAL, noRealFixtures } from '../test/support/fixtures-real.ts';

const fixtures = FIXTURES_REAL;
const dir = mkdtempSync(join(tmpdir(), 'schedule-index-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

t.test('dates', async (t) => {
  t.equal(epochDay('1970-01-01'), 0);
  t.equal(epochDay('2024-02-29'), 19_782);
  t.equal(epochDay('20240229'), 19_782);
  t.equal(epochDay('2023-02-29'), null, 'not a real date');
  t.equal(epochDay('2024-13-01'), null);
  t.equal(epochDay('yesterday'), null);
  t.equal(weekdayOfEpochDay(0), 4, '1970-01-01 was a Thursday');
  t.equal(weekdayOfEpochDay(epochDay('2023-11-07')!), 2, 'a Tuesday');
  t.equal(weekdayOfEpochDay(-1), 3);
});

t.test('Caltrain: 104 trips run on Tuesday 2023-11-07', { skip: noRealFixtures() }, async (t) => {
  const db = await Db.open(':memory:');
  t.teardown(() => db.close());
  await importGtfs(db, 'ct', join(fixtures, 'caltrain', 'ct.zip'));
  const index = await loadScheduleIndex(db, 'ct');
  const runningOn = (date: string): number =>
    index.trips().filter((trip) => index.runsOn(trip.service_id, date)).length;
  t.equal(index.trips().length, 176);
  t.equal(runningOn('2023-11-07'), 104);
  t.equal(runningOn('2023-11-23'), 32, 'Thanksgiving: weekday service removed, weekend service added');
  t.equal(runningOn('2023-11-24'), 40, 'the day after: a special service only');
  t.equal(runningOn('2023-10-07'), 0, 'a Saturday whose service is removed');
  t.equal(runningOn('2024-06-02'), 0, 'after the calendar ends');
  const times = index.stopTimes('501');
  t.ok(times.length > 10);
  t.same(
    times.map((s) => s.stop_sequence),
    [...times.map((s) => s.stop_sequence)].sort((a, b) => a - b),
  );
  t.same(times[0], { stop_sequence: 1, stop_id: '70271', arrival_s: 18_000, departure_s: 18_000 });
  t.equal(index.stop('70021')?.station_id, '22nd_street');
  t.equal(index.route('L5')?.mode, 'rail');
  t.equal(index.timezone, 'America/Los_Angeles');
});

t.test('the small feed: every lookup', async (t) => {
  const db = await Db.open(':memory:');
  t.teardown(() => db.close());
  await importGtfs(db, 'small', writeFeedFolder(join(dir, 'small')));
  const index = await loadScheduleIndex(db, 'small');
  t.equal(index.scheduleId, 'small');
  t.equal(index.timezone, 'Europe/Paris');
  t.same(index.trip('T2'), {
    schedule_id: 'small',
    trip_id: 'T2',
    route_id: 'METRO',
    service_id: 'WEEK',
    direction_id: 1,
    headsign: 'South',
  });
  t.equal(index.trip('nope'), undefined);
  t.same(index.route('TRAM'), {
    schedule_id: 'small',
    route_id: 'TRAM',
    route_type: 0,
    mode: 'streetcar',
    short_name: 'T1',
    long_name: 'Tram "One"',
    color: 'FF0000',
  });
  t.equal(index.route('FERRY')?.mode, null);
  t.equal(index.routes().length, 9);
  t.same(index.stop('P1'), { stop_id: 'P1', name: 'Central platform 1', lat: 48.851, lon: 2.351, station_id: 'STA' });
  t.equal(index.stop('P2')?.station_id, 'P2', 'a stop without parent is its own station');
  t.equal(index.stops().length, 4);
  t.same(
    index.stopTimes('T1').map((s) => [s.stop_sequence, s.stop_id, s.arrival_s, s.departure_s]),
    [
      [1, 'P1', 28_800, 28_830],
      [2, 'P2', 29_400, 29_460],
      [3, 'P3', null, null],
      [4, 'STA', 30_600, 30_600],
    ],
  );
  t.equal(index.stopTimes('T1'), index.stopTimes('T1'), 'cached');
  t.same(
    index.stopTimes('T2').map((s) => s.arrival_s),
    [85_800, 90_605],
  );
  t.same(index.stopTimes('T4'), [], 'a trip without stop times');
  t.same(index.stopTimes('nope'), []);

  t.equal(index.runsOn('WEEK', '2024-05-02'), true, 'Thursday in range');
  t.equal(index.runsOn('WEEK', '2024-05-01'), false, 'removed by calendar_dates');
  t.equal(index.runsOn('WEEK', '2024-05-04'), false, 'Saturday');
  t.equal(index.runsOn('WEEK', '2025-01-02'), false, 'after end_date');
  t.equal(index.runsOn('WEEK', '2023-12-29'), false, 'before start_date');
  t.equal(index.runsOn('SAT', '2024-05-01'), true, 'added by calendar_dates');
  t.equal(index.runsOn('SAT', '2024-05-04'), true);
  t.equal(index.runsOn('EXTRA', '2024-07-14'), true, 'calendar_dates only');
  t.equal(index.runsOn('EXTRA', '2024-07-15'), false);
  t.equal(index.runsOn('NOPE', '2024-05-02'), false);
  t.equal(index.runsOn('WEEK', 'not a date'), false);
  t.equal(index.runsOn('WEEK', '20240502'), true, 'GTFS date form accepted too');
});

t.test('listSchedules and a schedule never imported', async (t) => {
  const db = await Db.open(':memory:');
  t.teardown(() => db.close());
  t.same(await listSchedules(db), []);
  await importGtfs(db, 'small', writeFeedFolder(join(dir, 'list')));
  const [info] = await listSchedules(db);
  t.match(info, {
    schedule_id: 'small',
    timezone: 'Europe/Paris',
    feed_version: null,
    routes: 9,
    trips: 4,
    stops: 4,
    stop_times: 7,
  });
  t.ok(Math.abs(info!.imported_ms - Date.now()) < 60_000);
  t.ok(info!.files.includes('stops.txt'));
  await t.rejects(loadScheduleIndex(db, 'other'), ScheduleNotFoundError);
  await t.rejects(loadScheduleIndex(db, 'other'), /schedule "other" has not been imported/);
});
