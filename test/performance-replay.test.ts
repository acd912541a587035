// Performance measures from a replayed day, checked against the same figures computed here from
// the true times alone. Caltrain's real schedule, every trip of 2023-11-07 with true times on a
// 30 s grid and vehicle positions polled on it, so each stop event lands on the truth: on-time
// shares, headways, bunching, excess wait, travel and dwell times must then equal what the true
// times give, computed independently below. The day's stop events come from the real pipeline
// and replay (history in memory) and are stored by the real history writer; the figures are read
// live (the day not finalized) and again once the day is stored with the reliability finalize.
import t from 'tap';
import { parseConfig } from '../core/config.ts';
import { InMemoryEventBus } from '../core/events.ts';
import { silentLogger } from '../core/logger.ts';
import type { ScheduleIndex } from '../core/ports.ts';
import { createPipeline } from '../pipeline/ingest.ts';
import { replayFeeds } from '../pipeline/replay.ts';
import { Db } from '../store/db.ts';
import { importGtfs } from '../store/gtfs-import.ts';
import { createHistoryWriter } from '../store/history-writer.ts';
import { performanceRollup, storePerformanceDay, type PerformanceRow } from '../store/performance/index.ts';
import { FIXTURES_REAL, noRealFixtures } from './support/fixtures-real.ts';
import { MemoryHistory } from './support/pipeline-fakes.ts';
import { CALTRAIN_DAY as DAY, caltrainDay, feedConfig, type TrueTrip } from './support/stop-events-day.ts';
import { join } from 'node:path';

const SETTINGS = { on_time_window_s: [-60, 300] as [number, number], min_observations: 10 };

