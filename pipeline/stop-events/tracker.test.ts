import t from 'tap';
import type { Arrival, StopEvent, VehiclePosition } from '../../core/types.ts';
import { fakeSchedule } from '../../test/support/pipeline-fakes.ts';
import { StopEventTracker, type TrackerInput } from './tracker.ts';

const DAY = '2024-05-01';
const at = (hms: string): number => Date.parse(`${DAY}T${hms}Z`);
const schedule = fakeSchedule({
  routes: [{ route_id: 'R1', route_type: 3 }],
  stops: [{ stop_id: 'A' }, { stop_id: 'B', parent: 'SB' }, { stop_id: 'C' }, { stop_id: 'D' }],
  trips: [
    { trip_id: 'T1', route_id: 'R1', direction_id: 0 },
    { trip_id: 'T2', route_id: 'R1', direction_id: 0 },
  ],
  stopTimes: {
    T1: [
      ['A', '08:00:00'],
      ['B', '08:05:00', '08:05:30'],
      ['C', '08:10:00', '08:10:30'],
      ['D', '08:15:00'],
    ],
    T2: [
      ['A', '08:12:00'],
      ['B', '08:17:00', '08:17:30'],
      ['C', '08:22:00', '08:22:30'],
      ['D', '08:27:00'],
    ],
  },
});
const STOPS = ['A', 'B', 'C', 'D'];

function vehicle(id: string, trip: string, status: string, stop: string, ms: number): VehiclePosition {
  return {
    feed_id: 'vp',
    vehicle_id: id,
    route_id: 'R1',
    trip_id: trip,
    mode: 'bus',
    lat: 0,
    lon: 0,
    position_source: 'gps',
    bearing: null,
    speed_mps: null,
    stop_id: stop,
    current_status: status,
    timestamp_ms: ms,
    observed_ms: ms,
    service_date: DAY,
    stop_sequence: STOPS.indexOf(stop) + 1,
  };
}

type TuStop = [stop: string, arrival: number | null, departure: number | null, state?: 'skipped'];
function tripUpdate(trip: string, stops: TuStop[], observed: number, relationship = 'scheduled'): Arrival[] {
  return stops.map(([stop, arrival, departure, state]) => ({
    feed_id: 'tu',
    trip_id: trip,
    trip_instance: null,
    route_id: 'R1',
    mode: 'bus',
    station_id: stop === 'B' ? 'SB' : stop,
    stop_id: stop,
    stop_sequence: STOPS.indexOf(stop) + 1,
    direction_id: 0,
    service_date: DAY,
    scheduled_ms: null,
    predicted_ms: arrival ?? departure,
    delay_s: null,
    delay_state: state ?? (relationship === 'canceled' ? 'canceled' : 'on_time'),
    trip_relationship: relationship as Arrival['trip_relationship'],
    in_schedule: true,
    vehicle_id: null,
    observed_ms: observed,
    predicted_arrival_ms: arrival,
    predicted_departure_ms: departure,
  }));
}

const input = (
  feed: string,
  observed: number,
  rows: { vehicles?: VehiclePosition[]; arrivals?: Arrival[] },
): TrackerInput => ({
  feed_id: feed,
  group: 'fake',
  schedule_id: 'fake',
  schedule,
  observed_ms: observed,
  vehicles: rows.vehicles ?? [],
  arrivals: rows.arrivals ?? [],
});

/** Where a vehicle is at `ms` given its true arrival and departure at each stop (ms). */
function truthAt(truth: [arrive: number, depart: number][], ms: number): { status: string; stop: string } {
  for (let i = 0; i < truth.length; i++) {
    const [arrive, depart] = truth[i]!;
    if (ms < arrive) return { status: 'in_transit_to', stop: STOPS[i]! };
    if (ms < depart) return { status: 'stopped_at', stop: STOPS[i]! };
  }
  return { status: 'stopped_at', stop: STOPS[truth.length - 1]! };
}

