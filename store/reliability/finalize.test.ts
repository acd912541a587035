import t from 'tap';
import { dueServiceDays, finalizeDueDays, finalizeServiceDay, isConflict, retryOnConflict } from './finalize.ts';
import { refreshScheduledTrips } from './scheduled-trips.ts';
import {
  EVERY_DAY,
  appendObservations,
  insertSchedule,
  obs,
  openTestDb,
} from '../../test/support/reliability-builders.ts';
import type { Db } from '../db.ts';

const D = '2024-03-12';
const at = (hhmm: string, date = D): number => Date.parse(`${date}T${hhmm}:00-05:00`);

async function setup(): Promise<Db> {
  const db = await openTestDb();
  await insertSchedule(db, {
    schedule_id: 's',
    timezone: 'America/Chicago',
    routes: [
      { route_id: 'R1', route_type: 3, mode: 'bus' },
      { route_id: 'L1', route_type: 1, mode: 'rail' },
    ],
    calendar: [{ service_id: 'ALL', days: EVERY_DAY, start_date: '2024-01-01', end_date: '2024-12-31' }],
    trips: [
      ...['a1', 'a2', 'a3', 'a4', 'a5', 'a6', 'a7', 'a8', 'a9'].map((trip_id) => ({
        trip_id,
        route_id: 'R1',
        service_id: 'ALL',
        start_s: 9 * 3600,
        end_s: 10 * 3600,
      })),
      { trip_id: 'late', route_id: 'L1', service_id: 'ALL', start_s: 23 * 3600 + 40 * 60, end_s: 24 * 3600 + 50 * 60 },
    ],
  });
  await refreshScheduledTrips(db, 's', D, D);
  const bus = { route_id: 'R1', mode: 'bus' as const, service_date: D };
  await appendObservations(db, [
    // a1: delivered, seen in many polls and twice in one poll (duplicated observations)
    ...[1, 2, 3, 3].map((i) => obs({ ...bus, trip_id: 'a1', observed_ms: at(`09:0${i}`) })),
    // a2: canceled once, then gone from the feed: still canceled
    obs({ ...bus, trip_id: 'a2', relationship: 'canceled', observed_ms: at('08:00') }),
    // a3: canceled, then a later trip update runs it SCHEDULED again: restored
    obs({ ...bus, trip_id: 'a3', relationship: 'canceled', observed_ms: at('08:00') }),
    obs({ ...bus, trip_id: 'a3', relationship: 'scheduled', observed_ms: at('08:01') }),
    // a4: running, then canceled (DELETED) for the rest of the day
    obs({ ...bus, trip_id: 'a4', observed_ms: at('09:00') }),
    obs({ ...bus, trip_id: 'a4', relationship: 'deleted', observed_ms: at('09:10') }),
    // a5: skipped stops
    obs({ ...bus, trip_id: 'a5', skipped_stops: 2, observed_ms: at('09:00') }),
    obs({ ...bus, trip_id: 'a5', skipped_stops: 1, observed_ms: at('09:01') }),
    // a6: never seen
    // a7: only a vehicle position
    obs({ ...bus, trip_id: 'a7', source: 'vehicle_position', observed_ms: at('09:20') }),
    // a8: canceled, later a vehicle position only: a position alone does not restore
    obs({ ...bus, trip_id: 'a8', relationship: 'canceled', observed_ms: at('08:00') }),
    obs({ ...bus, trip_id: 'a8', source: 'vehicle_position', observed_ms: at('09:05') }),
    // a9: canceled and scheduled in the same poll: not strictly later, stays canceled
    obs({ ...bus, trip_id: 'a9', relationship: 'canceled', observed_ms: at('08:00') }),
    obs({ ...bus, trip_id: 'a9', relationship: 'scheduled', observed_ms: at('08:00') }),
    // unscheduled: an ADDED trip and a DUPLICATED copy on R1, with no mode in the feed row
    obs({ service_date: D, trip_id: 'x1', route_id: 'R1', relationship: 'added', in_schedule: false }),
    obs({ service_date: D, trip_id: 'a1-dup', route_id: 'R1', relationship: 'duplicated', in_schedule: false }),
    // GTFS-RT DUPLICATED keeps the original's trip_id: a copy of a6 runs, a6 itself is never seen
    obs({ service_date: D, trip_id: 'a6', route_id: 'R1', relationship: 'duplicated', in_schedule: false }),
    obs({
      service_date: D,
      trip_id: 'a6',
      route_id: 'R1',
      relationship: 'duplicated',
      in_schedule: false,
      observed_ms: at('10:00'),
    }),
    // an unknown trip on an unknown route, canceled
    obs({ service_date: D, trip_id: 'x2', route_id: 'Z', relationship: 'canceled', in_schedule: false }),
    // rail trip past midnight: seen at 00:20 on D + 1, still service date D
    obs({ service_date: D, trip_id: 'late', route_id: 'L1', mode: 'rail', observed_ms: at('00:20', '2024-03-13') }),
    // another day's observation is not counted on D
    obs({ ...bus, service_date: '2024-03-11', trip_id: 'a6' }),
  ]);
  return db;
}

