// Stop events from a replayed day: Caltrain's real schedule, every trip of 2023-11-07 given true
// arrival and departure times, written as the vehicle positions and trip updates two feeds would
// have served every 30 s, and replayed together (interleaved by header time) through the real
// pipeline. The stop events must land within one poll of the truth, each stop once; the trips that
// misbehave must be counted and must not rewrite or invert anything. The whole day runs with its
// history in memory (a DuckDB commit per poll would make it minutes); an hour of it runs through
// the real runtime into a database file in stop-events-stored.test.ts, for what storing adds.
import t from 'tap';
import { parseConfig } from '../core/config.ts';
import { InMemoryEventBus } from '../core/events.ts';
import { silentLogger } from '../core/logger.ts';
import type { StopEvent, StopEventAnomaly, StopEventCounts } from '../core/types.ts';
import { createPipeline } from '../pipeline/ingest.ts';
import { replayFeeds, type ReplaySummary } from '../pipeline/replay.ts';
import type { LoadedScheduleIndex } from '../store/schedule-index.ts';
import { noRealFixtures } from './support/fixtures-real.ts';
import { MemoryHistory } from './support/pipeline-fakes.ts';
import { CALTRAIN_DAY as DAY, caltrainDay, feedConfig, type TrueTrip } from './support/stop-events-day.ts';

const POLL_MS = 30_000;

const sum = (a: StopEventCounts['anomalies'], b: StopEventCounts['anomalies']) => {
  const out = { ...a };
  for (const [k, n] of Object.entries(b) as [StopEventAnomaly, number][]) out[k] = (out[k] ?? 0) + n;
  return out;
};

