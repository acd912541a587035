import t from 'tap';
import { ensureLiveDays } from './live.ts';
import { finalizeServiceDay } from './finalize.ts';
import { refreshScheduledTrips } from './scheduled-trips.ts';
import {
  EVERY_DAY,
  appendObservations,
  insertSchedule,
  obs,
  openTestDb,
} from '../../test/support/reliability-builders.ts';
import type { Db } from '../db.ts';
import { until } from '../../test/support/wait.ts';

async function setup(): Promise<Db> {
  const db = await openTestDb();
  await insertSchedule(db, {
    schedule_id: 's',
    timezone: 'UTC',
    routes: [{ route_id: 'B', route_type: 3, mode: 'bus' }],
    calendar: [{ service_id: 'ALL', days: EVERY_DAY, start_date: '2024-01-01', end_date: '2024-12-31' }],
    trips: [1, 2, 3].map((i) => ({
      trip_id: `b${i}`,
      route_id: 'B',
      service_id: 'ALL',
      start_s: i * 3600,
      end_s: i * 3600 + 1800,
    })),
  });
  await refreshScheduledTrips(db, 's', '2024-04-01', '2024-04-10');
  return db;
}

async function live(db: Db): Promise<{ d: string; delivered: number; pending: number; unobserved: number }[]> {
  return db.all(`SELECT strftime(service_date, '%Y-%m-%d') AS d, delivered, pending, unobserved
    FROM reliability_live_days ORDER BY service_date`);
}

t.test('live counts: recomputed when stale, served stale while refreshing', async (t) => {
  const db = await setup();
  t.teardown(() => db.close());
  const spec = { today: '2024-04-10', completeThrough: '2024-04-09', lookbackDays: 3, maxAgeMs: 60_000 };
  await appendObservations(db, [obs({ service_date: '2024-04-10', trip_id: 'b1', route_id: 'B', mode: 'bus' })]);
  await ensureLiveDays(db, spec);
  t.same(
    await live(db),
    [
      { d: '2024-04-08', delivered: 0, pending: 0, unobserved: 3 },
      { d: '2024-04-09', delivered: 0, pending: 0, unobserved: 3 },
      { d: '2024-04-10', delivered: 1, pending: 2, unobserved: 0 },
    ],
    'the lookback days not finalized, today with pending trips',
  );

  await appendObservations(db, [obs({ service_date: '2024-04-10', trip_id: 'b2', route_id: 'B', mode: 'bus' })]);
  await ensureLiveDays(db, spec);
  t.equal((await live(db)).at(-1)?.delivered, 1, 'fresh enough: not recomputed');

  await ensureLiveDays(db, { ...spec, maxAgeMs: 1 });
  await new Promise((r) => setTimeout(r, 5));
  await ensureLiveDays(db, { ...spec, maxAgeMs: 1 });
  await until('the background refresh', async () => (await live(db)).at(-1)?.delivered === 2);
  t.pass('stale counts were refreshed in the background');

  await finalizeServiceDay(db, '2024-04-09');
  await ensureLiveDays(db, spec);
  t.same(
    (await live(db)).map((r) => r.d),
    ['2024-04-08', '2024-04-10'],
    'a newly finalized day leaves the live set at once',
  );

  await ensureLiveDays(db, { ...spec, today: '2024-04-11', completeThrough: '2024-04-10' });
  t.same(
    (await live(db)).map((r) => [r.d, r.pending, r.unobserved]),
    [['2024-04-10', 0, 1]],
    "a new day turns yesterday's pending trips unobserved; the new day has no schedule here",
  );
});

t.test('a failed recompute keeps the previous counts and is retried', async (t) => {
  const db = await setup();
  t.teardown(() => db.close());
  const spec = { today: '2024-04-10', completeThrough: '2024-04-09', lookbackDays: 1, maxAgeMs: 0 };
  await ensureLiveDays(db, spec);
  const before = await live(db);
  await db.run('ALTER TABLE trip_observations RENAME TO trip_observations_away');
  await t.rejects(ensureLiveDays(db, spec));
  t.same(await live(db), before, 'rolled back');
  await db.run('ALTER TABLE trip_observations_away RENAME TO trip_observations');
  await ensureLiveDays(db, spec);
  t.same(await live(db), before);
});
