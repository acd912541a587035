import t from 'tap';
import { parseConfig } from '../../core/config.ts';
import { InMemoryEventBus, type DomainEvent } from '../../core/events.ts';
import { captureLogs } from '../../test/support/logs.ts';
import { scheduleFinalize } from './job.ts';
import {
  EVERY_DAY,
  appendObservations,
  insertSchedule,
  obs,
  openTestDb,
} from '../../test/support/reliability-builders.ts';

async function setup() {
  const db = await openTestDb();
  await insertSchedule(db, {
    schedule_id: 's',
    timezone: 'America/Chicago',
    routes: [
      { route_id: 'B', route_type: 3, mode: 'bus' },
      { route_id: 'T', route_type: 0, mode: 'streetcar' },
    ],
    calendar: [{ service_id: 'ALL', days: EVERY_DAY, start_date: '2024-01-01', end_date: '2024-12-31' }],
    trips: [
      { trip_id: 'b1', route_id: 'B', service_id: 'ALL', start_s: 8 * 3600, end_s: 9 * 3600 },
      { trip_id: 't1', route_id: 'T', service_id: 'ALL', start_s: 8 * 3600, end_s: 9 * 3600 },
    ],
  });
  const bus = new InMemoryEventBus();
  const events: DomainEvent[] = [];
  bus.subscribe((batch) => events.push(...batch));
  return { db, bus, events };
}

t.test('the job expands new days, finalizes due ones and publishes reliability.updated', async (t) => {
  const { db, bus, events } = await setup();
  t.teardown(() => db.close());
  let now = new Date('2024-03-10T12:00:00-05:00');
  const config = parseConfig({ reliability: { horizon_days: 2 } });
  const job = await scheduleFinalize(db, bus, config, { now: () => now, runAtStart: false });
  t.teardown(() => job.stop());
  t.equal(job.timezone, 'America/Chicago', "the schedule's agency zone");

  t.same(await job.runOnce(), [], 'yesterday was expanded but is not history: nothing was observed yet');
  const days = await db.all<{ d: string }>(
    `SELECT DISTINCT strftime(service_date, '%Y-%m-%d') AS d FROM scheduled_trips ORDER BY d`,
  );
  t.same(
    days.map((r) => r.d),
    ['2024-03-09', '2024-03-10', '2024-03-11', '2024-03-12'],
  );

  await appendObservations(db, [
    obs({ service_date: '2024-03-10', trip_id: 'b1', route_id: 'B', mode: 'bus', relationship: 'canceled' }),
    obs({ service_date: '2024-03-10', trip_id: 't1', route_id: 'T', mode: 'streetcar' }),
  ]);
  // 04:30 CDT on the 11th: the 10th (DST day) is over; the 9th is before the first observation
  now = new Date('2024-03-11T04:30:00-05:00');
  const [first, second] = [job.runOnce(), job.runOnce()];
  t.equal(first, second, 'a run asked for during another joins it');
  const done = await first;
  t.same(
    done.map((d) => d.service_date),
    ['2024-03-10'],
  );
  await new Promise((r) => setImmediate(r));
  t.equal(events.length, 1);
  const ev = events[0]!;
  t.same([ev.type, ev.modes, ev.routes], ['reliability.updated', ['bus', 'streetcar'], ['B', 'T']]);
  t.match(ev.data, { service_date: '2024-03-10', final: true, trips: 2 });
  t.same((ev.data as { routes: unknown[] }).routes, [
    { mode: 'bus', route_id: 'B', scheduled: 1, delivered: 0, canceled: 1, unobserved: 0, observed: 1 },
    { mode: 'streetcar', route_id: 'T', scheduled: 1, delivered: 1, canceled: 0, unobserved: 0, observed: 1 },
  ]);
  const horizon = await db.all<{ d: string }>(
    `SELECT strftime(max(service_date), '%Y-%m-%d') AS d FROM scheduled_trips`,
  );
  t.equal(horizon[0]?.d, '2024-03-13', 'the new local day extended the horizon');
  t.same(await job.runOnce(), [], 'finalized days are not finalized again');
});

t.test('the catch-up run at start, and failures are logged not thrown', async (t) => {
  const { db, bus, events } = await setup();
  t.teardown(() => db.close());
  await db.run(`INSERT INTO scheduled_trips (service_date, schedule_id, trip_id, route_id, mode, service_id)
    VALUES (DATE '2024-05-01', 's', 'b1', 'B', 'bus', 'ALL')`);
  await appendObservations(db, [obs({ service_date: '2024-05-01', trip_id: 'b1' })]);
  const logs = captureLogs();
  const config = parseConfig({ reliability: { timezone: 'UTC', finalize_cron: '0 4 * * *' } });
  const job = await scheduleFinalize(db, bus, config, {
    now: () => new Date('2024-05-03T12:00:00Z'),
    log: logs.logger,
  });
  t.teardown(() => job.stop());
  await new Promise((r) => setImmediate(r));
  t.same(
    events.map((e) => (e.data as { service_date: string }).service_date),
    ['2024-05-01', '2024-05-02'],
  );
  await db.run('DROP TABLE reliability_finalized');
  t.same(await job.runOnce().catch(() => 'rejected'), 'rejected', 'a direct run reports its failure');
  t.throws(
    () => parseConfig({ reliability: { finalize_cron: 'every hour' } }),
    /reliability\.finalize_cron: not a valid cron/,
    'refused by the config schema',
  );
  await t.rejects(
    scheduleFinalize(db, bus, { ...config, reliability: { ...config.reliability, finalize_cron: 'every hour' } }),
    /finalize_cron/,
  );
  const quiet = await scheduleFinalize(db, bus, config, { log: logs.logger });
  await quiet.stop();
  t.match(logs.messages(), [/expanding scheduled trips failed/, /catch-up pass failed/], 'each failing step is logged');
  t.ok(
    logs.lines.every((l) => l.err?.stack),
    'with the stack',
  );
});
