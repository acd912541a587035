// A past service day finalized by two paths at once on a fresh start: the finalize job's start-up
// backfill and the first reliability requests (issue 24, point 5: one start in four answered 500
// "duplicate key" under load). Every request must answer 200 with the day's figures, and the day
// must be stored once.
import t, { type Test } from 'tap';
import { parseConfig } from '../core/config.ts';
import { InMemoryEventBus } from '../core/events.ts';
import { reliabilityRoutes } from '../http/routes/reliability.ts';
import { scheduleFinalize } from '../store/reliability/index.ts';
import { bearer, startHarness } from './support/harness.ts';
import { appendObservations, EVERY_DAY, insertSchedule, obs, type TripSpec } from './support/reliability-builders.ts';
import { silentLogger } from './support/logs.ts';

const DAY = '2023-05-09';
const NOW = Date.parse('2024-06-01T15:00:00Z');
const ROUTES = 8;
const TRIPS_PER_ROUTE = 20;
const POLLS = 6;
const STARTS = 3;
const REQUESTS = 24;

interface Row {
  route_id: string;
  scheduled: number;
  delivered: number;
  canceled: number;
  final: boolean;
}

async function freshStart(t: Test, attempt: number): Promise<void> {
  const config = { reliability: { timezone: 'America/New_York' } };
  const h = await startHarness({
    quiet: true,
    config,
    routes: ({ db, config }) => reliabilityRoutes({ db, settings: config.reliability, windowMaxAgeMs: 0 }),
  });
  t.teardown(() => h.close());
  h.clock.now = NOW;
  const trips: TripSpec[] = [];
  for (let r = 0; r < ROUTES; r++) {
    for (let i = 0; i < TRIPS_PER_ROUTE; i++) {
      trips.push({
        trip_id: `r${r}-t${i}`,
        route_id: `R${r}`,
        service_id: 'all',
        start_s: 21_600 + i * 600,
        end_s: 24_000 + i * 600,
      });
    }
  }
  await insertSchedule(h.db, {
    schedule_id: 'race',
    timezone: 'America/New_York',
    routes: Array.from({ length: ROUTES }, (_, r) => ({ route_id: `R${r}`, route_type: 3, mode: 'bus' })),
    calendar: [{ service_id: 'all', days: EVERY_DAY, start_date: '2023-01-01', end_date: '2024-12-31' }],
    trips,
  });
  // a day of observations never finalized (history replayed while the service was stopped)
  const seen = trips.filter((_, i) => i % 5 !== 0);
  const base = Date.parse(`${DAY}T14:00:00Z`);
  await appendObservations(
    h.db,
    seen.flatMap((trip, i) =>
      Array.from({ length: POLLS }, (_, p) =>
        obs({
          trip_id: trip.trip_id,
          service_date: DAY,
          route_id: trip.route_id,
          mode: 'bus',
          relationship: i % 7 === 0 ? 'canceled' : 'scheduled',
          observed_ms: base + p * 30_000,
        }),
      ),
    ),
  );
  const key = await h.key('max');

  // the job starts (its first pass backfills the day) while the first requests arrive
  const job = scheduleFinalize(h.db, new InMemoryEventBus(), parseConfig(config), {
    now: () => new Date(NOW),
    log: silentLogger,
  });
  const responses = await Promise.all(
    Array.from({ length: REQUESTS }, async (_, i) => {
      const res = await h.get(`/api/v1/bus/R${i % ROUTES}/reliability?from=${DAY}&to=${DAY}`, bearer(key));
      return { status: res.status, body: (await res.json()) as { data: Row[] } };
    }),
  );
  t.teardown(async () => (await job).stop());
  await job;

  t.same(
    responses.map((r) => r.status),
    responses.map(() => 200),
    `start ${attempt}: every request answered 200`,
  );
  t.same(h.errors, [], 'nothing was logged as an internal error');
  const canceledPerRoute = new Map<string, number>();
  seen.forEach((trip, i) => {
    if (i % 7 === 0) canceledPerRoute.set(trip.route_id, (canceledPerRoute.get(trip.route_id) ?? 0) + 1);
  });
  for (const [i, r] of responses.entries()) {
    const route = `R${i % ROUTES}`;
    const canceled = canceledPerRoute.get(route) ?? 0;
    t.match(
      r.body.data,
      [
        {
          route_id: route,
          scheduled: TRIPS_PER_ROUTE,
          canceled,
          delivered: (TRIPS_PER_ROUTE * 4) / 5 - canceled,
          final: true,
        },
      ],
      `request ${i}: ${route} read as finalized`,
    );
  }
  const [counts] = await h.db.all<{ outcomes: number; trips: number; days: number; routes: number; marks: number }>(`
    SELECT (SELECT CAST(count(*) AS INTEGER) FROM trip_outcomes WHERE service_date = DATE '${DAY}') AS outcomes,
           (SELECT CAST(count(DISTINCT trip_id) AS INTEGER) FROM trip_outcomes WHERE service_date = DATE
             '${DAY}') AS trips,
           (SELECT CAST(count(*) AS INTEGER) FROM reliability_days WHERE service_date = DATE '${DAY}') AS days,
           (SELECT CAST(count(DISTINCT route_id) AS INTEGER) FROM reliability_days WHERE service_date = DATE
             '${DAY}') AS routes,
           (SELECT CAST(count(*) AS INTEGER) FROM reliability_finalized WHERE service_date = DATE '${DAY}') AS marks`);
  t.same(
    counts,
    { outcomes: ROUTES * TRIPS_PER_ROUTE, trips: ROUTES * TRIPS_PER_ROUTE, days: ROUTES, routes: ROUTES, marks: 1 },
    'one set of rows: a trip once, a route-day once, the day marked once',
  );
}

t.test('a past day finalized by the start-up backfill and the first requests at once', async (t) => {
  for (let attempt = 1; attempt <= STARTS; attempt++)
    await t.test(`fresh start ${attempt}`, (t) => freshStart(t, attempt));
});
