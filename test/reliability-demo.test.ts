// The demo network end to end: the simulator's planned cancellations go through the real
// pipeline (fetch, decode, normalize, history writer), the finalize job closes the day on a
// controlled clock, and the API reports exactly the plan's canceled and scheduled trips per route.
import t from 'tap';
import { parseConfig } from '../core/config.ts';
import { InMemoryEventBus } from '../core/events.ts';
import { demoConfig } from '../fixtures/demo-config.ts';
import { generateDemoNetwork } from '../fixtures/demo-network.ts';
import { startSimulator } from '../fixtures/simulator.ts';
import { reliabilityRoutes } from '../http/routes/reliability.ts';
import { createPipeline } from '../pipeline/ingest.ts';
import { importGtfs } from '../store/gtfs-import.ts';
import { createHistoryWriter } from '../store/history-writer.ts';
import { liveInputsChanged, refreshScheduledTrips, scheduleFinalize } from '../store/reliability/index.ts';
import { loadScheduleIndex } from '../store/schedule-index.ts';
import { checker, loadValidator } from './support/client.ts';
import { bearer, startHarness } from './support/harness.ts';
import { silentLogger } from './support/logs.ts';

// Tuesday 2025-06-17 in America/Chicago; the poll runs at 04:00 CDT, before its first trip
const DAY = '2025-06-17';
const POLL_AT = Date.parse('2025-06-17T09:00:00Z');
// noon on the next day: the day and its late trips are over
const FINALIZE_AT = Date.parse('2025-06-18T17:00:00Z');

t.test("canceled trips per route equal the simulator's plan", async (t) => {
  const network = generateDemoNetwork(t.testdir(), { seed: 2, startDate: '2025-06-14', endDate: '2025-06-21' });
  const clock = { ms: POLL_AT };
  // a lead of two days: the one poll carries every cancellation of the day
  const sim = await startSimulator({ network, now: () => clock.ms, badBodyEvery: 0, cancellationLeadS: 2 * 86_400 });
  t.teardown(() => sim.stop());
  const raw = demoConfig(sim);
  const config = parseConfig({
    ...raw,
    feeds: (raw.feeds as Array<{ id: string }>).filter((f) => f.id === 'demo-trip-updates'),
  });

  const h = await startHarness({ routes: ({ db }) => reliabilityRoutes({ db, settings: config.reliability }) });
  t.teardown(() => h.close());
  await importGtfs(h.db, 'demo', sim.scheduleSource);
  await refreshScheduledTrips(h.db, 'demo', '2025-06-16', '2025-06-18');
  const schedule = await loadScheduleIndex(h.db, 'demo');

  const bus = new InMemoryEventBus();
  const pipeline = createPipeline({
    config,
    bus,
    history: createHistoryWriter(h.db),
    scheduleFor: () => schedule,
    now: () => clock.ms,
    log: silentLogger,
  });
  t.teardown(() => pipeline.stop());
  const poll = await pipeline.pollOnce('demo-trip-updates');
  t.equal(poll.status, 'ok');

  clock.ms = FINALIZE_AT;
  h.clock.now = FINALIZE_AT;
  const job = await scheduleFinalize(h.db, bus, config, {
    now: () => new Date(clock.ms),
    runAtStart: false,
    log: silentLogger,
  });
  t.teardown(() => job.stop());
  t.ok(
    (await job.runOnce()).some((d) => d.service_date === DAY),
    `${DAY} is finalized`,
  );

  const plan = sim.cancellations(DAY);
  const total = Object.values(plan.canceled_per_route).reduce((a, b) => a + b, 0);
  t.ok(total > 10, `the plan cancels trips (${total})`);
  t.ok(
    Object.values(plan.canceled_per_route).some((n) => n === 0),
    'and leaves some routes untouched',
  );

  const call = checker(t, h, await loadValidator(h));
  const key = bearer(await h.key('max'));
  for (const route of network.routes) {
    const path =
      route.mode === 'rail'
        ? `/api/v1/rail/${route.route_id}/reliability`
        : `/api/v1/${route.mode}/${route.route_id}/reliability`;
    const r = await call(`${path}?group=period&from=${DAY}&to=${DAY}`, key);
    t.equal(r.status, 200, path);
    const row = r.json.data[0];
    t.same(
      {
        scheduled: row.scheduled,
        canceled: row.canceled,
        canceled_unscheduled: row.canceled_unscheduled,
        final: row.final,
      },
      {
        scheduled: plan.scheduled_per_route[route.route_id],
        canceled: plan.canceled_per_route[route.route_id],
        canceled_unscheduled: 0,
        final: true,
      },
      `${route.mode} ${route.route_id}: ${plan.canceled_per_route[route.route_id]} of ` +
        `${plan.scheduled_per_route[route.route_id]} canceled`,
    );
  }

  // answers are cached until what the rollup reads changes: no trip through DuckDB meanwhile
  const route = network.routes[0]!;
  const path =
    `/api/v1/${route.mode}/${route.mode === 'rail' ? route.route_id : route.route_id}` +
    `/reliability?group=period&from=${DAY}&to=${DAY}`;
  const first = await h.get(path, key);
  const before = { ...h.api.handler.chain.cacheStats };
  const again = await h.get(path, key);
  t.equal(again.headers.get('etag'), first.headers.get('etag'));
  t.same(
    h.api.handler.chain.cacheStats,
    { ...before, hits: before.hits + 1 },
    'a repeated reliability request is served from the cache',
  );
  liveInputsChanged(h.db);
  const after = await h.get(path, key);
  t.equal(h.api.handler.chain.cacheStats.misses, before.misses + 1, 'scheduled trips changed: computed again');
  t.same(await after.json(), await first.json(), 'to the same figures');
});
