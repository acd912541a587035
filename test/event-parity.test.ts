// REST and events name and format the same things alike (issue 15): a vehicle.position event's
// data is the REST vehicle without what only a response knows, an arrival.updated row the REST
// rail arrival likewise, field for field and value for value; rail lines are `line`, not route_id.
import t from 'tap';
import { EventArrivalSchema, EventVehicleSchema } from '../core/event-schemas.ts';
import type { Arrival, VehiclePosition } from '../core/types.ts';
import { arrivalToApi, vehicleToApi } from '../http/read/represent.ts';
import { RailArrivalSchema, VehicleSchema } from '../http/routes/schemas.ts';
import { arrivalRow, arrivalUpdate, vehicleData } from '../pipeline/event-data.ts';

const NOW = Date.parse('2025-06-17T13:00:00Z');
const thresholds = { stale_after_s: 90, expired_after_s: 300 };
const only = (o: object, drop: string[]) => Object.fromEntries(Object.entries(o).filter(([k]) => !drop.includes(k)));

t.test('vehicle.position data is the REST vehicle without age_s, freshness and delay_s', async (t) => {
  const v: VehiclePosition = {
    feed_id: 'demo-vehicles',
    vehicle_id: '9004',
    route_id: 'RED',
    trip_id: 'RED_wk_0_0815',
    mode: 'rail',
    lat: 41.88,
    lon: -87.63,
    position_source: 'gps',
    bearing: 92,
    speed_mps: 8.4,
    stop_id: 'S_CITY_HALL_RED_0',
    current_status: 'IN_TRANSIT_TO',
    timestamp_ms: NOW - 12_000,
    observed_ms: NOW - 2_000,
  };
  const rest = vehicleToApi(v, NOW, 'fresh', 120, thresholds);
  const event = vehicleData(v);
  const responseOnly = ['age_s', 'freshness', 'delay_s'];
  t.same(Object.keys(event).sort(), Object.keys(only(rest, responseOnly)).sort(), 'same field names');
  t.same(event, only(rest, responseOnly), 'same values and formats');
  t.same(
    Object.keys(EventVehicleSchema.shape).sort(),
    Object.keys(only(VehicleSchema.shape, responseOnly)).sort(),
    'the schemas agree',
  );
  t.notOk('feed_id' in event || 'timestamp_ms' in event || 'observed_ms' in event, 'no internal names');
  t.match(event, {
    source: 'demo-vehicles',
    timestamp: '2025-06-17T12:59:48.000Z',
    observed_at: '2025-06-17T12:59:58.000Z',
  });
});

t.test(
  'arrival.updated rows are the REST rail arrival without station_name and freshness; a rail line is `line`',
  async (t) => {
    const a: Arrival = {
      feed_id: 'demo-trip-updates',
      trip_id: 'RED_wk_0_0815',
      trip_instance: null,
      route_id: 'RED',
      mode: 'rail',
      station_id: 'S_CITY_HALL',
      stop_id: 'S_CITY_HALL_RED_0',
      stop_sequence: 4,
      direction_id: 0,
      service_date: '2025-06-17',
      scheduled_ms: NOW + 60_000,
      predicted_ms: NOW + 180_000,
      delay_s: 120.4,
      delay_state: 'on_time',
      trip_relationship: 'scheduled',
      in_schedule: true,
      vehicle_id: '9004',
      observed_ms: NOW,
    };
    const rest = arrivalToApi(a, 'City Hall', 'fresh');
    const row = arrivalRow(a);
    const responseOnly = ['station_name', 'freshness'];
    t.same(Object.keys(row).sort(), Object.keys(only(rest, responseOnly)).sort(), 'same field names');
    t.same(row, only(rest, responseOnly), 'same values and formats');
    t.same(
      Object.keys(EventArrivalSchema.shape).sort(),
      Object.keys(only(RailArrivalSchema.shape, responseOnly)).sort(),
      'the schemas agree',
    );
    const update = arrivalUpdate(a, false, 1, [a], []);
    t.match(update, { source: 'demo-trip-updates', mode: 'rail', line: 'RED', route_id: null });
    t.notOk('feed_id' in update, 'no internal names');
    const bus = arrivalUpdate(
      { ...a, mode: 'bus', route_id: '12' },
      false,
      1,
      [{ ...a, mode: 'bus', route_id: '12' }],
      [],
    );
    t.match(bus, { mode: 'bus', route_id: '12', line: null });
    t.equal(bus.arrivals[0]!.line, null, 'a bus stop row names no line');
  },
);
