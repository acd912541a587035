// Vehicles without coordinates (NYCT subway: a stop, a status and a trip, no lat/lon) are placed
// at their stop; feeds without a schedule take their configured mode. Small feeds built here.
import t from 'tap';
import type { Mode } from '../core/types.ts';
import { decodeFeedMessage } from './decode.ts';
import { RejectTally } from './normalize-context.ts';
import { normalizeFeedMessage, type NormalizedPoll } from './normalize-feed.ts';
import { encodeFeed, fakeSchedule, header, testConfig } from '../test/support/pipeline-fakes.ts';

const cfg = testConfig();
const NOW_S = Date.parse('2026-03-02T14:00:00Z') / 1000;
// an NYCT-like line: platforms with coordinates, one platform without (its parent station has them)
const schedule = fakeSchedule({
  timezone: 'America/New_York',
  routes: [
    { route_id: 'A', route_type: 1 },
    { route_id: 'M15', route_type: 3 },
  ],
  stops: [
    { stop_id: 'A02', lat: 40.8656, lon: -73.9272 },
    { stop_id: 'A02S', parent: 'A02', lat: 40.8657, lon: -73.9271 },
    { stop_id: 'A03S', parent: 'A03' },
    { stop_id: 'A03', lat: 40.8597, lon: -73.9337 },
    { stop_id: 'A05S', lat: 40.8516, lon: -73.9379 },
    { stop_id: 'NOWHERE' },
  ],
  trips: [{ trip_id: 'A-0830-S', route_id: 'A', direction_id: 1 }],
  stopTimes: {
    'A-0830-S': [
      ['A02S', '08:30:00'],
      ['A03S', '08:32:00'],
      ['A05S', '08:35:00'],
    ],
  },
});

function run(entities: unknown[], opts: { withSchedule?: boolean; mode?: Mode } = {}): NormalizedPoll {
  const decoded = decodeFeedMessage(encodeFeed({ header: header(NOW_S), entity: entities }));
  if (!decoded.ok) throw new Error(decoded.error);
  return normalizeFeedMessage(decoded.message, {
    feed_id: 'nyct',
    observed_ms: NOW_S * 1000,
    schedule: opts.withSchedule === false ? undefined : schedule,
    timezone: 'America/New_York',
    default_mode: opts.mode ?? null,
    freshness: cfg.freshness,
    delay: cfg.delay,
    rejects: new RejectTally(),
  });
}

const STOPPED_AT = 1;
const IN_TRANSIT_TO = 2;
const train = (id: string, v: Record<string, unknown>) => ({
  id,
  vehicle: { trip: { trip_id: 'A-0830-S', start_date: '20260302' }, timestamp: NOW_S - 10, ...v },
});

t.test(
  "a train with a stop_id and no coordinates is placed at that stop, flagged as the stop's position",
  async (t) => {
    const out = run([train('1', { stop_id: 'A02S', current_status: STOPPED_AT })]);
    t.same(out.rejected, {});
    t.equal(out.vehicles.length, 1);
    t.match(out.vehicles[0], {
      vehicle_id: '1',
      trip_id: 'A-0830-S',
      route_id: 'A',
      mode: 'rail',
      stop_id: 'A02S',
      current_status: 'stopped_at',
      lat: 40.8657,
      lon: -73.9271,
      position_source: 'stop',
      bearing: null,
      speed_mps: null,
    });
    t.equal(out.trips.length, 1, 'the trip it runs is observed');
  },
);

t.test("only current_stop_sequence: the trip's stop at that sequence (the next stop when in transit)", async (t) => {
  const out = run([train('2', { current_stop_sequence: 3, current_status: IN_TRANSIT_TO })]);
  t.same(out.rejected, {});
  t.match(out.vehicles[0], {
    stop_id: 'A05S',
    lat: 40.8516,
    lon: -73.9379,
    position_source: 'stop',
    current_status: 'in_transit_to',
  });
});

t.test(
  'a stop the schedule does not know falls back to the sequence; a platform without coordinates to its station',
  async (t) => {
    const out = run([train('3', { stop_id: 'X99', current_stop_sequence: 1 }), train('4', { stop_id: 'A03S' })]);
    t.same(out.rejected, {});
    t.match(out.vehicles[0], { stop_id: 'A02S', lat: 40.8657, position_source: 'stop' });
    t.match(
      out.vehicles[1],
      { stop_id: 'A03S', lat: 40.8597, lon: -73.9337, position_source: 'stop' },
      'parent station A03',
    );
  },
);

