// The performance endpoints on a real server, every response checked against the served OpenAPI
// document. Data: the reliability test schedule (test/support/reliability-data.ts) and the stop
// events of bus 39 of test/support/performance-data.ts, whose figures are known by construction.
import t from 'tap';
import { parseConfig } from '../core/config.ts';
import { performanceRoutes } from '../http/routes/performance.ts';
import { checker, expectProblem, loadValidator } from './support/client.ts';
import { bearer, startHarness } from './support/harness.ts';
import {
  datesBetween,
  FIRST_DAY,
  LAST_FINALIZED,
  seedReliability,
  TIMEZONE,
  TODAY,
} from './support/reliability-data.ts';
import { seedStopEvents } from './support/performance-data.ts';
import { openSse } from './support/sse-client.ts';
import { startStreamHarness, type StreamHarness } from './support/streaming.ts';

const settings = parseConfig({}).performance;

t.test('performance endpoints', async (t) => {
  const h = await startHarness({
    routes: ({ db, config }) =>
      performanceRoutes({ db, settings: config.reliability, performance: config.performance, windowMaxAgeMs: 0 }),
  });
  t.teardown(() => h.close());
  // stop events first: the reliability finalize of each day stores its performance rows with it
  await seedStopEvents(h.db);
  await seedReliability(h.db);
  const call = checker(t, h, await loadValidator(h));
  const key = bearer(await h.key('regular'));

  t.test('a period of finalized days: every figure, known by construction', async (t) => {
    const r = await call(`/api/v1/bus/39/performance?group=period&from=${FIRST_DAY}&to=${LAST_FINALIZED}`, key);
    t.equal(r.status, 200);
    t.equal(r.headers.get('x-meter-unit'), 'request');
    const days = datesBetween(FIRST_DAY, LAST_FINALIZED).length;
    t.same(r.json.data, [
      {
        id: `39:${FIRST_DAY}/${LAST_FINALIZED}`,
        route_id: '39',
        period: `${FIRST_DAY}/${LAST_FINALIZED}`,
        period_start: FIRST_DAY,
        period_end: LAST_FINALIZED,
        service_day: 'all',
        days,
        final: true,
        days_observed: days,
        observed_stop_events: 6 * days,
        delays_observed: 6 * days,
        on_time_pct: 50,
        early_pct: 0,
        late_pct: 50,
        headways_observed: 3 * days,
        median_headway_s: 7_570,
        scheduled_median_headway_s: 7_200,
        headway_on_time_pct: 100,
        bunched_pct: 0,
        // Σh²/2Σh of equal headways is h/2: (7570 − 7200) / 2
        excess_wait_s: 185,
        complete_trips: 2 * days,
        median_travel_time_s: 1_200,
        p90_travel_time_s: 1_200,
        dwells_observed: 2 * days,
        median_dwell_s: 30,
        prediction_accuracy: [
          { horizon: '0-3', predictions: 3 * 2 * days, accurate_pct: 100, median_abs_error_s: 20 },
          { horizon: '3-6', predictions: 0, accurate_pct: null, median_abs_error_s: null },
          { horizon: '6-12', predictions: 0, accurate_pct: null, median_abs_error_s: null },
          { horizon: '12-30', predictions: 0, accurate_pct: null, median_abs_error_s: null },
        ],
        notes: ['prediction_accuracy 3-6, 6-12, 12-30: fewer than 10 predictions judged'],
      },
    ]);
    t.match(r.json.meta, {
      mode: 'bus',
      route_id: '39',
      group: 'period',
      timezone: TIMEZONE,
      on_time_window_s: [-60, 300],
      min_observations: 10,
      days_without_observations: [],
    });
  });

  t.test('a day: too few observations are null with a note, never 0', async (t) => {
    const r = await call(`/api/v1/bus/39/performance?from=${LAST_FINALIZED}&to=${TODAY}`, key);
    t.equal(r.status, 200);
    const [finalized, today] = r.json.data;
    t.match(finalized, { period: LAST_FINALIZED, final: true, delays_observed: 6, on_time_pct: null, late_pct: null });
    t.match(finalized.notes, [/^on_time_pct, early_pct, late_pct: 6 arrival delays, fewer than the 10 needed/]);
    t.match(today, { period: TODAY, final: false, delays_observed: 6, on_time_pct: null }, 'today is live');
  });

  t.test('the on-time window is configured', async (t) => {
    const h2 = await startHarness({
      routes: ({ db, config }) =>
        performanceRoutes({ db, settings: config.reliability, performance: config.performance, windowMaxAgeMs: 0 }),
      config: { performance: { on_time_window_s: [-60, 600], min_observations: 5 } },
    });
    t.teardown(() => h2.close());
    await seedStopEvents(h2.db);
    await seedReliability(h2.db);
    const r = await h2.get(`/api/v1/bus/39/performance?from=${LAST_FINALIZED}&to=${LAST_FINALIZED}`, key);
    t.equal(r.status, 401, 'keys are per database');
    const k2 = bearer(await h2.key('regular'));
    const body = await (
      await h2.get(`/api/v1/bus/39/performance?from=${LAST_FINALIZED}&to=${LAST_FINALIZED}`, k2)
    ).json();
    t.match(body.data[0], { on_time_pct: 100, late_pct: 0 }, '400 s late is on time within +600 s');
    t.same(body.meta.on_time_window_s, [-60, 600]);
  });

  t.test('errors as reliability: unknown route, outside the window, bad parameters, no rail rows', async (t) => {
    expectProblem(t, await call('/api/v1/bus/nope/performance', key), 404, 'not_found', 'route_id');
    expectProblem(t, await call('/api/v1/bus/39/performance?from=2020-01-01', key), 400, 'outside_retention', 'from');
    expectProblem(t, await call('/api/v1/bus/39/performance?group=month', key), 400, 'invalid_parameter', 'group');
    expectProblem(
      t,
      await call(`/api/v1/bus/39/performance?from=${LAST_FINALIZED}&to=${FIRST_DAY}`, key),
      400,
      'invalid_parameter',
      'to',
    );
    expectProblem(t, await call('/api/v1/rail/Red/performance', key), 404, 'no_retained_rows');
    expectProblem(t, await call('/api/v1/bus/39/performance'), 401, 'unauthorized');
  });
});

t.test('performance as an event stream: reset with the body', async (t) => {
  let h: StreamHarness | undefined;
  const deps = {
    get db() {
      return h!.db;
    },
    settings: { timezone: TIMEZONE, service_day_end: '04:00' },
    performance: settings,
    windowMaxAgeMs: 0,
  };
  h = await startStreamHarness({ routes: performanceRoutes(deps), quiet: true });
  t.teardown(() => h!.close());
  await seedStopEvents(h.db);
  await seedReliability(h.db);
  const key = await h.key('regular');
  const sse = await openSse(
    `${h.url}/api/v1/bus/39/performance?group=period&from=${FIRST_DAY}&to=${LAST_FINALIZED}`,
    bearer(key),
  );
  t.teardown(() => sse.close());
  t.equal(sse.status, 200);
  await sse.waitFor((events) => events.some((e) => e.event === 'reset'));
  const reset = JSON.parse(sse.events.find((e) => e.event === 'reset')!.data);
  t.match(reset.data, [{ period: `${FIRST_DAY}/${LAST_FINALIZED}`, on_time_pct: 50, excess_wait_s: 185 }]);
});