t.test('a replayed day of vehicle positions and trip updates', { skip: noRealFixtures() }, async (t) => {
  const dir = t.testdir();
  const { schedule, truth, id, quirks, span, day, archives } = await caltrainDay(dir);
  t.ok(truth.length > 60, `${truth.length} trips of 8 stops or more run on ${DAY}`);
  // the real pipeline and replay; history kept in memory (stored rows: the next test)
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
  const order: string[] = [];
  const summaries = await replayFeeds(pipeline, archives(), { onSnapshot: (poll) => order.push(poll.feed_id) });
  await pipeline.stop();
  t.equal(order.length, 2 * day.polls, `${day.polls} polls of each feed, 30 s apart, over the whole day`);
  t.same(order.slice(0, 4), ['ct-vp', 'ct-tu', 'ct-vp', 'ct-tu'], 'the two feeds interleaved by header time');
  const [vp, tu] = summaries as [ReplaySummary, ReplaySummary];
  t.same(
    sum(vp.stop_events.anomalies, tu.stop_events.anomalies),
    { vehicle_backwards: 1, vehicles_on_one_trip: 1, trip_vanished: 1, prediction_backwards: 2 },
    'each misbehaviour counted, nothing else',
  );
  t.equal(vp.stop_events.anomalies.vehicle_backwards, 1, 'a vehicle report counts against the vehicle feed');
  t.equal(tu.stop_events.anomalies.prediction_backwards, 2, 'a prediction against the trip updates');

  const events = history.batches.flatMap((b) => b.stopEvents ?? []);
  t.equal(vp.stop_events.written + tu.stop_events.written, events.length, 'every event counted is in a batch');
  const byTrip = new Map<string, StopEvent[]>();
  for (const e of events) byTrip.set(e.trip_id, [...(byTrip.get(e.trip_id) ?? []), e]);
  t.equal(
    new Set(events.map((e) => `${e.trip_id}|${e.stop_sequence}`)).size,
    events.length,
    'each stop of each trip once',
  );
  t.notOk(
    events.some((e) => (e.dwell_s ?? 0) < 0 || (e.travel_s ?? 0) < 0),
    'no negative dwell or travel time',
  );

  const within = (got: number | null, want: number) => got !== null && got >= want && got - want < POLL_MS;
  let checked = 0;
  const misses: string[] = [];
  for (const { trip, stops } of truth) {
    const q = quirks.get(trip.trip_id);
    if (q && !q.backwards_at && !q.ghost_vehicle) continue;
    const got = byTrip.get(trip.trip_id) ?? [];
    if (got.length !== stops.length) misses.push(`${trip.trip_id}: ${got.length} events for ${stops.length} stops`);
    stops.forEach((s, i) => {
      const e = got.find((x) => x.stop_sequence === s.stop_sequence);
      const first = i === 0;
      const last = i === stops.length - 1;
      const ok =
        e !== undefined &&
        (first || within(e.actual_arrival_ms, s.arrival_ms)) &&
        (last || within(e.actual_departure_ms, s.departure_ms)) &&
        e.source === (first || last ? 'imputed' : 'vp') &&
        e.relationship === 'scheduled';
      checked++;
      if (!ok) misses.push(`${trip.trip_id} #${s.stop_sequence}: ${JSON.stringify(e)} vs ${JSON.stringify(s)}`);
    });
  }
  t.same(misses.slice(0, 5), [], `${checked} stop events within one poll (30 s) of the true times`);

  // the trips that misbehave
  const stopsOf = (tripId: string) => truth.find((x) => x.trip.trip_id === tripId)!.stops;
  const vanished = byTrip.get(id(15)) ?? [];
  t.same(
    vanished.map((e) => e.stop_sequence),
    stopsOf(id(15))
      .slice(0, 5)
      .map((s) => s.stop_sequence),
    'a trip that vanished after its fifth stop: closed with those five',
  );
  t.ok(
    within(vanished[4]?.actual_arrival_ms ?? null, stopsOf(id(15))[4]!.arrival_ms),
    'its last stop keeps the arrival seen',
  );
  const canceled = byTrip.get(id(20)) ?? [];
  t.equal(canceled.length, stopsOf(id(20)).length, 'a canceled trip: a row per stop');
  t.ok(canceled.every((e) => e.relationship === 'canceled' && e.actual_arrival_ms === null && e.source === null));
  const skipped = byTrip.get(id(25)) ?? [];
  t.match(
    skipped[3],
    { relationship: 'skipped', actual_arrival_ms: null, source: null },
    'the skipped stop, without times',
  );
  t.equal(
    skipped[4]?.travel_s,
    Math.round((skipped[4]!.actual_arrival_ms! - skipped[2]!.actual_departure_ms!) / 1000),
    'travel from the last stop served',
  );
  const tuOnly = byTrip.get(id(30)) ?? [];
  t.notOk(
    tuOnly.some((e) => e.stop_sequence === stopsOf(id(30))[4]!.stop_sequence),
    'the stop whose last prediction went backwards has no time to write',
  );
  t.ok(
    tuOnly.length >= stopsOf(id(30)).length - 2,
    `a trip followed by its trip updates alone: ${tuOnly.length} stops`,
  );
  t.ok(tuOnly.every((e) => e.arrival_source !== 'vp' && e.departure_source !== 'vp'));

  // headways: since the departure before at the station, route and direction; scheduled from the schedule
  const departures = new Map<string, number[]>();
  for (const e of events) {
    if (e.actual_departure_ms === null) continue;
    const key = `${e.route_id}|${e.direction_id}|${e.station_id}`;
    departures.set(key, [...(departures.get(key) ?? []), e.actual_departure_ms]);
  }
  const scheduledDepartures = scheduledByStation(schedule, DAY);
  let headways = 0;
  const wrong: string[] = [];
  for (const e of events) {
    if (e.actual_departure_ms === null) continue;
    const key = `${e.route_id}|${e.direction_id}|${e.station_id}`;
    const before = departures
      .get(key)!
      .filter((d) => d < e.actual_departure_ms!)
      .sort((a, b) => a - b)
      .at(-1);
    const want = before === undefined ? null : Math.round((e.actual_departure_ms - before) / 1000);
    if (e.headway_s !== want) wrong.push(`${e.trip_id} #${e.stop_sequence}: headway ${e.headway_s}, want ${want}`);
    const own = e.scheduled_departure_ms;
    const schedBefore =
      own === null
        ? undefined
        : (scheduledDepartures.get(key) ?? [])
            .filter((d) => d < own)
            .sort((a, b) => a - b)
            .at(-1);
    const wantScheduled = own === null || schedBefore === undefined ? null : Math.round((own - schedBefore) / 1000);
    if (e.scheduled_headway_s !== wantScheduled)
      wrong.push(`${e.trip_id} #${e.stop_sequence}: scheduled headway ${e.scheduled_headway_s}, want ${wantScheduled}`);
    if (e.headway_s !== null) headways++;
  }
  t.same(wrong.slice(0, 5), [], `${headways} headways: since the departure before, beside the scheduled one`);

  // prediction errors: recomputed here from what the trip updates said and the vehicle's arrival
  const sample = truth.find((x) => !quirks.has(x.trip.trip_id) && x.stops.length >= 10)!;
  const row = byTrip.get(sample.trip.trip_id)!.find((e) => e.stop_sequence === sample.stops[8]!.stop_sequence)!;
  t.same(
    row.prediction_errors.map((e) => `${e.horizon} ${e.error_s} ×${e.samples}`).sort(),
    expectedErrors(sample, 8, row.actual_arrival_ms!, span.from_ms + POLL_MS / 2, span.to_ms),
    'prediction errors by horizon',
  );
});

