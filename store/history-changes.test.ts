import t from 'tap';
import type { Arrival, TripObservation, VehiclePosition } from '../core/types.ts';
import { ChangeOnlyHistory, type Selection } from './history-changes.ts';

const T0 = Date.UTC(2024, 4, 1, 12, 0, 0);
const S = 1000;
const rules = { predictionChangeMs: 30 * S, tripTimeoutMs: 900 * S, checkpointMs: 600 * S };

const arrival = (over: Partial<Arrival> = {}): Arrival => ({
  feed_id: 'tu',
  trip_id: 't1',
  trip_instance: null,
  route_id: 'R',
  mode: 'bus',
  station_id: 'P1',
  stop_id: 'P1',
  stop_sequence: 1,
  direction_id: 0,
  service_date: '2024-05-01',
  scheduled_ms: T0 + 600 * S,
  predicted_ms: T0 + 600 * S,
  delay_s: 0,
  delay_state: 'on_time',
  trip_relationship: 'scheduled',
  in_schedule: true,
  vehicle_id: 'v1',
  observed_ms: T0,
  ...over,
});

const trip = (over: Partial<TripObservation> = {}): TripObservation => ({
  feed_id: 'tu',
  service_date: '2024-05-01',
  trip_id: 't1',
  route_id: 'R',
  mode: 'bus',
  relationship: 'scheduled',
  skipped_stops: 0,
  source: 'trip_update',
  in_schedule: true,
  observed_ms: T0,
  ...over,
});

const vehicle = (over: Partial<VehiclePosition> = {}): VehiclePosition => ({
  feed_id: 'vp',
  vehicle_id: 'v1',
  route_id: 'R',
  trip_id: 't1',
  mode: 'bus',
  lat: 45,
  lon: -73,
  position_source: 'gps',
  bearing: null,
  speed_mps: null,
  stop_id: 'P1',
  current_status: 'IN_TRANSIT_TO',
  timestamp_ms: T0,
  observed_ms: T0,
  ...over,
});

/** One poll through the memory, committed as the writer does after its transaction. */
function poll(
  h: ChangeOnlyHistory,
  rows: { arrivals?: Arrival[]; trips?: TripObservation[]; vehicles?: VehiclePosition[] },
): Selection {
  const s = h.select({ arrivals: rows.arrivals ?? [], trips: rows.trips ?? [], vehicles: rows.vehicles ?? [] });
  s.commit();
  return s;
}

const predicted = (s: Selection): (number | null)[] => s.arrivals.map((a) => (a.predicted_ms! - T0) / S);

t.test(
  'predictions: the first, those that moved 30 s or changed state, and the last before the stop was passed',
  async (t) => {
    const h = new ChangeOnlyHistory(rules);
    const at = (k: number, p1: number, over: Partial<Arrival> = {}, stops = [1, 2]): Arrival[] =>
      stops.map((seq) =>
        arrival({
          stop_id: `P${seq}`,
          stop_sequence: seq,
          predicted_ms: T0 + (p1 + (seq - 1) * 300) * S,
          observed_ms: T0 + k * 10 * S,
          ...over,
        }),
      );
    t.same(predicted(poll(h, { arrivals: at(0, 600) })), [600, 900], 'first seen: both stops');
    t.same(predicted(poll(h, { arrivals: at(1, 610) })), [], 'moved 10 s: held');
    t.same(predicted(poll(h, { arrivals: at(2, 625) })), [], 'moved 25 s from the one stored: held');
    t.same(predicted(poll(h, { arrivals: at(3, 630) })), [630, 930], 'moved 30 s from the one stored: kept');
    t.same(predicted(poll(h, { arrivals: at(4, 620) })), [], 'back 10 s: held');
    t.same(
      predicted(poll(h, { arrivals: at(5, 620, { delay_state: 'late' }) })),
      [620, 920],
      'a new delay state is kept whatever the move',
    );
    t.same(predicted(poll(h, { arrivals: at(6, 625, { delay_state: 'late' }) })), [], 'held again');
    const passed = poll(h, { arrivals: at(7, 626, { delay_state: 'late' }, [2]) });
    t.same(
      passed.arrivals.map((a) => [a.stop_id, (a.predicted_ms! - T0) / S, (a.observed_ms - T0) / S]),
      [['P1', 625, 60]],
      'stop 1 left the trip update: its last prediction before it was passed is written',
    );
    t.same(h.size(), { trips: 0, stops: 1, vehicles: 0, held: 1 }, 'only stop 2 is remembered');
    const relationship = poll(h, { arrivals: at(8, 626, { delay_state: 'late', trip_relationship: 'canceled' }, [2]) });
    t.same(predicted(relationship), [926], 'a changed relationship is kept');
    const flushed = h.held();
    t.same(predicted(flushed), [], 'nothing held once a row was kept');
  },
);

