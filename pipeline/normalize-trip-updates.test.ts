import t from 'tap';
import type { ScheduleIndex } from '../core/ports.ts';
import type { Arrival, Mode } from '../core/types.ts';
import { decodeFeedMessage } from './decode.ts';
import { RejectTally } from './normalize-context.ts';
import { normalizeFeedMessage, type NormalizedPoll } from './normalize-feed.ts';
import { encodeFeed, fakeSchedule, header, testConfig } from '../test/support/pipeline-fakes.ts';

const cfg = testConfig();
// 2023-11-07 is after the DST change: Los Angeles is UTC-8, so 08:00 local = 16:00Z
const schedule = fakeSchedule({
  timezone: 'America/Los_Angeles',
  routes: [
    { route_id: 'L1', route_type: 2 },
    { route_id: 'B9', route_type: 3 },
  ],
  stops: [{ stop_id: 'A1', parent: 'A' }, { stop_id: 'B1', parent: 'B' }, { stop_id: 'C1' }, { stop_id: 'D1' }],
  trips: [
    { trip_id: 'T1', route_id: 'L1', direction_id: 1, service_id: 'wk' },
    { trip_id: 'LATE', route_id: 'B9', service_id: 'wk' },
  ],
  stopTimes: {
    T1: [
      ['A1', '08:00:00'],
      ['B1', '08:10:00', '08:11:00'],
      ['C1', '08:20:00'],
      ['D1', '08:30:00'],
    ],
    LATE: [
      ['A1', '23:50:00'],
      ['B1', '24:40:00'],
    ],
  },
  services: { wk: ['2023-11-06', '2023-11-07'] },
});
const OBSERVED = Date.parse('2023-11-07T16:05:00Z');

function run(
  entities: unknown[],
  opts: { schedule?: ScheduleIndex; observed?: number; headerS?: number; mode?: Mode } = {},
): NormalizedPoll {
  const observed = opts.observed ?? OBSERVED;
  const decoded = decodeFeedMessage(
    encodeFeed({ header: header(opts.headerS ?? Math.floor(observed / 1000)), entity: entities }),
  );
  if (!decoded.ok) throw new Error(decoded.error);
  return normalizeFeedMessage(decoded.message, {
    feed_id: 'f',
    observed_ms: observed,
    schedule: 'schedule' in opts ? opts.schedule : schedule,
    timezone: (opts.schedule ?? schedule)?.timezone ?? 'UTC',
    freshness: cfg.freshness,
    delay: cfg.delay,
    rejects: new RejectTally(),
    default_mode: opts.mode ?? null,
  });
}

const tu = (id: string, trip: Record<string, unknown>, stus: unknown[] = [], extra: Record<string, unknown> = {}) => ({
  id,
  trip_update: { trip, stop_time_update: stus, ...extra },
});
const at = (rows: Arrival[], stop: string) => rows.find((r) => r.stop_id === stop);

t.test('a delay-only update is resolved against the schedule and propagated to later stops', async (t) => {
  const out = run([
    tu('e1', { trip_id: 'T1', start_date: '20231107' }, [{ stop_sequence: 2, arrival: { delay: 120 } }]),
  ]);
  t.equal(out.arrivals.length, 3, 'B, C, D; nothing before the first update');
  const b = at(out.arrivals, 'B1')!;
  t.equal(new Date(b.scheduled_ms!).toISOString(), '2023-11-07T16:10:00.000Z');
  t.equal(b.predicted_ms! - b.scheduled_ms!, 120_000);
  t.equal(b.delay_s, 120);
  t.equal(b.delay_state, 'on_time');
  t.equal(b.station_id, 'B', 'parent station');
  t.equal(b.route_id, 'L1');
  t.equal(b.mode, 'rail');
  t.equal(b.direction_id, 1);
  t.equal(b.service_date, '2023-11-07');
  t.equal(b.in_schedule, true);
  const d = at(out.arrivals, 'D1')!;
  t.equal(d.delay_s, 120, 'propagated');
  t.equal(new Date(d.predicted_ms!).toISOString(), '2023-11-07T16:32:00.000Z');
  t.equal(d.station_id, 'D1', 'no parent: the stop itself');
});

t.test('times without delays give delays; departures are compared with scheduled departures', async (t) => {
  const out = run([
    tu('e1', { trip_id: 'T1', start_date: '20231107' }, [
      { stop_sequence: 2, departure: { time: Date.parse('2023-11-07T16:12:30Z') / 1000 } },
      { stop_id: 'C1', arrival: { time: Date.parse('2023-11-07T16:19:00Z') / 1000 } },
    ]),
  ]);
  t.equal(at(out.arrivals, 'B1')!.delay_s, 90);
  t.equal(at(out.arrivals, 'C1')!.delay_s, -60, 'matched by stop_id after the previous stop');
  t.equal(at(out.arrivals, 'C1')!.delay_state, 'on_time', '-60 is not below -60');
  t.equal(at(out.arrivals, 'D1')!.delay_s, -60);
});

