// Stop events through the real runtime into a database file, for an hour of the replayed day of
// stop-events-replay.test.ts: each one counted is stored once, an archive replayed again after a
// restart writes nothing twice, and reliability agrees (a delivered trip has stop events with
// actual times, a canceled one none).
import { join } from 'node:path';
import t from 'tap';
import { openRuntime } from '../app/runtime.ts';
import { refreshReplayedDays } from '../cli/replay-reliability.ts';
import { parseConfig } from '../core/config.ts';
import { replayFeeds } from '../pipeline/replay.ts';
import { FIXTURES_REAL, noRealFixtures } from './support/fixtures-real.ts';
import { CALTRAIN_DAY as DAY, caltrainDay, feedConfig } from './support/stop-events-day.ts';

t.test(
  'stop events stored: counted, resumed after a restart, agreeing with reliability',
  { skip: noRealFixtures() },
  async (t) => {
    const dir = t.testdir();
    // 70 minutes around the canceled trip's start, through the real runtime and a database file
    const built = await caltrainDay(dir, (truth) => {
      const canceled = truth[20]!.stops;
      return { from_ms: canceled[0]!.departure_ms - 35 * 60_000, to_ms: canceled[0]!.departure_ms + 35 * 60_000 };
    });
    const config = parseConfig({
      db_path: join(dir, 'transit.duckdb'),
      log_level: 'silent',
      schedules: [{ id: 'ct', source: join(FIXTURES_REAL, 'caltrain', 'ct.zip') }],
      feeds: [feedConfig(dir, 'ct-vp'), feedConfig(dir, 'ct-tu')],
    });
    const open = () => openRuntime(config, { stop_events_span: built.span });
    let runtime = await open();
    t.teardown(() => runtime.close());
    const first = await replayFeeds(runtime.pipeline, built.archives());
    const written = first.reduce((n, s) => n + s.stop_events.written, 0);
    const count = async () =>
      Number((await runtime.db.all<{ n: bigint }>('SELECT count(*) AS n FROM stop_events'))[0]!.n);
    t.ok(written > 100, `${written} stop events written`);
    t.equal(await count(), written, 'each one stored');
    t.same(
      await runtime.db.json(
        `SELECT count(*) AS n FROM (SELECT trip_id, stop_sequence FROM stop_events GROUP BY ALL HAVING count(*) > 1)`,
      ),
      [{ n: '0' }],
    );

    // reliability and stop events agree: a delivered trip has stop events, a canceled one none with times
    const reliability = await refreshReplayedDays(runtime.db, config, config.feeds[1]!, built.span);
    t.same(reliability.finalized, [DAY]);
    const outcomes = await runtime.db.json<{ trip_id: string; outcome: string; timed: boolean }>(
      `SELECT o.trip_id, o.outcome, EXISTS (SELECT 1 FROM stop_events e WHERE e.trip_id = o.trip_id
       AND e.service_date = o.service_date AND e.actual_arrival_at IS NOT NULL) AS timed
     FROM trip_outcomes o WHERE o.service_date = DATE '${DAY}' AND o.outcome IN ('delivered', 'canceled')`,
    );
    // a trip seen only ahead of its start (the trip updates list trips 30 min ahead) is delivered
    // with nothing run yet when the archive ends: only trips that left their first stop count
    const left = new Set(
      built.truth.filter((x) => x.stops[0]!.departure_ms < built.span.to_ms - 60_000).map((x) => x.trip.trip_id),
    );
    const delivered = outcomes.filter((o) => o.outcome === 'delivered' && left.has(o.trip_id));
    t.ok(delivered.length > 5, `${delivered.length} trips delivered`);
    t.same(
      delivered.filter((o) => !o.timed),
      [],
      'a delivered trip has stop events with actual times',
    );
    t.same(
      outcomes.filter((o) => o.timed && o.outcome !== 'delivered'),
      [],
      'a trip with actual times was delivered',
    );
    t.match(
      outcomes.find((o) => o.trip_id === built.id(20)),
      { outcome: 'canceled', timed: false },
    );

    // the same archive again, after a restart: the trips resume after what is stored
    await runtime.close();
    runtime = await open();
    const again = await replayFeeds(runtime.pipeline, built.archives());
    t.same(
      again.map((s) => s.stop_events.written),
      [0, 0],
      'an archive replayed again writes no stop event twice',
    );
    t.equal(await count(), written);
  },
);