t.test('a trip that times out writes what it held and leaves memory', async (t) => {
  const h = new ChangeOnlyHistory(rules);
  poll(h, { arrivals: [arrival()], trips: [trip()], vehicles: [vehicle()] });
  poll(h, {
    arrivals: [arrival({ observed_ms: T0 + 30 * S })],
    trips: [trip({ observed_ms: T0 + 30 * S })],
    vehicles: [vehicle({ observed_ms: T0 + 30 * S })],
  });
  t.same(h.size(), { trips: 1, stops: 1, vehicles: 1, held: 2 });
  // another trip of the same feeds, 15 min later: the first one is gone
  const later = poll(h, {
    arrivals: [arrival({ trip_id: 't2', observed_ms: T0 + 931 * S })],
    trips: [trip({ trip_id: 't2', observed_ms: T0 + 931 * S })],
    vehicles: [vehicle({ vehicle_id: 'v2', observed_ms: T0 + 931 * S })],
  });
  t.same(
    later.arrivals.map((a) => [a.trip_id, (a.observed_ms - T0) / S]),
    [
      ['t2', 931],
      ['t1', 30],
    ],
    "t1's last prediction written when it timed out",
  );
  t.same(
    later.trips.map((o) => [o.trip_id, (o.observed_ms - T0) / S, o.polls]),
    [
      ['t2', 931, 1],
      ['t1', 30, 1],
    ],
    "t1's last poll written, standing for one poll",
  );
  t.same(h.size(), { trips: 1, stops: 1, vehicles: 1, held: 0 }, 'memory holds the trips on the road only');
});

t.test(
  'trip observations: runs of the same content keep their first and last poll, with the polls they stand for',
  async (t) => {
    const h = new ChangeOnlyHistory(rules);
    const at = (k: number, over: Partial<TripObservation> = {}): TripObservation[] => [
      trip({ observed_ms: T0 + k * 30 * S, ...over }),
    ];
    const rows = (s: Selection) => s.trips.map((o) => [(o.observed_ms - T0) / 30 / S, o.relationship, o.polls]);
    t.same(rows(poll(h, { trips: at(0) })), [[0, 'scheduled', 1]]);
    t.same(rows(poll(h, { trips: at(1) })), []);
    t.same(rows(poll(h, { trips: at(2) })), []);
    t.same(
      rows(poll(h, { trips: at(3, { relationship: 'canceled' }) })),
      [
        [2, 'scheduled', 2],
        [3, 'canceled', 1],
      ],
      'a change writes the last poll of the run before it (standing for polls 1 and 2) and the new one',
    );
    t.same(rows(poll(h, { trips: at(4, { relationship: 'canceled' }) })), []);
    t.same(
      rows(poll(h, { trips: [...at(5), ...at(5, { relationship: 'duplicated' })] })),
      [
        [4, 'canceled', 1],
        [5, 'scheduled', 1],
        [5, 'duplicated', 1],
      ],
      'two rows of the trip in one poll are one content',
    );
    t.same(rows(poll(h, { trips: [...at(6, { relationship: 'duplicated' }), ...at(6)] })), [], 'in any order');
    t.same(
      rows(poll(h, { trips: at(2, { relationship: 'deleted' }) })),
      [[2, 'deleted', 1]],
      'an older snapshot: as it comes',
    );
    t.same(
      rows(h.held()),
      [
        [6, 'duplicated', 1],
        [6, 'scheduled', 1],
      ],
      "the held poll's rows, as that poll gave them",
    );
    // after 10 min unchanged, a checkpoint row: a crash loses at most that much
    const long = new ChangeOnlyHistory(rules);
    const written = Array.from({ length: 45 }, (_, k) => rows(poll(long, { trips: at(k) }))).flat();
    t.same(
      written,
      [
        [0, 'scheduled', 1],
        [20, 'scheduled', 20],
        [40, 'scheduled', 20],
      ],
      'every 10 minutes of a run, its newest poll is written',
    );
  },
);