t.test('a vehicle followed stop by stop: times within one poll of the truth, each stop written once', async (t) => {
  const tracker = new StopEventTracker({ trip_timeout_s: 900 });
  const truth: [number, number][] = [
    [at('07:50:00'), at('08:00:40')],
    [at('08:05:10'), at('08:05:50')],
    [at('08:10:20'), at('08:11:00')],
    [at('08:15:30'), at('09:00:00')],
  ];
  const events: StopEvent[] = [];
  const writtenAt: number[] = [];
  for (let ms = at('07:59:00'); ms <= at('08:20:00'); ms += 30_000) {
    const where = truthAt(truth, ms);
    const out = tracker.observe(input('vp', ms, { vehicles: [vehicle('bus1', 'T1', where.status, where.stop, ms)] }));
    for (const e of out.events) writtenAt.push(ms);
    events.push(...out.events);
    t.same(out.counts.anomalies, {}, `no anomaly at ${new Date(ms).toISOString()}`);
  }
  t.same(
    events.map((e) => e.stop_id),
    STOPS,
    'one event per stop, in order',
  );
  const [a, b, c, d] = events as [StopEvent, StopEvent, StopEvent, StopEvent];
  // the first report past a moment comes at most one poll (30 s) after it
  const within = (got: number | null, want: number, what: string) =>
    t.ok(got !== null && got >= want && got - want < 30_000, `${what}: ${got && new Date(got).toISOString()}`);
  within(a.actual_departure_ms, truth[0]![1], 'A departure');
  t.equal(a.actual_arrival_ms, a.actual_departure_ms, 'the first stop is measured by its departure');
  t.match(a, { arrival_source: 'imputed', departure_source: 'vp', source: 'imputed', first_stop: true, dwell_s: null });
  within(b.actual_arrival_ms, truth[1]![0], 'B arrival');
  within(b.actual_departure_ms, truth[1]![1], 'B departure');
  t.match(b, { source: 'vp', station_id: 'SB', stop_sequence: 2, relationship: 'scheduled', vehicle_id: 'bus1' });
  t.equal(b.dwell_s, (b.actual_departure_ms! - b.actual_arrival_ms!) / 1000);
  t.equal(b.travel_s, (b.actual_arrival_ms! - a.actual_departure_ms!) / 1000);
  t.equal(b.scheduled_travel_s, 300);
  t.equal(b.arrival_delay_s, (b.actual_arrival_ms! - at('08:05:00')) / 1000);
  within(c.actual_arrival_ms, truth[2]![0], 'C arrival');
  within(d.actual_arrival_ms, truth[3]![0], 'D arrival');
  t.match(d, { last_stop: true, departure_source: 'imputed', dwell_s: null });
  t.equal(d.actual_departure_ms, d.actual_arrival_ms);
  for (const e of events) t.ok((e.dwell_s ?? 0) >= 0 && (e.travel_s ?? 0) >= 0, 'no negative interval');
  // B is written once the vehicle is seen on its way to C, not before
  t.ok(writtenAt[1]! >= truth[1]![1], 'a stop is written once the vehicle has left it');
  t.equal(tracker.tripsInProgress, 1, 'the trip stays followed until it times out');
  const later = tracker.observe(input('vp', at('08:40:00'), {}));
  t.same(later.events, [], 'nothing left to write');
  t.same(later.counts.anomalies, {}, 'a trip that reached its last stop did not vanish');
  t.equal(tracker.tripsInProgress, 0, 'closed after trip_timeout_s: memory follows the trips on the road');
});