/** What writeDay's trip updates predicted for stop `i` at each of their polls, as errors against `actual`. */
function expectedErrors(trip: TrueTrip, i: number, actual: number, firstMs: number, lastMs: number): string[] {
  const { stops } = trip;
  const bins: [number, string][] = [
    [180, '0-3'],
    [360, '3-6'],
    [720, '6-12'],
    [1800, '12-30'],
  ];
  const grouped = new Map<string, number>();
  for (let ms = firstMs; ms <= lastMs; ms += POLL_MS) {
    if (ms < stops[0]!.departure_ms - 1_800_000 || ms >= stops.at(-1)!.arrival_ms) continue;
    let left = -1;
    while (left + 1 < stops.length && stops[left + 1]!.departure_ms <= ms) left++;
    if (left >= i) break; // the stop is no longer listed
    const delay =
      left < 0
        ? stops[0]!.departure_ms - stops[0]!.scheduled_ms
        : stops[left]!.departure_ms - stops[left]!.scheduled_ms;
    const predicted = Math.floor((stops[i]!.scheduled_ms + delay) / 1000) * 1000;
    const horizon = (predicted - ms) / 1000;
    const bin = bins.find(([end]) => horizon >= 0 && horizon < end);
    if (!bin) continue;
    const key = `${bin[1]} ${Math.round((actual - predicted) / 1000)}`;
    grouped.set(key, (grouped.get(key) ?? 0) + 1);
  }
  return [...grouped].map(([k, n]) => `${k} ×${n}`).sort();
}

/** Scheduled departures (ms) per route, direction and station of the trips running on `day`, from the schedule alone. */
function scheduledByStation(schedule: LoadedScheduleIndex, day: string): Map<string, number[]> {
  const origin = Date.parse(`${day}T00:00:00-08:00`);
  const out = new Map<string, number[]>();
  for (const trip of schedule.trips()) {
    if (!schedule.runsOn(trip.service_id, day)) continue;
    for (const st of schedule.stopTimes(trip.trip_id)) {
      const s = st.departure_s ?? st.arrival_s;
      if (s === null) continue;
      const key = `${trip.route_id}|${trip.direction_id}|${schedule.stop(st.stop_id)?.station_id ?? st.stop_id}`;
      out.set(key, [...(out.get(key) ?? []), origin + s * 1000]);
    }
  }
  return out;
}