interface Outcome {
  trip_id: string;
  duplicated: boolean;
  route_id: string | null;
  mode: string | null;
  in_schedule: boolean;
  outcome: string;
  restored: boolean;
  observations: number;
}

t.test('finalize: one outcome per trip, by the documented rules', async (t) => {
  const db = await setup();
  t.teardown(() => db.close());
  const summary = await finalizeServiceDay(db, D, { now: new Date('2024-03-13T12:00:00Z') });
  const rows =
    await db.all<Outcome>(`SELECT trip_id, duplicated, route_id, mode, in_schedule, outcome, restored, observations
    FROM trip_outcomes WHERE service_date = DATE '${D}' ORDER BY trip_id`);
  const by = Object.fromEntries(rows.filter((r) => !r.duplicated).map((r) => [r.trip_id, r]));
  t.equal(rows.length, 14, '10 scheduled trips and 4 unscheduled ones, each once');
  t.same(
    rows.filter((r) => r.duplicated).map((r) => [r.trip_id, r.in_schedule, r.outcome, r.observations]),
    [
      ['a1-dup', false, 'delivered', 1],
      ['a6', false, 'delivered', 2],
    ],
    'a DUPLICATED copy is its own added trip, apart from its original',
  );
  t.equal(by.a1?.outcome, 'delivered');
  t.equal(by.a1?.observations, 4, 'repeated observations collapse into one trip');
  t.equal(by.a2?.outcome, 'canceled', 'a cancellation that disappears from the next poll still counts');
  t.equal(by.a3?.outcome, 'delivered', 'canceled then SCHEDULED in a later trip update: restored');
  t.equal(by.a3?.restored, true);
  t.equal(by.a4?.outcome, 'canceled', 'DELETED counts as canceled');
  t.equal(by.a5?.outcome, 'partially_canceled');
  t.equal(by.a6?.outcome, 'unobserved', 'seen only on another service date');
  t.equal(by.a7?.outcome, 'delivered', 'a vehicle position is an observation');
  t.equal(by.a8?.outcome, 'canceled', 'a vehicle position alone does not restore');
  t.equal(by.a9?.outcome, 'canceled', 'the same poll does not restore');
  t.equal(by.late?.outcome, 'delivered', 'seen after midnight, counted on its service date');
  t.same(
    [by.x1?.in_schedule, by.x1?.outcome, by.x1?.mode],
    [false, 'delivered', 'bus'],
    "added trip takes its route's mode",
  );
  t.same([by.x2?.in_schedule, by.x2?.outcome, by.x2?.mode], [false, 'canceled', null]);

  const days = await db.all<Record<string, number | string | null>>(`SELECT * EXCLUDE (service_date)
    FROM reliability_days WHERE service_date = DATE '${D}' ORDER BY mode, route_id`);
  const r1 = days.find((d) => d.route_id === 'R1');
  t.same(r1, {
    mode: 'bus',
    route_id: 'R1',
    scheduled: 9,
    delivered: 4,
    canceled: 4,
    canceled_unscheduled: 0,
    partially_canceled: 1,
    unobserved: 1,
    added: 3,
    restored: 1,
    schedule_id: 's',
  });
  t.same(
    days.find((d) => d.route_id === 'Z'),
    {
      mode: null,
      route_id: 'Z',
      scheduled: 0,
      delivered: 0,
      canceled: 1,
      canceled_unscheduled: 1,
      partially_canceled: 0,
      unobserved: 0,
      added: 0,
      restored: 0,
      schedule_id: 's',
    },
  );
  t.same(summary.modes, ['rail', 'bus']);
  t.same(summary.route_ids, ['L1', 'R1', 'Z']);
  t.equal(summary.trips, 14);
});