t.test('delay states follow the configured thresholds', async (t) => {
  const state = (delay: number) =>
    at(
      run([tu('e', { trip_id: 'T1', start_date: '20231107' }, [{ stop_sequence: 1, arrival: { delay } }])]).arrivals,
      'A1',
    )!.delay_state;
  t.equal(state(-61), 'early');
  t.equal(state(0), 'on_time');
  t.equal(state(300), 'on_time');
  t.equal(state(301), 'late');
});

t.test('SKIPPED stops are skipped and counted; NO_DATA stops propagation', async (t) => {
  const out = run([
    tu('e1', { trip_id: 'T1', start_date: '20231107' }, [
      { stop_sequence: 1, arrival: { delay: 400 } },
      { stop_sequence: 2, schedule_relationship: 1 },
      { stop_sequence: 3, schedule_relationship: 2 },
    ]),
  ]);
  t.equal(at(out.arrivals, 'A1')!.delay_state, 'late');
  t.equal(at(out.arrivals, 'B1')!.delay_state, 'skipped');
  t.equal(at(out.arrivals, 'B1')!.predicted_ms, null);
  t.equal(at(out.arrivals, 'C1')!.delay_state, 'unknown');
  t.notOk(at(out.arrivals, 'D1'), 'no delay carried past NO_DATA');
  t.equal(out.trips[0]!.skipped_stops, 1);
});

t.test('a trip-level delay applies to every stop when no stop has its own update', async (t) => {
  const out = run([tu('e1', { trip_id: 'T1', start_date: '20231107' }, [], { delay: 45 })]);
  t.equal(out.arrivals.length, 4);
  t.ok(out.arrivals.every((a) => a.delay_s === 45));
});

t.test('CANCELED trips: every scheduled stop canceled, observation recorded', async (t) => {
  const out = run([tu('e1', { trip_id: 'T1', start_date: '20231107', schedule_relationship: 3 })]);
  t.equal(out.arrivals.length, 4);
  t.ok(out.arrivals.every((a) => a.delay_state === 'canceled' && a.predicted_ms === null && a.scheduled_ms !== null));
  t.same(
    out.trips.map((o) => [o.trip_id, o.relationship, o.in_schedule, o.service_date]),
    [['T1', 'canceled', true, '2023-11-07']],
  );
});

t.test('ADDED trips and unknown trip ids are kept and flagged', async (t) => {
  const out = run([
    tu('e1', { trip_id: 'EXTRA-1', route_id: 'L1', schedule_relationship: 1, start_date: '20231107' }, [
      { stop_id: 'C1', arrival: { time: Date.parse('2023-11-07T16:30:00Z') / 1000 } },
    ]),
    tu('e2', { trip_id: 'NOT-IN-GTFS' }, [
      { stop_id: 'B1', stop_sequence: 4, arrival: { time: Date.parse('2023-11-07T16:40:00Z') / 1000 } },
    ]),
    tu('e3', { trip_id: 'T1', schedule_relationship: 1, start_date: '20231107' }, [
      { stop_id: 'D1', arrival: { delay: 10 } },
    ]),
  ]);
  const added = out.arrivals.find((a) => a.trip_id === 'EXTRA-1')!;
  t.equal(added.in_schedule, false);
  t.equal(added.trip_relationship, 'added');
  t.equal(added.scheduled_ms, null);
  t.equal(added.delay_state, 'unknown');
  t.equal(added.mode, 'rail', 'mode from the route the feed names');
  const unknown = out.arrivals.find((a) => a.trip_id === 'NOT-IN-GTFS')!;
  t.equal(unknown.in_schedule, false);
  t.equal(unknown.station_id, 'B', 'stop still resolved to its station');
  t.equal(unknown.service_date, '2023-11-07', 'local date of the feed');
  t.same(
    out.trips.map((o) => o.in_schedule),
    [false, false, false],
    'an ADDED trip reusing a scheduled id is still extra service',
  );
});

t.test(
  'the same train twice (same trip, start date and stops, other predictions) is a duplicate_trip, the first kept; a ' +
    'missing trip_id is missing_trip',
  async (t) => {
    const out = run([
      tu('e1', { trip_id: 'T1', start_date: '20231107' }, [{ stop_sequence: 4, arrival: { delay: 5 } }]),
      tu('e2', { trip_id: 'T1', start_date: '20231107' }, [{ stop_sequence: 4, arrival: { delay: 999 } }]),
      tu('e3', { route_id: 'L1' }, [{ stop_sequence: 1, arrival: { delay: 1 } }]),
    ]);
    t.same(out.rejected, { duplicate_trip: 1, missing_trip: 1 });
    t.equal(out.arrivals.length, 1);
    t.equal(out.arrivals[0]!.delay_s, 5);
  },
);

