import t from 'tap';
import { InMemoryEventBus, type DomainEvent } from '../../core/events.ts';
import type { Db } from '../db.ts';
import { backfillServiceDays, pastObservedDays } from './backfill.ts';
import { scheduleFinalize } from './job.ts';
import { rollup } from './rollup.ts';
import {
  EVERY_DAY,
  appendObservations,
  insertSchedule,
  obs,
  openTestDb,
} from '../../test/support/reliability-builders.ts';
import { silentLogger } from '../../test/support/logs.ts';

// Days long before "today" that nobody expanded: history replayed from archives.
const D = '2024-03-05';
const D2 = '2024-03-06';
const NOW = new Date('2024-06-01T12:00:00-05:00');

async function setup(): Promise<Db> {
  const db = await openTestDb();
  await insertSchedule(db, {
    schedule_id: 's',
    timezone: 'America/Chicago',
    routes: [{ route_id: 'R', route_type: 3, mode: 'bus' }],
    calendar: [{ service_id: 'ALL', days: EVERY_DAY, start_date: '2024-01-01', end_date: '2024-12-31' }],
    trips: [0, 1, 2, 3].map((i) => ({
      trip_id: `T${i}`,
      route_id: 'R',
      service_id: 'ALL',
      start_s: 8 * 3600 + i * 3600,
      end_s: 9 * 3600 + i * 3600,
    })),
  });
  return db;
}

const count = async (db: Db, sql: string): Promise<number> => Number((await db.all<{ n: number }>(sql))[0]?.n ?? 0);
const seen = (day: string, trip: string) => obs({ service_date: day, trip_id: trip, route_id: 'R', mode: 'bus' });

t.test('backfillServiceDays expands and finalizes the given days, again when observations were added', async (t) => {
  const db = await setup();
  t.teardown(() => db.close());
  await appendObservations(db, [seen(D, 'T0'), seen(D, 'T1')]);
  t.equal(
    await count(db, `SELECT count(*) AS n FROM scheduled_trips WHERE service_date = DATE '${D}'`),
    0,
    'never expanded',
  );
  const [first] = await backfillServiceDays(db, [D], { now: NOW });
  t.match(first, { service_date: D, trips: 4, route_ids: ['R'] });
  t.match(
    first?.routes,
    [{ route_id: 'R', scheduled: 4, delivered: 2 }],
    'scheduled from the schedule, not counted as added',
  );
  t.equal(
    await count(db, `SELECT count(*) AS n FROM schedule_days WHERE service_date = DATE '${D}'`),
    1,
    'the expansion is recorded',
  );
  await appendObservations(db, [seen(D, 'T2')]);
  const [again] = await backfillServiceDays(db, [D, D], { now: NOW });
  t.match(again?.routes, [{ scheduled: 4, delivered: 3 }], 'finalized again with the new observation, once');
  t.equal(
    await count(db, `SELECT count(*) AS n FROM trip_outcomes WHERE service_date = DATE '${D}'`),
    4,
    'rows replaced, not doubled',
  );
  await t.rejects(backfillServiceDays(db, ['2024-02-30']), RangeError);
});

t.test('the finalize job picks up older observed days that were never finalized', async (t) => {
  const db = await setup();
  t.teardown(() => db.close());
  await appendObservations(db, [seen(D, 'T0'), seen(D2, 'T3')]);
  t.same(await pastObservedDays(db, '2024-05-31'), [D, D2]);
  const events: DomainEvent[] = [];
  const bus = new InMemoryEventBus();
  bus.subscribe((batch) => events.push(...batch));
  const job = await scheduleFinalize(
    db,
    bus,
    {
      reliability: {
        timezone: 'America/Chicago',
        finalize_cron: '5 * * * *',
        service_day_end: '04:00',
        late_grace_min: 60,
        horizon_days: 2,
        catch_up_days: 14,
      },
    },
    { now: () => NOW, log: silentLogger },
  );
  t.teardown(() => job.stop());
  t.same(await pastObservedDays(db, '2024-05-31'), [], 'both finalized by the catch-up pass');
  t.equal(
    await count(
      db,
      `SELECT sum(scheduled) AS n FROM reliability_days WHERE service_date IN (DATE '${D}', DATE '${D2}')`,
    ),
    8,
  );
  await new Promise((r) => setImmediate(r));
  const updated = events
    .filter((e) => e.type === 'reliability.updated')
    .map((e) => (e.data as { service_date: string }).service_date);
  t.ok(updated.includes(D) && updated.includes(D2), 'one reliability.updated per backfilled day');
});

t.test('a rollup over past days expands and finalizes them once, however many ask at the same time', async (t) => {
  const db = await setup();
  t.teardown(() => db.close());
  await appendObservations(db, [seen(D, 'T0'), seen(D, 'T1'), seen(D, 'T2')]);
  const opts = { timezone: 'America/Chicago', now: NOW, liveMaxAgeMs: 0, historyFrom: D };
  const results = await Promise.all(
    Array.from({ length: 10 }, () => rollup(db, { mode: 'bus', routeId: 'R', group: 'day', from: D, to: D2 }, opts)),
  );
  for (const res of results) {
    t.same(
      res.rows.map((r) => [r.period, r.scheduled, r.delivered, r.unobserved, r.final, r.days_observed]),
      [
        [D, 4, 3, 1, true, 1],
        [D2, 4, 0, 4, false, 0],
      ],
    );
    t.same(res.days_without_observations, [D2]);
  }
  t.equal(await count(db, `SELECT count(*) AS n FROM reliability_finalized`), 1, 'only the observed day is finalized');
  t.equal(await count(db, `SELECT count(*) AS n FROM trip_outcomes`), 4, 'once');
  t.equal(
    await count(db, `SELECT count(*) AS n FROM schedule_days WHERE service_date < DATE '${D}'`),
    0,
    'nothing expanded before the first observed day (historyFrom)',
  );
});
