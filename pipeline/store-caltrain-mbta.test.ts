// Real captures through the pipeline into a real DuckDB file: Caltrain resolved against ct.zip,
// MBTA's cancellations stored, alerts restored after a restart.
import t from 'tap';
import { InMemoryEventBus } from '../core/events.ts';
import { loadLatestAlerts } from '../store/alerts-store.ts';
import { withStoreHarness } from '../test/support/pipeline-store.ts';

withStoreHarness(
  { ct: 'caltrain/ct.zip' },
  [
    { id: 'ct-tu', file: 'caltrain/ct-trip-updates.pb', schedule_id: 'ct' },
    { id: 'ct-vp', file: 'caltrain/ct-vehicle-positions.pb', schedule_id: 'ct' },
    { id: 'mbta-tu', file: 'mbta/tripupdates-2022-02-01-canceled.pb' },
    { id: 'mbta-alerts', file: 'mbta/alerts.pb' },
  ],
  (harness) => {
    t.test('Caltrain trip updates fully matched to ct.zip', async (t) => {
      const h = harness();
      const pipeline = h.pipelineAt('2023-11-08T01:05:40Z', ['ct-tu', 'ct-vp']);
      const [tu, vp] = await pipeline.pollAllOnce();
      t.match(tu, { status: 'ok', trip_updates: 19, rejected: {} });
      t.match(vp, { status: 'ok', vehicles: 14, rejected: {} });
      t.match(
        tu!.matching,
        {
          trips: 19,
          matched: 19,
          previous_day: 0,
          match_rate: 1,
          strategies: { exact: { matched: 19, unmatched: 0 } },
        },
        '19 of 19 matched by id',
      );
      t.match(vp!.matching, { trips: 14, matched: 14, match_rate: 1 });
      t.equal(
        await h.count(
          `SELECT count(DISTINCT trip_id) AS n FROM trip_observations WHERE feed_id = 'ct-tu' AND in_schedule`,
        ),
        19,
        'all 19 trips in the schedule',
      );
      t.equal(
        await h.count(
          `SELECT count(*) AS n FROM trip_observations WHERE feed_id = 'ct-tu' AND service_date = DATE '2023-11-07'`,
        ),
        19,
        'evening of the 7th, local',
      );
      const arrivals = pipeline.state.arrivals();
      t.ok(arrivals.length >= 220, `${arrivals.length} arrivals (220 updates, plus later stops by propagation)`);
      t.ok(
        arrivals.every((a) => a.in_schedule && a.scheduled_ms !== null && a.predicted_ms !== null && a.mode === 'rail'),
      );
      t.ok(
        arrivals.every((a) => Math.abs(a.delay_s!) < 3600),
        'delays are minutes, not days: the service day origin is right',
      );
      t.equal(
        await h.count(`SELECT count(*) AS n FROM arrivals WHERE feed_id = 'ct-tu' AND scheduled_at IS NOT NULL`),
        arrivals.length,
        'stored',
      );
      t.equal(pipeline.state.vehicles('rail').length, 14, 'vehicles get their mode from the schedule');
      t.equal(
        await h.count(`SELECT count(*) AS n FROM feed_polls WHERE feed_id IN ('ct-tu', 'ct-vp') AND status = 'ok'`),
        2,
      );
      await pipeline.stop();
    });

    t.test("MBTA's 141 CANCELED trips and 2,025 SKIPPED stops stored as trip observations", async (t) => {
      const h = harness();
      const bus = new InMemoryEventBus();
      const canceled: unknown[] = [];
      bus.subscribe((batch) => canceled.push(...batch.filter((e) => e.type === 'trip.canceled')));
      const pipeline = h.pipelineAt('2022-02-01T18:44:20Z', ['mbta-tu'], { bus });
      const [poll] = await pipeline.pollAllOnce();
      t.match(poll, { status: 'ok', trip_updates: 1479 });
      t.equal(
        await h.count(
          `SELECT count(*) AS n FROM trip_observations WHERE feed_id = 'mbta-tu' AND relationship = 'canceled'`,
        ),
        141,
      );
      t.equal(
        await h.count(
          `SELECT count(*) AS n FROM trip_observations WHERE feed_id = 'mbta-tu' AND relationship = 'added'`,
        ),
        29,
      );
      t.equal(await h.count(`SELECT sum(skipped_stops) AS n FROM trip_observations WHERE feed_id = 'mbta-tu'`), 2025);
      t.equal(
        await h.count(`SELECT count(*) AS n FROM arrivals WHERE feed_id = 'mbta-tu' AND delay_state = 'skipped'`),
        2025,
      );
      await new Promise((r) => setImmediate(r));
      t.equal(canceled.length, 141, 'one trip.canceled per canceled trip');
      await pipeline.stop();
    });

    t.test('alerts survive a restart: restored from the store, no new versions for the same content', async (t) => {
      const h = harness();
      const first = h.pipelineAt('2017-12-23T13:00:00Z', ['mbta-alerts']);
      await first.pollAllOnce();
      await first.stop();
      t.equal(await h.count(`SELECT count(*) AS n FROM alert_versions WHERE feed_id = 'mbta-alerts'`), 51);
      const restored = await loadLatestAlerts(h.db, { feedId: 'mbta-alerts' });
      t.equal(restored.length, 51);
      const second = h.pipelineAt('2017-12-23T13:05:00Z', ['mbta-alerts'], { initialAlerts: restored });
      t.equal(second.state.alerts().length, 51);
      const [poll] = await second.pollAllOnce();
      t.match(
        poll,
        { status: 'duplicate', alerts: 51, stored: 0 },
        'the same snapshot after the restart: known, nothing new to store',
      );
      await second.stop();
      t.equal(await h.count(`SELECT count(*) AS n FROM alert_versions WHERE feed_id = 'mbta-alerts'`), 51);
    });
  },
);