t.test('finalize is idempotent and picks up late observations', async (t) => {
  const db = await setup();
  t.teardown(() => db.close());
  await finalizeServiceDay(db, D);
  const snapshot = async (): Promise<unknown[]> =>
    db.json(`
    SELECT * EXCLUDE (finalized_at) FROM reliability_finalized
    UNION ALL BY NAME SELECT * FROM reliability_days
    UNION ALL BY NAME SELECT * FROM trip_outcomes ORDER BY ALL`);
  const first = await snapshot();
  await finalizeServiceDay(db, D);
  t.same(await snapshot(), first, 'a second run stores the same rows');
  await appendObservations(db, [obs({ service_date: D, trip_id: 'a6', route_id: 'R1', mode: 'bus' })]);
  const again = await finalizeServiceDay(db, D);
  t.equal(again.trips, 14);
  const [r1] = await db.all<{ delivered: number; unobserved: number }>(
    `SELECT delivered, unobserved FROM reliability_days WHERE route_id = 'R1'`,
  );
  t.same(r1, { delivered: 5, unobserved: 0 });
});

t.test('a day with nothing scheduled or seen is finalized empty', async (t) => {
  const db = await openTestDb();
  t.teardown(() => db.close());
  const summary = await finalizeServiceDay(db, '2024-01-01');
  t.same([summary.trips, summary.modes, summary.route_ids], [0, [], []]);
  const [row] = await db.all<{ n: number }>(`SELECT CAST(count(*) AS INTEGER) AS n FROM reliability_finalized`);
  t.equal(row?.n, 1);
  await t.rejects(finalizeServiceDay(db, '2024-13-01'), RangeError);
});

t.test('due days wait for the end of the service day and late trips', async (t) => {
  const db = await setup();
  t.teardown(() => db.close());
  const opts = { timezone: 'America/Chicago', serviceDayEnd: '04:00', lateGraceMin: 60, catchUpDays: 14 };
  // the rail trip ends 00:50 on D + 1; day end is 04:00 on D + 1
  t.same(
    await dueServiceDays(db, { ...opts, now: new Date(at('03:59', '2024-03-13')) }),
    ['2024-03-11'],
    'D is still running at 03:59 the next morning; the day before (observations only) is due',
  );
  t.same(await dueServiceDays(db, { ...opts, now: new Date(at('04:00', '2024-03-13')) }), ['2024-03-11', D]);
  await db.run(
    `UPDATE scheduled_trips SET scheduled_end_at = TIMESTAMPTZ '2024-03-13 04:30:00-05' WHERE trip_id = 'late'`,
  );
  t.same(
    await dueServiceDays(db, { ...opts, now: new Date(at('05:00', '2024-03-13')) }),
    ['2024-03-11'],
    'a trip ending 04:30 holds D until 05:30 with a 60 min grace',
  );
  const done = await finalizeDueDays(db, { ...opts, now: new Date(at('05:30', '2024-03-13')) });
  t.same(
    done.map((d) => d.service_date),
    ['2024-03-11', D],
  );
  t.same(await dueServiceDays(db, { ...opts, now: new Date(at('06:00', '2024-03-14')) }), [], 'nothing left');
});

t.test('a failing day is reported and the others still finalize', async (t) => {
  const db = await setup();
  t.teardown(() => db.close());
  const errors: string[] = [];
  // the same table plus a CHECK refusing the rail line's row of D: D fails half-way through
  const [ddl] = await db.all<{ sql: string }>(`SELECT sql FROM duckdb_tables() WHERE table_name = 'reliability_days'`);
  await db.run('DROP TABLE reliability_days');
  await db.run(ddl!.sql.replace(/\);\s*$/, `, CHECK (route_id IS DISTINCT FROM 'L1' OR service_date <> DATE '${D}'))`));
  const done = await finalizeDueDays(
    db,
    {
      timezone: 'America/Chicago',
      serviceDayEnd: '04:00',
      lateGraceMin: 60,
      catchUpDays: 14,
      now: new Date(at('12:00', '2024-03-13')),
    },
    (day) => errors.push(day),
  );
  t.same(
    done.map((d) => d.service_date),
    ['2024-03-11'],
    'the other day succeeds',
  );
  t.same(errors, [D]);
  const [n] = await db.all<{ n: number }>(
    `SELECT CAST(count(*) AS INTEGER) AS n FROM trip_outcomes WHERE service_date = DATE '${D}'`,
  );
  t.equal(n?.n, 0, 'the failed day rolled back whole');
});

