import t from 'tap';
import { extendScheduledTrips, refreshScheduledTrips } from './scheduled-trips.ts';
import { EVERY_DAY, WEEKDAYS, insertSchedule, openTestDb } from '../../test/support/reliability-builders.ts';
import type { Db } from '../db.ts';

async function perDay(db: Db, scheduleId = 's'): Promise<Record<string, number>> {
  const rows = await db.all<{ d: string; n: number }>(
    `
    SELECT strftime(service_date, '%Y-%m-%d') AS d, CAST(count(*) AS INTEGER) AS n
    FROM scheduled_trips WHERE schedule_id = $s GROUP BY ALL ORDER BY d`,
    { s: scheduleId },
  );
  return Object.fromEntries(rows.map((r) => [r.d, r.n]));
}

t.test('calendar weekdays, calendar_dates removal and addition', async (t) => {
  const db = await openTestDb();
  t.teardown(() => db.close());
  await insertSchedule(db, {
    schedule_id: 's',
    timezone: 'America/Chicago',
    routes: [{ route_id: 'R1', route_type: 3, mode: 'bus' }],
    // 2024-07-01 is a Monday; the 4th (Thursday) is a holiday with a special service instead
    calendar: [{ service_id: 'WK', days: WEEKDAYS, start_date: '2024-07-01', end_date: '2024-07-31' }],
    calendar_dates: [
      { service_id: 'WK', date: '2024-07-04', exception_type: 2 },
      { service_id: 'HOL', date: '2024-07-04', exception_type: 1 },
      { service_id: 'HOL', date: '2024-07-06', exception_type: 1 },
    ],
    trips: [
      { trip_id: 'w1', route_id: 'R1', service_id: 'WK', start_s: 8 * 3600, end_s: 9 * 3600 },
      { trip_id: 'w2', route_id: 'R1', service_id: 'WK', start_s: 17 * 3600, end_s: 18 * 3600 },
      { trip_id: 'h1', route_id: 'R1', service_id: 'HOL', start_s: 10 * 3600, end_s: 11 * 3600 },
    ],
  });
  const n = await refreshScheduledTrips(db, 's', '2024-07-01', '2024-07-07');
  t.equal(n, 2 * 4 + 1 + 1, 'four weekdays of two trips, the holiday and the Saturday addition');
  t.same(await perDay(db), {
    '2024-07-01': 2,
    '2024-07-02': 2,
    '2024-07-03': 2,
    '2024-07-04': 1,
    '2024-07-05': 2,
    '2024-07-06': 1,
  });
  const holiday = await db.all<{ trip_id: string }>(
    `SELECT trip_id FROM scheduled_trips WHERE service_date = DATE '2024-07-04'`,
  );
  t.same(
    holiday.map((r) => r.trip_id),
    ['h1'],
    'the removed weekday service is gone, the added one is there',
  );

  t.equal(
    await refreshScheduledTrips(db, 's', '2024-07-01', '2024-07-07'),
    n,
    'refreshing again replaces, not doubles',
  );
  await db.run(`DELETE FROM gtfs_trips WHERE trip_id = 'w2'`);
  await refreshScheduledTrips(db, 's', '2024-07-03', '2024-07-03');
  t.equal((await perDay(db))['2024-07-03'], 1, 'a refreshed day follows the changed schedule');
  t.equal((await perDay(db))['2024-07-02'], 2, 'days outside the refreshed range are kept');
});

t.test('a service date crossing midnight keeps its trips and resolves their instants', async (t) => {
  const db = await openTestDb();
  t.teardown(() => db.close());
  await insertSchedule(db, {
    schedule_id: 's',
    timezone: 'America/Los_Angeles',
    routes: [{ route_id: 'N', route_type: 3, mode: 'bus' }],
    calendar: [
      {
        service_id: 'FRI',
        days: [false, false, false, false, true, false, false],
        start_date: '2024-01-01',
        end_date: '2024-12-31',
      },
    ],
    trips: [
      { trip_id: 'owl', route_id: 'N', service_id: 'FRI', start_s: 23 * 3600 + 30 * 60, end_s: 25 * 3600 + 10 * 60 },
    ],
  });
  await refreshScheduledTrips(db, 's', '2024-05-10', '2024-05-11');
  const rows = await db.json<{ d: string; first: number; last: number; start: string; end: string }>(`
    SELECT strftime(service_date, '%Y-%m-%d') AS d, first_departure_s AS first, last_arrival_s AS last,
           strftime(scheduled_start_at AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M') AS start,
           strftime(scheduled_end_at AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M') AS "end"
    FROM scheduled_trips`);
  t.same(
    rows,
    [{ d: '2024-05-10', first: 84600, last: 90600, start: '2024-05-11T06:30', end: '2024-05-11T08:10' }],
    'Friday 23:30 to 01:10 PDT stays on Friday, ending on Saturday',
  );
});

