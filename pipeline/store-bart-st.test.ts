// BART and Sound Transit captures resolved against their own static schedules, stored in DuckDB.
import t from 'tap';
import { withStoreHarness } from '../test/support/pipeline-store.ts';

withStoreHarness(
  { bart: 'bart/bart-rt.zip', st: 'sound-transit/st.zip' },
  [
    { id: 'bart-tu', file: 'bart/bart-trip-updates.pb', schedule_id: 'bart' },
    { id: 'st-tu', file: 'sound-transit/trip_update_1683740698.pb', schedule_id: 'st' },
  ],
  (harness) => {
    t.test('BART: 65 of 91 trips matched; ADDED and unknown trips flagged, not dropped', async (t) => {
      const h = harness();
      const bart = h.pipelineAt('2019-08-07T17:45:30Z', ['bart-tu']);
      const [poll] = await bart.pollAllOnce();
      t.match(
        poll!.matching,
        {
          trips: 91,
          matched: 65,
          unmatched: 26,
          ambiguous: 0,
          previous_day: 0,
          strategies: { exact: { matched: 65, unmatched: 26 } },
        },
        'the match rate says what the README says: 65 of 91',
      );
      const index = h.schedules.get('bart')!;
      const trips = await h.db.all<{ trip_id: string; in_schedule: boolean; relationship: string }>(
        `SELECT trip_id, in_schedule, relationship FROM trip_observations WHERE feed_id = 'bart-tu'`,
      );
      t.equal(trips.length, 91);
      t.equal(trips.filter((o) => index.trip(o.trip_id)).length, 65, '65 of 91 trip ids in bart-rt.zip');
      t.ok(trips.every((o) => o.in_schedule === (index.trip(o.trip_id) !== undefined && o.relationship !== 'added')));
      t.equal(
        await h.count(`SELECT count(*) AS n FROM arrivals WHERE feed_id = 'bart-tu' AND station_id IS NOT NULL`),
        bart.state.arrivals().length,
      );
      await bart.stop();
    });

    t.test('Sound Transit: scheduled trips matched, DUPLICATED ones kept as extra service', async (t) => {
      const h = harness();
      const st = h.pipelineAt('2023-05-10T17:45:00Z', ['st-tu']);
      const [poll] = await st.pollAllOnce();
      t.match(poll!.matching, { trips: 14, matched: 14, unmatched: 0, match_rate: 1 }, 'every trip matched');
      const trips = await h.db.all<{ relationship: string; in_schedule: boolean; mode: string }>(
        `SELECT relationship, in_schedule, mode FROM trip_observations WHERE feed_id = 'st-tu'`,
      );
      t.equal(trips.length, 14);
      t.ok(trips.some((o) => o.relationship === 'duplicated'));
      t.ok(
        trips.every((o) => o.in_schedule === (o.relationship === 'scheduled')),
        'DUPLICATED trips are extra service',
      );
      t.ok(
        trips.every((o) => o.mode === 'streetcar' || o.mode === 'rail'),
        'Link light rail: route_type 0 or 2',
      );
      await st.stop();
    });
  },
);