t.test('a repeated stop_sequence within one trip is rejected and counted', async (t) => {
  const out = run([
    tu('e1', { trip_id: 'T1', start_date: '20231107' }, [
      { stop_sequence: 3, arrival: { delay: 1 } },
      { stop_sequence: 3, arrival: { delay: 2 } },
    ]),
  ]);
  t.same(out.rejected, { duplicate_stop_time: 1 });
  t.equal(at(out.arrivals, 'C1')!.delay_s, 1);
});

t.test('without start_date, a trip past midnight belongs to the previous service date', async (t) => {
  // 00:30 local on 2023-11-08 = 08:30Z; LATE runs 23:50 → 24:40 on the 7th's service
  const out = run([tu('e1', { trip_id: 'LATE' }, [{ stop_sequence: 2, arrival: { delay: 60 } }])], {
    observed: Date.parse('2023-11-08T08:30:00Z'),
  });
  t.equal(out.trips[0]!.service_date, '2023-11-07');
  t.equal(new Date(out.arrivals[0]!.scheduled_ms!).toISOString(), '2023-11-08T08:40:00.000Z', '24:40 of the 7th');
});

t.test('DUPLICATED trips run the original pattern from their own start_time', async (t) => {
  const out = run([
    tu('e1', { trip_id: 'T1', start_date: '20231107', start_time: '09:00:00', schedule_relationship: 6 }, [
      { stop_sequence: 1, departure: { delay: 0 } },
    ]),
  ]);
  const a = at(out.arrivals, 'A1')!;
  t.equal(new Date(a.scheduled_ms!).toISOString(), '2023-11-07T17:00:00.000Z');
  t.equal(a.in_schedule, false);
  t.equal(a.trip_relationship, 'duplicated');
});

t.test('without a schedule: rows from the feed alone, mode null', async (t) => {
  const out = run(
    [
      tu('e1', { trip_id: 'T1', route_id: 'L1' }, [
        { stop_id: 'X', arrival: { time: 1_699_373_400, scheduled_time: 1_699_373_340 } },
        { stop_id: 'Y', arrival: { delay: 30 } },
        { stop_sequence: 3 },
      ]),
    ],
    { schedule: undefined },
  );
  t.equal(out.arrivals.length, 2);
  t.equal(out.arrivals[0]!.delay_s, 60, 'from NEW-style scheduled_time');
  t.equal(out.arrivals[1]!.predicted_ms, null, 'a bare delay predicts nothing without a scheduled time');
  t.equal(out.arrivals[0]!.mode, null);
  t.same(out.rejected, { missing_stop: 1 });
});

t.test("feeds[].mode: trips and arrivals whose route the schedule cannot resolve take the feed's mode", async (t) => {
  const entities = [
    tu('e1', { trip_id: 'T1', start_date: '20231107' }, [{ stop_sequence: 4, arrival: { delay: 5 } }]),
    tu('e2', { trip_id: 'X7', route_id: 'R7' }, [{ stop_id: 'X', arrival: { time: 1_699_373_400 } }]),
  ];
  const out = run(entities, { mode: 'bus' });
  t.same(
    out.arrivals.map((a) => [a.trip_id, a.mode]),
    [
      ['T1', 'rail'],
      ['X7', 'bus'],
    ],
    'a known route keeps its own mode',
  );
  t.same(
    out.trips.map((o) => o.mode),
    ['rail', 'bus'],
  );
  const alone = run(entities, { schedule: undefined, mode: 'streetcar' });
  t.same(
    alone.trips.map((o) => o.mode),
    ['streetcar', 'streetcar'],
    'no schedule: every trip',
  );
  t.same(
    alone.arrivals.map((a) => [a.trip_id, a.mode]),
    [['X7', 'streetcar']],
    "and its arrivals (T1's lone update has no stop id)",
  );
});

t.test('trip updates stamped in the future or years ago are rejected', async (t) => {
  const observedS = OBSERVED / 1000;
  const out = run([
    tu('e1', { trip_id: 'T1', start_date: '20231107' }, [], { timestamp: observedS + 3600 }),
    tu('e2', { trip_id: 'LATE' }, [], { timestamp: observedS - 3 * 365 * 86_400 }),
  ]);
  t.same(out.rejected, { timestamp_future: 1, timestamp_too_old: 1 });
  t.equal(out.trips.length, 0);
});

t.test('a trip listed in trips.txt but not running on its service date is not in the schedule', async (t) => {
  const out = run(
    [
      tu('e1', { trip_id: 'T1', start_date: '20231108' }, [{ stop_sequence: 1, arrival: { delay: 0 } }]),
      tu('e2', { trip_id: 'LATE' }, [{ stop_sequence: 1, arrival: { delay: 0 } }]),
    ],
    { observed: Date.parse('2023-11-10T16:05:00Z') },
  );
  t.same(
    out.trips.map((o) => [o.trip_id, o.in_schedule, o.service_date]),
    [
      ['T1', false, '2023-11-08'],
      ['LATE', false, '2023-11-10'],
    ],
  );
  t.ok(
    out.arrivals.every((a) => !a.in_schedule && a.scheduled_ms !== null),
    'still resolved against its stop times',
  );
});