const median = (xs: number[]): number | null => quantile(xs, 0.5);
function quantile(xs: number[], q: number): number | null {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  const pos = (s.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return s[lo]! + (s[hi]! - s[lo]!) * (pos - lo);
}
const pct = (part: number, whole: number) => Math.round((10_000 * part) / whole) / 100;
const round = (v: number | null) => (v === null ? null : Math.round(v));

/** The figures of one route's day, from the true times and the schedule only. */
function expected(truth: TrueTrip[], schedule: ScheduleIndex, routeId: string) {
  const trips = truth.filter((x) => x.trip.route_id === routeId);
  const delays: number[] = [];
  const dwells: number[] = [];
  const travel: number[] = [];
  // departures by direction and station: the trip's, and the schedule's of every trip of the route that day
  const actual = new Map<string, number[]>();
  const scheduled = new Map<string, number[]>();
  const origin = Date.parse(`${DAY}T00:00:00-08:00`);
  const place = (dir: number | null, stopId: string) => `${dir}|${schedule.stop(stopId)?.station_id ?? stopId}`;
  const own: { key: string; dep: number; sched: number }[] = [];
  for (const { trip, stops } of trips) {
    const times = schedule.stopTimes(trip.trip_id);
    stops.forEach((s, i) => {
      const first = i === 0;
      const last = i === stops.length - 1;
      // the first stop is measured by its departure, the last by its arrival
      const arrival = first ? s.departure_ms : s.arrival_ms;
      const departure = last ? s.arrival_ms : s.departure_ms;
      delays.push(Math.round((arrival - s.scheduled_ms) / 1000));
      if (!first && !last) dwells.push(Math.round((departure - arrival) / 1000));
      const key = place(trip.direction_id, s.stop_id);
      actual.set(key, [...(actual.get(key) ?? []), departure]);
      own.push({ key, dep: departure, sched: origin + (times[i]!.departure_s ?? times[i]!.arrival_s!) * 1000 });
    });
    travel.push(Math.round((stops.at(-1)!.arrival_ms - stops[0]!.departure_ms) / 1000));
  }
  for (const trip of schedule.tripsOfRoute!(routeId)) {
    if (!schedule.runsOn(trip.service_id, DAY)) continue;
    for (const st of schedule.stopTimes(trip.trip_id)) {
      const key = place(trip.direction_id, st.stop_id);
      scheduled.set(key, [...(scheduled.get(key) ?? []), origin + (st.departure_s ?? st.arrival_s!) * 1000]);
    }
  }
  const before = (list: number[] | undefined, x: number) =>
    (list ?? [])
      .filter((v) => v < x)
      .sort((a, b) => a - b)
      .at(-1);
  const hs: number[] = [];
  const ss: number[] = [];
  const pairs: [number, number][] = [];
  for (const o of own) {
    const prev = before(actual.get(o.key), o.dep);
    if (prev === undefined) continue;
    const h = Math.round((o.dep - prev) / 1000);
    hs.push(h);
    const sPrev = before(scheduled.get(o.key), o.sched);
    if (sPrev === undefined) continue;
    const s = Math.round((o.sched - sPrev) / 1000);
    ss.push(s);
    if (s > 0) pairs.push([h, s]);
  }
  const wait = (xs: number[]) => xs.reduce((a, x) => a + x * x, 0) / (2 * xs.reduce((a, x) => a + x, 0));
  const early = delays.filter((d) => d < -60).length;
  const late = delays.filter((d) => d > 300).length;
  // too few observations: null, as the API says (min_observations)
  const enough = <T>(n: number, v: T): T | null => (n >= SETTINGS.min_observations ? v : null);
  return {
    delays_observed: delays.length,
    on_time_pct: enough(delays.length, pct(delays.length - early - late, delays.length)),
    early_pct: enough(delays.length, pct(early, delays.length)),
    late_pct: enough(delays.length, pct(late, delays.length)),
    headways_observed: hs.length,
    median_headway_s: enough(hs.length, round(median(hs))),
    scheduled_median_headway_s: enough(hs.length, round(median(ss))),
    headway_on_time_pct: enough(
      pairs.length,
      pct(pairs.filter(([h, s]) => h >= 0.75 * s && h <= 1.25 * s).length, pairs.length),
    ),
    bunched_pct: enough(pairs.length, pct(pairs.filter(([h, s]) => h <= 0.5 * s).length, pairs.length)),
    excess_wait_s: enough(pairs.length, Math.round(wait(pairs.map(([h]) => h)) - wait(pairs.map(([, s]) => s)))),
    complete_trips: travel.length,
    median_travel_time_s: enough(travel.length, round(median(travel))),
    p90_travel_time_s: enough(travel.length, round(quantile(travel, 0.9))),
    median_dwell_s: enough(dwells.length, round(median(dwells))),
  };
}

const figures = (r: PerformanceRow) => ({
  delays_observed: r.delays_observed,
  on_time_pct: r.on_time_pct,
  early_pct: r.early_pct,
  late_pct: r.late_pct,
  headways_observed: r.headways_observed,
  median_headway_s: r.median_headway_s,
  scheduled_median_headway_s: r.scheduled_median_headway_s,
  headway_on_time_pct: r.headway_on_time_pct,
  bunched_pct: r.bunched_pct,
  excess_wait_s: r.excess_wait_s,
  complete_trips: r.complete_trips,
  median_travel_time_s: r.median_travel_time_s,
  p90_travel_time_s: r.p90_travel_time_s,
  median_dwell_s: r.median_dwell_s,
});

t.test('performance figures of a replayed day equal those of its true times', { skip: noRealFixtures() }, async (t) => {
  const dir = t.testdir();
  const { schedule, truth, archives } = await caltrainDay(dir, undefined, { quirks: false, aligned: true });
  const history = new MemoryHistory();
  const pipeline = createPipeline({
    config: parseConfig({
      schedules: [{ id: 'ct', source: 'ct.zip' }],
      feeds: [feedConfig(dir, 'ct-vp'), feedConfig(dir, 'ct-tu')],
    }),
    bus: new InMemoryEventBus(),
    history,
    scheduleFor: () => schedule,
    log: silentLogger,
  });
  await replayFeeds(pipeline, archives());
  await pipeline.stop();

  const db = await Db.open(':memory:');
  t.teardown(() => db.close());
  await importGtfs(db, 'ct', join(FIXTURES_REAL, 'caltrain', 'ct.zip'));
  const events = history.batches.flatMap((b) => b.stopEvents ?? []);
  await createHistoryWriter(db).write({
    vehicles: [],
    arrivals: [],
    trips: [],
    alertVersions: [],
    polls: [],
    stopEvents: events,
  });
  const exact = events.filter((e) => e.actual_arrival_ms !== null);
  t.ok(exact.length > 1_000, `${exact.length} stop events with times`);

  const routes = [...new Set(truth.map((x) => x.trip.route_id))].sort();
  const now = new Date('2023-11-20T12:00:00Z');
  const ask = (routeId: string, group: 'day' | 'week' | 'period' = 'day', split = false) =>
    performanceRollup(db, { mode: 'rail', routeId, group, from: DAY, to: DAY, split }, SETTINGS, {
      timezone: 'America/Los_Angeles',
      now,
    });
  const live = new Map<string, PerformanceRow>();
  for (const route of routes) {
    const result = await ask(route);
    t.equal(result.rows.length, 1);
    const row = result.rows[0]!;
    live.set(route, row);
    t.match(row, { period: DAY, final: false, days: 1, days_observed: 1 }, `${route}: a live day`);
    t.same(figures(row), expected(truth, schedule, route), `${route}: the true times' figures`);
  }

  // finalized: the same figures, from performance_days
  await db.transaction((c) => storePerformanceDay(c, DAY, now.toISOString()));
  for (const route of routes) {
    const row = (await ask(route)).rows[0]!;
    t.equal(row.final, true);
    t.same({ ...row, final: false }, live.get(route), `${route}: stored and live agree`);
  }
  // a period of one day is that day; split puts a Tuesday under weekday
  // a figure from too few observations is null with a note, never 0
  const few = [...live.values()].find((r) => r.median_travel_time_s === null);
  t.ok(few, 'a route with fewer than 10 complete trips that day');
  t.match(few!.notes, [/^median_travel_time_s, p90_travel_time_s: \d complete trips, fewer than the 10 needed/]);
  const [first] = routes;
  t.same(figures((await ask(first!, 'period')).rows[0]!), figures(live.get(first!)!));
  t.match((await ask(first!, 'week', true)).rows, [{ period: '2023-W45', service_day: 'weekday', days: 1 }]);
  // predictions were judged against the vehicles, in every horizon
  const accuracy = live.get(first!)!.prediction_accuracy;
  t.same(
    accuracy.map((a) => a.horizon),
    ['0-3', '3-6', '6-12', '12-30'],
  );
  t.ok(accuracy.every((a) => a.predictions >= 10 && a.accurate_pct !== null && a.median_abs_error_s !== null));
});