t.test(
  'two feeds seeing one trip: the first poll after the other changed, and every poll while they disagree, are kept',
  async (t) => {
    const h = new ChangeOnlyHistory(rules);
    const rows = (s: Selection) => s.trips.map((o) => [o.feed_id, (o.observed_ms - T0) / S, o.relationship, o.polls]);
    const tu = (k: number) => poll(h, { trips: [trip({ feed_id: 'tu', observed_ms: T0 + k * 30 * S })] });
    const vp = (k: number, relationship: TripObservation['relationship']) =>
      poll(h, {
        trips: [trip({ feed_id: 'vp', source: 'vehicle_position', relationship, observed_ms: T0 + (k * 30 + 5) * S })],
      });
    t.same(rows(tu(0)), [['tu', 0, 'scheduled', 1]]);
    t.same(rows(vp(0, 'scheduled')), [['vp', 5, 'scheduled', 1]]);
    t.same(
      rows(tu(1)),
      [['tu', 30, 'scheduled', 1]],
      'the trip update feed keeps its first poll after the vehicle feed changed (here: first saw the trip)',
    );
    t.same(rows(tu(2)), [], 'both feeds agree: held');
    t.same(rows(vp(2, 'canceled')), [['vp', 65, 'canceled', 1]], 'the vehicle feed cancels it');
    t.same(
      rows(tu(3)),
      [['tu', 90, 'scheduled', 2]],
      'the trip update still runs it: kept (standing for two polls), whichever comes last decides',
    );
    t.same(rows(vp(3, 'canceled')), [['vp', 95, 'canceled', 1]]);
    t.same(rows(tu(4)), [['tu', 120, 'scheduled', 1]]);
    t.same(rows(vp(4, 'scheduled')), [['vp', 125, 'scheduled', 1]], 'nothing was held while they disagreed');
    t.same(rows(tu(5)), [['tu', 150, 'scheduled', 1]], 'the first poll after that change');
    t.same(rows(tu(6)), [], 'agreed again: held');
  },
);

t.test('vehicles: stored when their own timestamp, position, trip or status changed', async (t) => {
  const h = new ChangeOnlyHistory(rules);
  const n = (over: Partial<VehiclePosition>) => poll(h, { vehicles: [vehicle(over)] }).vehicles.length;
  t.equal(n({}), 1, 'first seen');
  t.equal(n({ observed_ms: T0 + 10 * S }), 0, 'the same report in the next poll');
  t.equal(n({ observed_ms: T0 + 20 * S, timestamp_ms: T0 + 15 * S }), 1, 'a new timestamp');
  t.equal(n({ observed_ms: T0 + 30 * S, timestamp_ms: T0 + 15 * S, lat: 45.001 }), 1, 'moved');
  t.equal(n({ observed_ms: T0 + 40 * S, timestamp_ms: T0 + 15 * S, lat: 45.001, current_status: 'STOPPED_AT' }), 1);
  t.equal(
    n({ observed_ms: T0 + 50 * S, timestamp_ms: T0 + 15 * S, lat: 45.001, current_status: 'STOPPED_AT', speed_mps: 3 }),
    0,
    'speed alone is not a new report',
  );
  t.equal(
    poll(h, { vehicles: [vehicle({ vehicle_id: 'v9' }), vehicle({ vehicle_id: 'v9' })] }).vehicles.length,
    2,
    'one id twice in a poll: both stored, as they come',
  );
});

t.test('a selection not committed leaves memory as it was (a failed transaction)', async (t) => {
  const h = new ChangeOnlyHistory(rules);
  h.select({ arrivals: [arrival()], trips: [trip()], vehicles: [vehicle()] });
  t.same(h.size(), { trips: 0, stops: 0, vehicles: 0, held: 0 });
  const again = poll(h, { arrivals: [arrival()], trips: [trip()], vehicles: [vehicle()] });
  t.same([again.arrivals.length, again.trips.length, again.vehicles.length], [1, 1, 1], 'the retry stores them');
});

t.test('a flush through a service day writes the held rows of that day and earlier only', async (t) => {
  const h = new ChangeOnlyHistory(rules);
  for (const k of [0, 1]) {
    poll(h, {
      trips: [
        trip({ observed_ms: T0 + k * S }),
        trip({ trip_id: 't2', service_date: '2024-05-02', observed_ms: T0 + k * S }),
      ],
      arrivals: [
        arrival({ observed_ms: T0 + k * S }),
        arrival({ trip_id: 't2', service_date: '2024-05-02', observed_ms: T0 + k * S }),
        arrival({ trip_id: 't3', service_date: null, observed_ms: T0 + k * S }),
      ],
    });
  }
  const day = h.held({ through: '2024-05-01' });
  t.same([day.trips.map((o) => o.trip_id), day.arrivals.map((a) => a.trip_id)], [['t1'], ['t1']]);
  day.commit();
  const rest = h.held();
  t.same([rest.trips.map((o) => o.trip_id), rest.arrivals.map((a) => a.trip_id)], [['t2'], ['t2', 't3']]);
});
