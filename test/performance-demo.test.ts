// Reliability and stop events agree over the demo network: its simulator's vehicle positions and
// trip updates polled every 30 s of simulated time for an hour and a half, through the real
// pipeline into the store, the day finalized. A trip reliability calls delivered (or partially
// canceled) has stop events with actual times, a canceled one has none, and no trip with actual
// times is anything else; the performance figures of the day's busiest bus route come out of them.
import t from 'tap';
import { parseConfig } from '../core/config.ts';
import { InMemoryEventBus } from '../core/events.ts';
import { silentLogger } from '../core/logger.ts';
import { demoConfig } from '../fixtures/demo-config.ts';
import { generateDemoNetwork } from '../fixtures/demo-network.ts';
import { startSimulator } from '../fixtures/simulator.ts';
import { createPipeline } from '../pipeline/ingest.ts';
import { Db } from '../store/db.ts';
import { importGtfs } from '../store/gtfs-import.ts';
import { createHistoryWriter } from '../store/history-writer.ts';
import { performanceRollup } from '../store/performance/index.ts';
import { finalizeServiceDay, refreshScheduledTrips } from '../store/reliability/index.ts';
import { loadScheduleIndex } from '../store/schedule-index.ts';

// Tuesday 2025-06-17 in America/Chicago, 07:00 to 08:30 CDT
const DAY = '2025-06-17';
const FROM = Date.parse('2025-06-17T12:00:00Z');
const TO = Date.parse('2025-06-17T13:30:00Z');

t.test('delivered trips have stop events with times, canceled ones none', async (t) => {
  const network = generateDemoNetwork(t.testdir(), { seed: 2, startDate: '2025-06-14', endDate: '2025-06-21' });
  const clock = { ms: FROM };
  const sim = await startSimulator({ network, now: () => clock.ms, badBodyEvery: 0 });
  t.teardown(() => sim.stop());
  const raw = demoConfig(sim);
  const config = parseConfig({
    ...raw,
    feeds: (raw.feeds as Array<{ id: string }>).filter((f) => f.id === 'demo-vehicles' || f.id === 'demo-trip-updates'),
  });
  const db = await Db.open(':memory:');
  t.teardown(() => db.close());
  await importGtfs(db, 'demo', sim.scheduleSource);
  await refreshScheduledTrips(db, 'demo', '2025-06-16', '2025-06-18');
  const schedule = await loadScheduleIndex(db, 'demo');
  const pipeline = createPipeline({
    config,
    bus: new InMemoryEventBus(),
    history: createHistoryWriter(db),
    scheduleFor: () => schedule,
    now: () => clock.ms,
    log: silentLogger,
  });
  let written = 0;
  for (; clock.ms <= TO; clock.ms += 30_000) {
    for (const feed of ['demo-vehicles', 'demo-trip-updates']) {
      const poll = await pipeline.pollOnce(feed);
      written += poll.stop_events?.written ?? 0;
    }
  }
  for (const counts of (await pipeline.closeTrips(clock.ms)).values()) written += counts.written;
  await pipeline.stop();
  t.ok(written > 500, `${written} stop events written`);
  await finalizeServiceDay(db, DAY, { now: new Date('2025-06-18T17:00:00Z') });

  // trips that ran inside the polled span, start to end, with room for delays
  const outcomes = await db.json<{ trip_id: string; outcome: string; inside: boolean; timed: boolean }>(
    `SELECT o.trip_id, o.outcome,
       s.scheduled_start_at >= to_timestamp(${FROM / 1000}) + INTERVAL 5 MINUTE
         AND s.scheduled_end_at <= to_timestamp(${TO / 1000}) - INTERVAL 20 MINUTE AS inside,
       EXISTS (SELECT 1 FROM stop_events e WHERE e.service_date = o.service_date AND e.trip_id = o.trip_id
         AND e.actual_arrival_at IS NOT NULL) AS timed
     FROM trip_outcomes o JOIN scheduled_trips s USING (service_date, trip_id)
     WHERE o.service_date = DATE '${DAY}'`,
  );
  // partially canceled trips ran too (reliability counts them delivered), skipping stops
  const ran = (o: { outcome: string }) => o.outcome === 'delivered' || o.outcome === 'partially_canceled';
  const delivered = outcomes.filter((o) => o.inside && ran(o));
  const canceled = outcomes.filter((o) => o.outcome === 'canceled');
  t.ok(delivered.length > 20, `${delivered.length} trips delivered within the span`);
  t.same(
    delivered.filter((o) => !o.timed).map((o) => o.trip_id),
    [],
    'each has stop events with actual times',
  );
  t.same(
    canceled.filter((o) => o.timed).map((o) => o.trip_id),
    [],
    `none of the ${canceled.length} canceled trips has actual times`,
  );
  t.same(
    outcomes.filter((o) => o.timed && !ran(o)).map((o) => `${o.trip_id} ${o.outcome}`),
    [],
    'a trip with actual times was delivered',
  );
  const [busiest] = await db.all<{ route_id: string }>(
    `SELECT route_id FROM stop_events WHERE mode = 'bus' AND service_date = DATE '${DAY}'
     GROUP BY ALL ORDER BY count(*) DESC, route_id LIMIT 1`,
  );
  const result = await performanceRollup(
    db,
    { mode: 'bus', routeId: busiest!.route_id, group: 'day', from: DAY, to: DAY },
    config.performance,
    { now: new Date('2025-06-18T17:00:00Z') },
  );
  t.match(result.rows, [{ final: true, on_time_pct: Number, median_headway_s: Number, median_dwell_s: Number }]);
});