t.test('NYCT names a train by the train id of its TripDescriptor extension, not by its entity id', async (t) => {
  const out = run([
    {
      id: '000007',
      vehicle: {
        trip: {
          trip_id: 'A-0830-S',
          start_date: '20260302',
          '.transit_realtime.nyct_trip_descriptor': { train_id: '1A 0830+ 207/FAR' },
        },
        stop_id: 'A02S',
        current_status: STOPPED_AT,
        timestamp: NOW_S - 10,
      },
    },
  ]);
  t.match(out.vehicles, [{ vehicle_id: '1A 0830+ 207/FAR', position_source: 'stop', stop_id: 'A02S' }]);
});

t.test('neither coordinates nor a stop the schedule places: still rejected and counted as no_position', async (t) => {
  const out = run([
    train('5', { current_status: IN_TRANSIT_TO }),
    train('6', { stop_id: 'NOWHERE' }),
    train('7', { current_stop_sequence: 9 }),
    { id: '8', vehicle: { stop_id: 'A02S', vehicle: { id: 'car 8' } } },
  ]);
  t.same(out.rejected, { no_position: 3 });
  t.same(
    out.vehicles.map((v) => v.vehicle_id),
    ['car 8'],
    'a stop alone is enough, with no trip',
  );
  t.equal(out.vehicles[0]!.mode, null, 'no route: no mode');
  t.same(out.trips, [], 'rejected trains observe no trip');
});

t.test('without a schedule no stop can be placed: no_position', async (t) => {
  const out = run([train('1', { stop_id: 'A02S' })], { withSchedule: false });
  t.same(out.rejected, { no_position: 1 });
  t.equal(out.vehicles.length, 0);
});

t.test(
  "a GPS fix stays the vehicle's own; impossible coordinates are rejected even when a stop is named",
  async (t) => {
    const out = run([
      train('1', { stop_id: 'A02S', position: { latitude: 40.875, longitude: -73.9375, bearing: 180, speed: 9 } }),
      train('2', { stop_id: 'A02S', position: { latitude: 91, longitude: -73.93 } }),
    ]);
    t.same(out.rejected, { lat_lon_out_of_range: 1 });
    // float32 on the wire: values exact in binary compare exactly
    t.match(out.vehicles, [
      {
        vehicle_id: '1',
        lat: 40.875,
        lon: -73.9375,
        bearing: 180,
        speed_mps: 9,
        position_source: 'gps',
        stop_id: 'A02S',
      },
    ]);
  },
);

t.test('feeds[].mode is the mode of vehicles whose route the schedule cannot resolve', async (t) => {
  const entities = [
    {
      id: 'b1',
      vehicle: { position: { latitude: 42.35, longitude: -71.06 }, trip: { trip_id: 'T-unknown', route_id: '39' } },
    },
    { id: 'b2', vehicle: { position: { latitude: 42.35, longitude: -71.06 }, trip: { route_id: '39' } } },
    { id: 'b3', vehicle: { position: { latitude: 42.35, longitude: -71.06 } } },
    { id: 'b4', vehicle: { position: { latitude: 42.35, longitude: -71.06 }, trip: { route_id: 'M15' } } },
    { id: 'b5', vehicle: { position: { latitude: 42.35, longitude: -71.06 }, trip: { trip_id: 'A-0830-S' } } },
  ];
  const noSchedule = run(entities, { withSchedule: false, mode: 'bus' });
  t.same(
    noSchedule.vehicles.map((v) => v.mode),
    ['bus', 'bus', 'bus', 'bus', 'bus'],
    'no schedule: every vehicle',
  );
  t.same(
    noSchedule.trips.map((o) => o.mode),
    ['bus', 'bus'],
    'and the trips they run',
  );
  const withSchedule = run(entities, { mode: 'streetcar' });
  t.same(
    withSchedule.vehicles.map((v) => v.mode),
    ['streetcar', 'streetcar', 'streetcar', 'bus', 'rail'],
    'routes the schedule knows keep their own mode',
  );
  const unset = run(entities, { withSchedule: false });
  t.same(
    unset.vehicles.map((v) => v.mode),
    [null, null, null, null, null],
    'without feeds[].mode, as before',
  );
});
