import t from 'tap';
import { decodeFeedMessage } from './decode.ts';
import { RejectTally } from './normalize-context.ts';
import { normalizeFeedMessage } from './normalize-feed.ts';
import { encodeFeed, fakeSchedule, header, testConfig } from '../test/support/pipeline-fakes.ts';

const cfg = testConfig();
const NOW_S = 1_700_000_000;
const schedule = fakeSchedule({
  routes: [
    { route_id: 'R5', route_type: 3 },
    { route_id: 'S1', route_type: 0 },
  ],
  trips: [{ trip_id: 'TR', route_id: 'S1' }],
});

function run(message: Record<string, unknown>, withSchedule = true) {
  const decoded = decodeFeedMessage(encodeFeed(message));
  if (!decoded.ok) throw new Error(decoded.error);
  return normalizeFeedMessage(decoded.message, {
    feed_id: 'f',
    observed_ms: NOW_S * 1000,
    schedule: withSchedule ? schedule : undefined,
    timezone: 'UTC',
    freshness: cfg.freshness,
    delay: cfg.delay,
    rejects: new RejectTally(),
  });
}

const vehicle = (id: string, v: Record<string, unknown>) => ({ id, vehicle: v });
const pos = (latitude: number, longitude: number) => ({ latitude, longitude });

t.test('a header timestamp in milliseconds is flagged and divided back', async (t) => {
  const out = run({ header: header(NOW_S * 1000 - 5000), entity: [] });
  t.same(out.rejected, { header_timestamp_ms: 1 });
  t.equal(out.header_timestamp_ms, NOW_S * 1000 - 5000);
});

t.test('a snapshot whose header is in the future or years old is rejected whole, and reported', async (t) => {
  const entities = [vehicle('1', { position: pos(1, 1) }), vehicle('2', { position: pos(2, 2) })];
  const future = run({ header: header(NOW_S + 7200), entity: entities });
  t.same(future.rejected, { timestamp_future: 2 }, 'each entity counts under the reason');
  t.equal(future.header_timestamp_ms, (NOW_S + 7200) * 1000);
  t.same([future.vehicles.length, future.vehicle_entities], [0, 2], 'no rows, counts kept');
  t.match(future.rejection, { reason: 'timestamp_future', header_ms: (NOW_S + 7200) * 1000, header_was_ms: false });
  const old = run({ header: header(NOW_S - 2 * 365 * 86_400), entity: [] });
  t.same(old.rejected, { timestamp_too_old: 1 }, 'an empty snapshot counts its header');
  t.equal(old.rejection?.reason, 'timestamp_too_old');
});

t.test('allow_old_snapshots: an old snapshot keeps its rows, dated by its own header', async (t) => {
  const headerS = NOW_S - 2 * 365 * 86_400;
  const decoded = decodeFeedMessage(
    encodeFeed({
      header: header(headerS),
      entity: [
        vehicle('1', { trip: { trip_id: 'TR' }, position: pos(1, 1) }),
        vehicle('2', { position: pos(2, 2), timestamp: headerS - 30 }),
      ],
    }),
  );
  if (!decoded.ok) throw new Error(decoded.error);
  const out = normalizeFeedMessage(decoded.message, {
    feed_id: 'f',
    observed_ms: NOW_S * 1000,
    schedule: undefined,
    timezone: 'UTC',
    freshness: cfg.freshness,
    delay: cfg.delay,
    rejects: new RejectTally(),
    allow_old_snapshots: true,
  });
  t.same(out.rejected, {});
  t.equal(out.rejection, undefined);
  t.same(
    out.vehicles.map((v) => v.timestamp_ms),
    [headerS * 1000, (headerS - 30) * 1000],
  );
  t.equal(
    out.trips[0]!.service_date,
    new Date(headerS * 1000).toISOString().slice(0, 10),
    'service date from the header, not the poll',
  );
});

t.test('vehicles: fields, mode via trip or route, rejections by reason', async (t) => {
  const out = run({
    header: header(NOW_S),
    entity: [
      vehicle('1', {
        vehicle: { id: 'bus-1' },
        trip: { route_id: 'R5' },
        position: { ...pos(40, -73), bearing: 0, speed: 7.5 },
        timestamp: NOW_S - 10,
        current_status: 1,
        stop_id: 'S',
      }),
      vehicle('2', { vehicle: { label: 'car-7' }, trip: { trip_id: 'TR' }, position: pos(40.1, -73.1) }),
      vehicle('3', { vehicle: { id: 'bad-lat' }, position: pos(100, -73) }),
      vehicle('4', { vehicle: { id: 'bad-lon' }, position: pos(10, 190) }),
      vehicle('5', { vehicle: { id: 'nowhere' } }),
      vehicle('6', { vehicle: { id: 'bus-1' }, position: pos(1, 1) }),
      vehicle('7', { vehicle: { id: 'future' }, position: pos(1, 1), timestamp: NOW_S + 3600 }),
      vehicle('', { vehicle: { id: 'no-entity-id' }, position: pos(1, 1) }),
      vehicle('1', { vehicle: { id: 'same-entity-id' }, position: pos(1, 1) }),
    ],
  });
  t.same(out.rejected, {
    missing_entity_id: 1,
    duplicate_entity: 2,
    lat_lon_out_of_range: 2,
    no_position: 1,
    timestamp_future: 1,
  });
  t.equal(out.vehicle_entities, 9, 'decoded count is what the feed carried');
  t.equal(out.vehicles.length, 2);
  const [bus, car] = out.vehicles;
  t.match(bus, {
    vehicle_id: 'bus-1',
    route_id: 'R5',
    mode: 'bus',
    trip_id: null,
    bearing: 0,
    speed_mps: 7.5,
    current_status: 'stopped_at',
    stop_id: 'S',
    timestamp_ms: (NOW_S - 10) * 1000,
    observed_ms: NOW_S * 1000,
  });
  t.match(car, {
    vehicle_id: 'car-7',
    route_id: 'S1',
    mode: 'streetcar',
    bearing: null,
    speed_mps: null,
    current_status: null,
  });
  t.same(
    out.trips.map((o) => [o.trip_id, o.source, o.in_schedule]),
    [['TR', 'vehicle_position', true]],
  );
});

t.test('a vehicle timestamp sent in milliseconds is read as milliseconds', async (t) => {
  const out = run({
    header: header(NOW_S),
    entity: [vehicle('1', { position: pos(1, 1), timestamp: NOW_S * 1000 - 1000 })],
  });
  t.equal(out.vehicles[0]!.timestamp_ms, NOW_S * 1000 - 1000);
  t.equal(out.vehicles[0]!.vehicle_id, '1', 'entity id stands in for an empty vehicle descriptor');
});

t.test('without a schedule vehicles keep the feed route and a null mode', async (t) => {
  const out = run(
    { header: header(NOW_S), entity: [vehicle('1', { trip: { trip_id: 'TR', route_id: 'R5' }, position: pos(1, 1) })] },
    false,
  );
  t.match(out.vehicles[0], { route_id: 'R5', mode: null });
  t.equal(out.trips[0]!.in_schedule, false);
});

t.test('deleted entities of a full dataset are ignored', async (t) => {
  const out = run({ header: header(NOW_S), entity: [{ id: '1', is_deleted: true, vehicle: { position: pos(1, 1) } }] });
  t.equal(out.vehicles.length, 0);
  t.same(out.rejected, {});
});