t.test('trip updates alone: a stop the update drops is passed, with its last prediction', async (t) => {
  const tracker = new StopEventTracker({ trip_timeout_s: 900 });
  const run = (ms: number, stops: TuStop[]) =>
    tracker.observe(input('tu', ms, { arrivals: tripUpdate('T1', stops, ms) }));
  t.same(
    run(at('07:59:00'), [
      ['A', null, at('08:00:00')],
      ['B', at('08:05:00'), at('08:05:30')],
      ['C', at('08:10:00'), at('08:10:30')],
      ['D', at('08:15:00'), null],
    ]).events,
    [],
  );
  // A's departure predicted 60 s ahead: close enough to count as its actual time once passed
  run(at('07:59:30'), [
    ['A', null, at('08:00:30')],
    ['B', at('08:05:30'), at('08:06:00')],
    ['C', at('08:10:30'), at('08:11:00')],
    ['D', at('08:15:30'), null],
  ]);
  const out = run(at('08:01:00'), [
    ['B', at('08:05:40'), at('08:06:10')],
    ['C', at('08:10:40'), at('08:11:10')],
    ['D', at('08:15:40'), null],
  ]);
  t.equal(out.events.length, 1, 'A written when the update stops listing it');
  t.match(out.events[0], {
    stop_id: 'A',
    actual_departure_ms: at('08:00:30'),
    departure_source: 'tu',
    arrival_source: 'imputed',
    departure_delay_s: 30,
  });
  // B's last prediction was made 4 min before it: not an actual time, so B has nothing to write
  const skipB = run(at('08:07:00'), [
    ['C', at('08:10:40'), at('08:11:10')],
    ['D', at('08:15:40'), null],
  ]);
  t.same(skipB.events, [], 'a stop whose last prediction came long before it is not made up');
  // C's own time in the past is not enough (a train held at a stop keeps a stale prediction) …
  t.same(
    run(at('08:11:20'), [
      ['C', at('08:10:40'), at('08:11:10')],
      ['D', at('08:15:40'), null],
    ]).events,
    [],
  );
  // … D's is: the train got past C; C's last prediction was made 40 s before it, an actual time
  const c = run(at('08:15:50'), [['D', at('08:15:40'), null]]);
  t.same(
    c.events.map((e) => [e.stop_id, e.source, e.actual_arrival_ms, e.actual_departure_ms]),
    [['C', 'tu', at('08:10:40'), at('08:11:10')]],
  );
  t.equal(c.events[0]!.dwell_s, 30);
  // the last stop waits for the trip to leave the feed, then the timeout
  const end = tracker.observe(input('tu', at('08:31:00'), {}));
  t.match(end.events, [{ stop_id: 'D', actual_arrival_ms: at('08:15:40'), arrival_source: 'tu', last_stop: true }]);
  t.same(end.counts.anomalies, {}, 'a trip whose last stop has a time did not vanish');
});

t.test('misbehaving feeds: counted, never a rewrite or a negative interval', async (t) => {
  t.test('a vehicle back at a stop it left', async (t) => {
    const tracker = new StopEventTracker({ trip_timeout_s: 900 });
    const seen = (status: string, stop: string, hms: string) =>
      tracker.observe(input('vp', at(hms), { vehicles: [vehicle('bus1', 'T1', status, stop, at(hms))] }));
    seen('stopped_at', 'B', '08:05:10');
    const left = seen('in_transit_to', 'C', '08:06:00');
    t.same(
      left.events.map((e) => e.stop_id),
      ['B'],
    );
    const back = seen('stopped_at', 'B', '08:06:30');
    t.same(back.events, [], 'nothing rewritten');
    t.same(back.counts.anomalies, { vehicle_backwards: 1 });
    const again = seen('stopped_at', 'B', '08:06:30');
    t.same(again.counts.anomalies, {}, 'the same report repeated is not counted again');
    const on = seen('stopped_at', 'C', '08:10:00');
    t.same(on.events, [], 'C waits for the vehicle to leave it');
    const c = seen('in_transit_to', 'D', '08:11:00').events[0]!;
    t.match(c, { stop_id: 'C', actual_arrival_ms: at('08:10:00'), actual_departure_ms: at('08:11:00'), dwell_s: 60 });
  });

  t.test('a prediction that jumps backwards', async (t) => {
    const tracker = new StopEventTracker({ trip_timeout_s: 900 });
    tracker.observe(
      input('vp', at('08:05:10'), { vehicles: [vehicle('bus1', 'T1', 'stopped_at', 'B', at('08:05:10'))] }),
    );
    tracker.observe(
      input('vp', at('08:06:00'), { vehicles: [vehicle('bus1', 'T1', 'in_transit_to', 'C', at('08:06:00'))] }),
    );
    // the vehicle goes quiet; the update puts C before the moment B was left
    tracker.observe(
      input('tu', at('08:06:30'), {
        arrivals: tripUpdate(
          'T1',
          [
            ['C', at('08:05:30'), at('08:05:45')],
            ['D', at('08:15:00'), null],
          ],
          at('08:06:30'),
        ),
      }),
    );
    const out = tracker.observe(input('tu', at('08:30:00'), {}));
    const c = out.events.find((e) => e.stop_id === 'C');
    t.equal(c, undefined, 'C had no usable time: not written');
    t.equal(out.counts.anomalies.prediction_backwards, 2, 'its arrival and departure were both refused');
    t.equal(out.counts.anomalies.trip_vanished, 1, 'and the trip vanished mid-route');
  });

  t.test('two vehicles on one trip', async (t) => {
    const tracker = new StopEventTracker({ trip_timeout_s: 900 });
    const ms = at('08:05:10');
    const out = tracker.observe(
      input('vp', ms, {
        vehicles: [vehicle('bus1', 'T1', 'stopped_at', 'B', ms), vehicle('bus9', 'T1', 'stopped_at', 'D', ms)],
      }),
    );
    t.same(out.events, [], 'the second vehicle does not pass stops for the first');
    t.same(out.counts.anomalies, { vehicles_on_one_trip: 1 });
    const next = tracker.observe(
      input('vp', ms + 30_000, {
        vehicles: [
          vehicle('bus1', 'T1', 'stopped_at', 'B', ms + 30_000),
          vehicle('bus9', 'T1', 'stopped_at', 'D', ms + 30_000),
        ],
      }),
    );
    t.same(next.counts.anomalies, {}, 'counted once per extra vehicle');
  });

  t.test('a trip that vanishes mid-route is closed with what is known', async (t) => {
    const tracker = new StopEventTracker({ trip_timeout_s: 600 });
    tracker.observe(
      input('vp', at('08:05:10'), { vehicles: [vehicle('bus1', 'T1', 'stopped_at', 'B', at('08:05:10'))] }),
    );
    t.same(tracker.observe(input('vp', at('08:10:00'), {})).events, [], 'unseen for less than the timeout: still open');
    const out = tracker.observe(input('vp', at('08:15:11'), {}));
    t.same(
      out.events.map((e) => [e.stop_id, e.actual_arrival_ms, e.arrival_source]),
      [['B', at('08:05:10'), 'vp']],
    );
    t.same(out.counts.anomalies, { trip_vanished: 1 });
    t.equal(tracker.tripsInProgress, 0);
  });

  t.test('a stop that is not on the trip', async (t) => {
    const tracker = new StopEventTracker({ trip_timeout_s: 600 });
    const out = tracker.observe(
      input('vp', at('08:05:10'), {
        vehicles: [{ ...vehicle('bus1', 'T1', 'stopped_at', 'B', at('08:05:10')), stop_id: 'Z', stop_sequence: null }],
      }),
    );
    t.same(out.counts.anomalies, { stop_not_on_trip: 1 });
  });
});