t.test('finalizes of one day at once: one at a time, the same rows, no error', async (t) => {
  const db = await setup();
  t.teardown(() => db.close());
  const rows = (): Promise<unknown[]> =>
    db.json(`
    SELECT * EXCLUDE (finalized_at) FROM reliability_finalized
    UNION ALL BY NAME SELECT * FROM reliability_days
    UNION ALL BY NAME SELECT * FROM trip_outcomes ORDER BY ALL`);
  // requests (ifOpen) and backfills (again) of the same day, all at once
  const summaries = await Promise.all(
    Array.from({ length: 12 }, (_, i) => finalizeServiceDay(db, D, { ifOpen: i % 2 === 0 })),
  );
  t.ok(
    summaries.every((s) => s.trips === 14),
    'every caller gets the day',
  );
  const once = await rows();
  await finalizeServiceDay(db, D);
  t.same(await rows(), once, 'the same rows as a finalize alone');
  const [marks] = await db.all<{ n: number }>(`SELECT CAST(count(*) AS INTEGER) AS n FROM reliability_finalized`);
  t.equal(marks?.n, 1);
  const before = await db.all<{ at: string }>(`SELECT CAST(finalized_at AS VARCHAR) AS at FROM reliability_finalized`);
  await finalizeServiceDay(db, D, { ifOpen: true, now: new Date('2030-01-01T00:00:00Z') });
  t.same(
    await db.all(`SELECT CAST(finalized_at AS VARCHAR) AS at FROM reliability_finalized`),
    before,
    'ifOpen reads a finalized day, it does not compute it again',
  );
});

t.test('another process finalizing the same day: the commit that loses is retried', async (t) => {
  const db = await setup();
  t.teardown(() => db.close());
  // a second writer's finalize of D, still open while ours commits: its commit loses, with
  // DuckDB's own message, which the retry recognizes
  const other = await db.connect();
  t.teardown(() => other.closeSync());
  await other.run('BEGIN TRANSACTION');
  await other.run(`DELETE FROM trip_outcomes WHERE service_date = DATE '${D}'`);
  await other.run(`INSERT INTO reliability_finalized VALUES (DATE '${D}', now(), 0, 0)`);
  t.equal((await finalizeServiceDay(db, D)).trips, 14, 'ours commits');
  const lost = await other.run('COMMIT').then(
    () => null,
    (err: unknown) => err,
  );
  t.ok(lost, 'the other commit fails');
  t.ok(isConflict(lost), `recognized as a conflict: ${(lost as Error).message}`);
  await other.run('ROLLBACK').catch(() => undefined);
  const [mark] = await db.all<{ n: number; trips: number }>(
    `SELECT CAST(count(*) AS INTEGER) AS n, CAST(max(trips) AS INTEGER) AS trips FROM reliability_finalized`,
  );
  t.same(mark, { n: 1, trips: 14 }, 'one mark, with the rows of the finalize that won');

  // the retry itself: a lost commit is run again; what the other committed may settle it; any
  // other error is reported at once
  const conflict = new Error('TransactionContext Error: Failed to commit: PRIMARY KEY or UNIQUE constraint violation');
  let runs = 0;
  await retryOnConflict(
    async () => {
      if (++runs < 3) throw conflict;
    },
    undefined,
    1,
  );
  t.equal(runs, 3, 'run until it commits');
  runs = 0;
  await retryOnConflict(
    async () => {
      runs++;
      throw conflict;
    },
    async () => true,
    1,
  );
  t.equal(runs, 1, 'settled by the rows the other one committed');
  runs = 0;
  await t.rejects(
    retryOnConflict(
      async () => {
        runs++;
        throw new Error('Constraint Error: CHECK constraint failed');
      },
      undefined,
      1,
    ),
    /CHECK constraint/,
  );
  t.equal(runs, 1, 'not a conflict: not retried');
  runs = 0;
  await t.rejects(
    retryOnConflict(
      async () => {
        runs++;
        throw conflict;
      },
      undefined,
      1,
    ),
  );
  t.equal(runs, 4, 'gives up after four attempts');
});
