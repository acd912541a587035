// Reliability over real agencies' captures: Caltrain and MBTA.
import t from 'tap';
import { join } from 'node:path';
import { importGtfs } from '../gtfs-import.ts';
import { loadScheduleIndex } from '../schedule-index.ts';
import { finalizeServiceDay } from './finalize.ts';
import { FIXTURES, MISSING_FIXTURES, ingest } from '../../test/support/reliability-real-data.ts';
import { rollup } from './rollup.ts';
import { refreshScheduledTrips } from './scheduled-trips.ts';
import { openTestDb } from '../../test/support/reliability-builders.ts';

if (MISSING_FIXTURES) {
  t.plan(0, MISSING_FIXTURES);
} else {
  t.test('Caltrain: 104 trips scheduled on 2023-11-07, the evening feeds mark theirs observed', async (t) => {
    const db = await openTestDb();
    t.teardown(() => db.close());
    await importGtfs(db, 'ct', join(FIXTURES, 'caltrain', 'ct.zip'));
    t.equal(await refreshScheduledTrips(db, 'ct', '2023-11-07', '2023-11-07'), 104);
    const index = await loadScheduleIndex(db, 'ct');
    t.equal(await ingest(db, 'caltrain/ct-trip-updates.pb', 'ct', index, index.timezone), 19);
    t.equal(await ingest(db, 'caltrain/ct-vehicle-positions.pb', 'ct', index, index.timezone), 14);
    const [seen] = await db.all<{ n: number }>(
      `SELECT CAST(count(DISTINCT trip_id) AS INTEGER) AS n FROM trip_observations`,
    );

    // at the capture time (17:05 local) the day is live: trips not seen yet are pending
    const live = await rollup(
      db,
      { mode: 'rail', group: 'day', from: '2023-11-07', to: '2023-11-07' },
      { now: new Date('2023-11-08T01:05:59Z'), liveMaxAgeMs: 0 },
    );
    t.equal(live.timezone, 'America/Los_Angeles');
    const liveDelivered = live.rows.reduce((s, r) => s + r.delivered, 0);
    t.equal(liveDelivered, seen!.n, 'every trip seen in the feeds is delivered');
    t.equal(
      live.rows.reduce((s, r) => s + r.unobserved, 0),
      0,
      'nothing is unobserved while the day runs',
    );
    t.ok(live.rows.every((r) => !r.final));

    const summary = await finalizeServiceDay(db, '2023-11-07');
    t.equal(summary.trips, 104, 'every seen trip was in the schedule');
    const outcomes = await db.all<{ outcome: string; n: number }>(`SELECT outcome, CAST(count(*) AS INTEGER) AS n
      FROM trip_outcomes WHERE service_date = DATE '2023-11-07' GROUP BY outcome ORDER BY outcome`);
    t.same(outcomes, [
      { outcome: 'delivered', n: seen!.n },
      { outcome: 'unobserved', n: 104 - seen!.n },
    ]);
    const tuTrips = await db.all<{ outcome: string }>(`SELECT o.outcome FROM trip_outcomes o
      JOIN (SELECT DISTINCT trip_id FROM trip_observations WHERE source = 'trip_update') tu USING (trip_id)`);
    t.equal(tuTrips.length, 19);
    t.ok(
      tuTrips.every((r) => r.outcome === 'delivered'),
      'the 19 trip-update trips are delivered',
    );
    const [byMode] = await db.all<{ scheduled: number }>(
      `SELECT CAST(sum(scheduled) AS INTEGER) AS scheduled FROM reliability_days WHERE service_date = ` +
        `DATE '2023-11-07'`,
    );
    t.equal(byMode?.scheduled, 104);

    // the day over: line L1 saw 6 of its 46 trips, all running. 13 % of the schedule is missing
    // data, not missing service: the share of the trips seen that ran says so, and a note.
    const over = await rollup(
      db,
      { mode: 'rail', routeId: 'L1', group: 'day', from: '2023-11-07', to: '2023-11-07' },
      { now: new Date('2023-11-09T12:00:00Z'), liveMaxAgeMs: 0 },
    );
    t.match(over.rows, [
      {
        scheduled: 46,
        delivered: 6,
        unobserved: 40,
        delivered_pct: 13.04,
        observed: 6,
        delivered_pct_of_observed: 100,
        rolling_7d: { delivered_pct: 2.61, observed: 6, delivered_pct_of_observed: 100 },
      },
    ]);
    t.match(over.notes, [
      /never observed in the row \(L1 2023-11-07: 40 of 46\)/,
      /7-day figures were never observed in the row \(L1 2023-11-07: 224 of 230\)/,
    ]);
  });

  t.test('MBTA 2022-02-01: 141 CANCELED trips are canceled without a schedule', async (t) => {
    const db = await openTestDb();
    t.teardown(() => db.close());
    t.equal(await ingest(db, 'mbta/tripupdates-2022-02-01-canceled.pb', 'mbta', undefined, 'America/New_York'), 1479);
    const summary = await finalizeServiceDay(db, '2022-02-01');
    t.equal(summary.trips, 1479);
    const rows = await db.all<{ outcome: string; in_schedule: boolean; n: number }>(`
      SELECT outcome, in_schedule, CAST(count(*) AS INTEGER) AS n FROM trip_outcomes
      WHERE service_date = DATE '2022-02-01' GROUP BY ALL ORDER BY ALL`);
    const count = (outcome: string): number => rows.filter((r) => r.outcome === outcome).reduce((s, r) => s + r.n, 0);
    t.equal(count('canceled'), 141);
    t.ok(
      rows.every((r) => !r.in_schedule),
      'no static schedule: every trip is unknown to it',
    );
    const [sums] = await db.all<Record<string, number>>(`
      SELECT CAST(sum(scheduled) AS INTEGER) AS scheduled, CAST(sum(canceled) AS INTEGER) AS canceled,
             CAST(sum(canceled_unscheduled) AS INTEGER) AS canceled_unscheduled, CAST(sum(added) AS INTEGER) AS added,
             CAST(sum(partially_canceled) AS INTEGER) AS partially_canceled
      FROM reliability_days WHERE service_date = DATE '2022-02-01'`);
    t.same(
      { ...sums, partially_canceled: undefined },
      {
        scheduled: 0,
        canceled: 141,
        canceled_unscheduled: 141,
        added: 1479 - 141,
        partially_canceled: undefined,
      },
      'canceled counted as canceled, the running unknown trips as added',
    );
    t.ok((sums?.partially_canceled ?? 0) > 0, 'trips with SKIPPED stops are partially canceled');
    const [blue] = await db.all<{ canceled: number }>(`SELECT canceled FROM reliability_days WHERE route_id = 'Blue'`);
    t.ok((blue?.canceled ?? 0) > 0, 'cancellations are kept per route');
  });
}