t.test('canceled trips and skipped stops are rows without actual times', async (t) => {
  const tracker = new StopEventTracker({ trip_timeout_s: 600 });
  const ms = at('07:50:00');
  tracker.observe(
    input('tu', ms, {
      arrivals: tripUpdate(
        'T2',
        STOPS.map((s) => [s, null, null]),
        ms,
        'canceled',
      ),
    }),
  );
  const stops: TuStop[] = [
    ['A', null, at('08:00:00')],
    ['B', null, null, 'skipped'],
    ['C', at('08:10:00'), at('08:10:30')],
    ['D', at('08:15:00'), null],
  ];
  const canceled = (ms: number) =>
    tripUpdate(
      'T2',
      STOPS.map((s) => [s, null, null]),
      ms,
      'canceled',
    );
  tracker.observe(
    input('tu', at('07:59:30'), {
      arrivals: [...tripUpdate('T1', stops, at('07:59:30')), ...canceled(at('07:59:30'))],
    }),
  );
  const out = tracker.observe(
    input('tu', at('08:09:50'), {
      arrivals: [...tripUpdate('T1', stops.slice(2), at('08:09:50')), ...canceled(at('08:09:50'))],
    }),
  );
  t.same(
    out.events.map((e) => [e.trip_id, e.stop_id, e.relationship, e.actual_arrival_ms !== null]),
    [
      ['T1', 'A', 'scheduled', true],
      ['T1', 'B', 'skipped', false],
    ],
  );
  t.same(out.counts.anomalies, {});
  const closed = tracker.observe(input('tu', at('08:30:00'), {}));
  t.same(
    closed.events
      .filter((e) => e.trip_id === 'T2')
      .map((e) => [e.stop_id, e.relationship, e.actual_arrival_ms, e.source]),
    STOPS.map((s) => [s, 'canceled', null, null]),
  );
  t.equal(closed.counts.anomalies.trip_vanished, 1, 'T1 vanished before its last stop; the canceled T2 is not counted');
});