t.test('DST change days use GTFS noon-minus-12h times', async (t) => {
  const db = await openTestDb();
  t.teardown(() => db.close());
  await insertSchedule(db, {
    schedule_id: 's',
    timezone: 'America/Chicago',
    routes: [{ route_id: 'R', route_type: 3, mode: 'bus' }],
    calendar: [{ service_id: 'ALL', days: EVERY_DAY, start_date: '2024-01-01', end_date: '2024-12-31' }],
    trips: [
      { trip_id: 'early', route_id: 'R', service_id: 'ALL', start_s: 1 * 3600 + 30 * 60, end_s: 2 * 3600 + 30 * 60 },
      { trip_id: 'morning', route_id: 'R', service_id: 'ALL', start_s: 8 * 3600, end_s: 9 * 3600 },
    ],
  });
  await refreshScheduledTrips(db, 's', '2024-03-09', '2024-03-11');
  await refreshScheduledTrips(db, 's', '2024-11-02', '2024-11-04');
  const rows = await db.json<{ d: string; trip_id: string; start: string }>(`
    SELECT strftime(service_date, '%Y-%m-%d') AS d, trip_id,
           strftime(scheduled_start_at AT TIME ZONE 'UTC', '%H:%M') AS start
    FROM scheduled_trips ORDER BY service_date, trip_id`);
  const start = (d: string, trip: string): string | undefined =>
    rows.find((r) => r.d === d && r.trip_id === trip)?.start;
  t.equal(rows.length, 12, 'two trips on each of six days, the change days included');
  t.equal(start('2024-03-09', 'morning'), '14:00', '08:00 CST');
  t.equal(start('2024-03-10', 'morning'), '13:00', '08:00 CDT on the spring-forward day');
  t.equal(start('2024-03-11', 'morning'), '13:00', '08:00 CDT');
  t.equal(start('2024-03-10', 'early'), '06:30', '01:30 after noon-minus-12h (05:00Z) on the spring-forward day');
  t.equal(start('2024-11-02', 'morning'), '13:00', '08:00 CDT');
  t.equal(start('2024-11-03', 'morning'), '14:00', '08:00 CST on the fall-back day');
  t.equal(start('2024-11-03', 'early'), '07:30', '01:30 after noon-minus-12h (06:00Z) on the fall-back day');
});

t.test('a trip listed twice in trips.txt is scheduled once; unknown modes are kept', async (t) => {
  const db = await openTestDb();
  t.teardown(() => db.close());
  await insertSchedule(db, {
    schedule_id: 's',
    timezone: 'UTC',
    routes: [{ route_id: 'F', route_type: 4, mode: null }],
    calendar: [{ service_id: 'ALL', days: EVERY_DAY, start_date: '2024-01-01', end_date: '2024-01-31' }],
    trips: [
      { trip_id: 'dup', route_id: 'F', service_id: 'ALL', start_s: 3600, end_s: 7200 },
      { trip_id: 'dup', route_id: 'F', service_id: 'ALL', start_s: 3600, end_s: 7200 },
    ],
  });
  t.equal(await refreshScheduledTrips(db, 's', '2024-01-10', '2024-01-10'), 1);
  const [row] = await db.all<{ mode: string | null }>('SELECT mode FROM scheduled_trips');
  t.equal(row?.mode, null, 'a ferry (no served mode) keeps a NULL mode');
});

t.test('bad ranges and zones are refused before touching the table', async (t) => {
  const db = await openTestDb();
  t.teardown(() => db.close());
  await t.rejects(refreshScheduledTrips(db, 's', '2024-02-30', '2024-03-01'), RangeError);
  await t.rejects(refreshScheduledTrips(db, 's', '2024-03-02', '2024-03-01'), /after/);
  await t.rejects(refreshScheduledTrips(db, 's', '2000-01-01', '2024-03-01'), /over 800 days/);
  await t.rejects(
    refreshScheduledTrips(db, 's', '2024-03-01', '2024-03-01', { timezone: 'Mars/Olympus' }),
    /time zone/,
  );
  t.equal(
    await refreshScheduledTrips(db, 'missing', '2024-03-01', '2024-03-02'),
    0,
    'an unknown schedule expands to nothing',
  );
});

t.test('extendScheduledTrips expands each new day up to the horizon, once', async (t) => {
  const db = await openTestDb();
  t.teardown(() => db.close());
  await insertSchedule(db, {
    schedule_id: 's',
    timezone: 'Europe/Berlin',
    routes: [{ route_id: 'T', route_type: 0, mode: 'streetcar' }],
    calendar: [{ service_id: 'ALL', days: EVERY_DAY, start_date: '2024-01-01', end_date: '2024-12-31' }],
    trips: [{ trip_id: 't1', route_id: 'T', service_id: 'ALL', start_s: 3600, end_s: 7200 }],
  });
  // 23:30 UTC on 2024-06-09 is already 2024-06-10 in Berlin: yesterday to the horizon
  const now = new Date('2024-06-09T23:30:00Z');
  t.equal(await extendScheduledTrips(db, { timezone: 'Europe/Berlin', horizonDays: 3, now }), 5);
  t.same(Object.keys(await perDay(db)), ['2024-06-09', '2024-06-10', '2024-06-11', '2024-06-12', '2024-06-13']);
  const later = new Date('2024-06-11T10:00:00Z');
  t.equal(
    await extendScheduledTrips(db, { timezone: 'Europe/Berlin', horizonDays: 3, now: later }),
    1,
    'only the one new day at the horizon is expanded',
  );
  t.equal(
    await extendScheduledTrips(db, { timezone: 'Europe/Berlin', horizonDays: 3, now: later }),
    0,
    'nothing twice',
  );
});