t.test('headways: since the previous departure of the route and direction from the station', async (t) => {
  const tracker = new StopEventTracker({ trip_timeout_s: 600 });
  const events: StopEvent[] = [];
  const pass = (bus: string, trip: string, status: string, stop: string, hms: string) =>
    events.push(
      ...tracker.observe(input('vp', at(hms), { vehicles: [vehicle(bus, trip, status, stop, at(hms))] })).events,
    );
  pass('bus1', 'T1', 'stopped_at', 'B', '08:05:00');
  pass('bus1', 'T1', 'in_transit_to', 'C', '08:06:00');
  pass('bus2', 'T2', 'stopped_at', 'B', '08:09:00');
  pass('bus2', 'T2', 'in_transit_to', 'C', '08:09:30');
  const [first, second] = events.filter((e) => e.stop_id === 'B');
  t.equal(first!.headway_s, null, 'the first departure of the day has none');
  t.equal(first!.scheduled_headway_s, null);
  t.equal(second!.headway_s, 210, '08:09:30 − 08:06:00');
  t.equal(second!.scheduled_headway_s, 720, 'T2 is scheduled 12 min after T1');
});

t.test('prediction errors: samples by horizon against the vehicle, one per 30 s', async (t) => {
  const tracker = new StopEventTracker({ trip_timeout_s: 900 });
  // C predicted at 08:10:00 from 07:55 on, polled every 10 s; it arrives at 08:11:00
  for (let ms = at('07:55:00'); ms < at('08:10:00'); ms += 10_000) {
    tracker.observe(
      input('tu', ms, {
        arrivals: tripUpdate(
          'T1',
          [
            ['C', at('08:10:00'), at('08:10:30')],
            ['D', at('08:15:00'), null],
          ],
          ms,
        ),
      }),
    );
    if (ms >= at('08:06:00'))
      tracker.observe(input('vp', ms, { vehicles: [vehicle('bus1', 'T1', 'in_transit_to', 'C', ms)] }));
  }
  tracker.observe(
    input('vp', at('08:11:00'), { vehicles: [vehicle('bus1', 'T1', 'stopped_at', 'C', at('08:11:00'))] }),
  );
  const c = tracker.observe(
    input('vp', at('08:11:30'), { vehicles: [vehicle('bus1', 'T1', 'in_transit_to', 'D', at('08:11:30'))] }),
  ).events[0]!;
  t.equal(c.stop_id, 'C');
  // samples at 07:55:00, 07:55:30 … 08:09:30 (every 30 s): horizons 15 min … 30 s
  const by = Object.fromEntries(c.prediction_errors.map((p) => [p.horizon, p]));
  t.same(Object.keys(by).sort(), ['0-3', '12-30', '3-6', '6-12']);
  t.same(by['0-3'], { horizon: '0-3', error_s: 60, samples: 5 }, 'under 3 min: 08:07:30 … 08:09:30');
  t.same(by['3-6'], { horizon: '3-6', error_s: 60, samples: 6 }, '08:04:30 … 08:07:00');
  t.same(by['6-12'], { horizon: '6-12', error_s: 60, samples: 12 }, '07:58:30 … 08:04:00');
  t.same(by['12-30'], { horizon: '12-30', error_s: 60, samples: 7 }, '07:55:00 … 07:58:00');
});

t.test('a trip written before (a restart, an archive replayed again) resumes after its last stop stored', async (t) => {
  const tracker = new StopEventTracker({
    trip_timeout_s: 900,
    written: [{ group: 'fake', service_date: DAY, trip_id: 'T1', trip_instance: null, stop_sequence: 2, stop_ids: [] }],
  });
  const seen = (status: string, stop: string, hms: string) =>
    tracker.observe(input('vp', at(hms), { vehicles: [vehicle('bus1', 'T1', status, stop, at(hms))] }));
  t.same(seen('in_transit_to', 'C', '08:06:00').events, [], 'B is stored already');
  seen('stopped_at', 'C', '08:10:00');
  t.same(
    seen('in_transit_to', 'D', '08:11:00').events.map((e) => e.stop_id),
    ['C'],
  );
});
