// The loose NYCT match over a small schedule: which scheduled trip a train running behind the
// published timetable is given, the window's edges, the previous service day, route aliases,
// and one train per scheduled run across a snapshot.
import t from 'tap';
import { publicArrival, publicVehicle } from '../../core/public-forms.ts';
import type { Arrival, TripObservation, VehiclePosition } from '../../core/types.ts';
import { decodeFeedMessage } from '../decode.ts';
import type { TripDescriptorMsg } from '../gtfs-rt-types.ts';
import { RejectTally } from '../normalize-context.ts';
import { normalizeFeedMessage } from '../normalize-feed.ts';
import { encodeFeed, fakeSchedule, header, testConfig } from '../../test/support/pipeline-fakes.ts';
import { TripMatcher } from './match.ts';

const cfg = testConfig();
// Monday 2024-05-06 in UTC. `wk` runs Monday and Tuesday, `mon` Monday only. The trips carry
// the agency's id in `mta_trip_id` (route, direction, path); the origin is the first departure.
const trip = (trip_id: string, route_id: string, mta: string, service_id = 'wk') => ({
  trip_id,
  route_id,
  mta_trip_id: mta,
  service_id,
});
const schedule = fakeSchedule({
  routes: ['1', '2', '3', '4', '5', 'GS'].map((route_id) => ({ route_id, route_type: 1 })),
  stops: [{ stop_id: 'X' }, { stop_id: 'Y' }],
  trips: [
    trip('2-0600', '2', '2..S01R'),
    trip('2-0610', '2', '2..S01R'),
    trip('2-0700', '2', '2..S01R'),
    trip('3-095959', '3', '3..S01R'),
    trip('4-1000', '4', '4..S01R'),
    trip('1-2405', '1', '1..N01R', 'mon'),
    trip('1-2630', '1', '1..N01R', 'mon'),
    trip('GS-0600', 'GS', 'GS.N01R'),
    trip('5-0600', '5', '5..S01R'),
  ],
  stopTimes: {
    '2-0600': [
      ['X', '06:00:00'],
      ['Y', '06:20:00'],
    ],
    '2-0610': [
      ['X', '06:10:00'],
      ['Y', '06:30:00'],
    ],
    '2-0700': [
      ['X', '07:00:00'],
      ['Y', '07:20:00'],
    ],
    '3-095959': [
      ['X', '09:59:59'],
      ['Y', '10:20:00'],
    ],
    '4-1000': [
      ['X', '10:00:00'],
      ['Y', '10:20:00'],
    ],
    '1-2405': [
      ['X', '24:05:00'],
      ['Y', '24:25:00'],
    ],
    '1-2630': [
      ['X', '26:30:00'],
      ['Y', '26:50:00'],
    ],
    'GS-0600': [
      ['X', '06:00:00'],
      ['Y', '06:05:00'],
    ],
    '5-0600': [
      ['X', '06:00:00'],
      ['Y', '06:20:00'],
    ],
  },
  services: { wk: ['2024-05-06', '2024-05-07'], mon: ['2024-05-06'] },
});
const MONDAY_0610 = Date.parse('2024-05-06T06:10:00Z');
const TUESDAY_0020 = Date.parse('2024-05-07T00:20:00Z');

function match(td: TripDescriptorMsg, nowMs = MONDAY_0610, matcher = new TripMatcher()) {
  const result = matcher.match({ td, relationship: 'scheduled', schedule, timezone: 'UTC', now_ms: nowMs });
  return { ...result, trip: result.trip?.trip_id, summary: matcher.summary() };
}
const monday = (trip_id: string, extra: TripDescriptorMsg = {}): TripDescriptorMsg => ({
  trip_id,
  start_date: '20240506',
  ...extra,
});

t.test('an exact origin wins; a train behind every scheduled origin gets the nearest earlier trip', async (t) => {
  t.match(match(monday('036000_2..S01R', { route_id: '2' })), {
    outcome: 'matched',
    strategy: 'nyct',
    trip: '2-0600',
    late_s: null,
  });
  t.match(
    match(monday('036500_2..S01R', { route_id: '2' })),
    {
      outcome: 'matched',
      strategy: 'nyct_loose',
      trip: '2-0600',
      service_date: '2024-05-06',
      previous_day: false,
      late_s: 300,
      summary: { matched: 1, strategies: { nyct: { unmatched: 1 }, nyct_loose: { matched: 1 } } },
    },
    '06:05: five minutes behind the 06:00',
  );
  t.match(
    match(monday('037500_2..S01R')),
    { strategy: 'nyct_loose', trip: '2-0610', late_s: 300 },
    '06:15: the 06:10, not the 06:00',
  );
  t.match(
    match(monday('041900_2..S01R')),
    { strategy: 'nyct_loose', trip: '2-0610', late_s: 2940 },
    '06:59: the 06:10, not the 07:00 (later)',
  );
  t.match(match(monday('042900_2..S01R')), { strategy: 'nyct_loose', trip: '2-0700', late_s: 540 }, '07:09');
  t.match(
    match(monday('035500_2..S01R')),
    { outcome: 'unmatched', strategy: 'nyct_loose', trip: undefined },
    '05:55: no trip left earlier, and the 06:00 leaves later',
  );
  t.match(
    match(monday('036000_2..S01R'), MONDAY_0610, new TripMatcher(['nyct_loose'])),
    { outcome: 'matched', strategy: 'nyct_loose', trip: '2-0600', late_s: 0 },
    'alone, the loose match takes a train on time (0 s late)',
  );
});

t.test('the window is 0 to 3,600 s, inclusive', async (t) => {
  t.match(
    match(monday('066000_4..S01R'), Date.parse('2024-05-06T11:00:00Z')),
    { outcome: 'matched', strategy: 'nyct_loose', trip: '4-1000', late_s: 3600 },
    '11:00:00 is 3,600 s behind 10:00:00',
  );
  t.match(
    match(monday('066000_3..S01R'), Date.parse('2024-05-06T11:00:00Z')),
    { outcome: 'unmatched', trip: undefined },
    '11:00:00 is 3,601 s behind 09:59:59',
  );
  t.match(
    match(monday('065999_3..S01R'), Date.parse('2024-05-06T11:00:00Z')),
    { outcome: 'unmatched' },
    '10:59:59.4 is 3,600.4 s behind: still outside',
  );
});

t.test('before 03:00 the previous service day, whose trips run past 24:00', async (t) => {
  t.match(
    match({ trip_id: '002000_1..N01R', start_date: '20240507' }, TUESDAY_0020),
    {
      outcome: 'matched',
      strategy: 'nyct_loose',
      trip: '1-2405',
      service_date: '2024-05-06',
      previous_day: true,
      late_s: 900,
    },
    "00:20 on Tuesday is 15 minutes behind Monday's 24:05",
  );
  t.match(
    match({ trip_id: '002000_1..N01R' }, TUESDAY_0020),
    { outcome: 'matched', trip: '1-2405', service_date: '2024-05-06' },
    'without start_date, the day whose 00:20 is nearest now',
  );
  t.match(
    match({ trip_id: '019000_1..N01R', start_date: '20240507' }, Date.parse('2024-05-07T03:10:00Z')),
    { outcome: 'unmatched' },
    "03:10 is 40 minutes behind Monday's 26:30, but from 03:00 on only the day's own trips count",
  );
  t.match(
    match({ trip_id: '002000_1..N01R', start_date: '20240508' }, Date.parse('2024-05-08T00:20:00Z')),
    { outcome: 'unmatched' },
    "Tuesday's 24:05 does not run: the Monday-only service",
  );
});

t.test('same route and direction, a path that fits', async (t) => {
  t.match(
    match(monday('036500_2..N01R')),
    { outcome: 'unmatched', strategy: 'nyct_loose' },
    'northbound: every 2 trip here runs south',
  );
  t.match(
    match(monday('036500_2..S01R', { '.transit_realtime.nyct_trip_descriptor': { direction: 1 } })),
    { outcome: 'unmatched' },
    "the extension's direction (north) over the id's letter",
  );
  t.match(match(monday('036500_2..S02R')), { outcome: 'unmatched' }, 'another path');
  t.match(match(monday('036500_2..S')), { outcome: 'matched', trip: '2-0600' }, 'no path in the id: any path fits');
  t.match(match(monday('036500_3..S01R')), { outcome: 'unmatched' }, 'another route');
});

t.test('route aliases: the feed writes S for GS and 5X for 5', async (t) => {
  const shuttle = monday('036500_S..N01R', { route_id: 'S' });
  t.match(match(shuttle), { outcome: 'unmatched' }, 'no alias: the schedule has no route S');
  t.match(
    match(shuttle, MONDAY_0610, new TripMatcher('auto', { S: 'GS' })),
    { outcome: 'matched', strategy: 'nyct_loose', trip: 'GS-0600', late_s: 300 },
    'S → GS',
  );
  t.match(
    match(monday('036000_S..N01R', { route_id: 'S' }), MONDAY_0610, new TripMatcher('auto', { S: 'GS' })),
    { outcome: 'matched', strategy: 'nyct', trip: 'GS-0600' },
    'the exact NYCT match reads the alias too',
  );
  t.equal(new TripMatcher('auto', { '5X': '5' }).route('5X'), '5');
  t.equal(new TripMatcher('auto', { '5X': '5' }).route('6'), '6', 'other routes as written');
});

/** One snapshot through the normalizer, with the entities in the order given. */
function normalize(entities: Record<string, unknown>[], aliases: Record<string, string> = {}) {
  const decoded = decodeFeedMessage(encodeFeed({ header: header(MONDAY_0610 / 1000), entity: entities }));
  if (!decoded.ok) throw new Error(decoded.error);
  return normalizeFeedMessage(decoded.message, {
    feed_id: 'subway',
    observed_ms: MONDAY_0610 + 1000,
    schedule,
    timezone: 'UTC',
    freshness: cfg.freshness,
    delay: cfg.delay,
    rejects: new RejectTally(),
    matcher: new TripMatcher('auto', aliases),
  });
}
const tu = (id: string, tripId: string, arrivalIso: string, route = '2') => ({
  id,
  trip_update: {
    trip: { trip_id: tripId, route_id: route, start_date: '20240506' },
    stop_time_update: [{ stop_id: 'Y', arrival: { time: Date.parse(arrivalIso) / 1000 } }],
  },
});
const vp = (id: string, tripId: string) => ({
  id,
  vehicle: { trip: { trip_id: tripId }, vehicle: { id }, position: { latitude: 40.7, longitude: -73.9 } },
});
const byTrip = (rows: readonly (Arrival | TripObservation | VehiclePosition)[]) =>
  rows.map((r) => [r.trip_id, r.feed_trip_id ?? null]).sort();

t.test('a scheduled run goes to one train, whatever the order of the feed', async (t) => {
  // 06:05 and 06:08 are both nearest after the 06:00: the 06:05 is the less late
  const a = tu('a', '036500_2..S01R', '2024-05-06T06:26:00Z');
  const b = tu('b', '036800_2..S01R', '2024-05-06T06:29:00Z');
  for (const [order, entities] of [
    ['06:05 first', [a, b, vp('va', '036500_2..S01R')]],
    ['06:08 first', [vp('va', '036500_2..S01R'), b, a]],
  ] as const) {
    const out = normalize([...entities]);
    t.same(
      byTrip(out.trips),
      [
        ['036800_2..S01R', null],
        ['2-0600', '036500_2..S01R'],
        ['2-0600', '036500_2..S01R'],
      ],
      `${order}: the 06:05 train (trip update and vehicle) is the 06:00; the 06:08 keeps its own id`,
    );
    t.same(byTrip(out.vehicles), [['2-0600', '036500_2..S01R']]);
    t.match(out.matching, {
      trips: 3,
      matched: 2,
      unmatched: 1,
      strategies: { nyct_loose: { matched: 2, unmatched: 1, ambiguous: 0 } },
    });
    const given = out.arrivals.find((r) => r.trip_id === '2-0600')!;
    t.match(given, { in_schedule: true, delay_s: 360, feed_trip_id: '036500_2..S01R' }, 'scheduled 06:20, due 06:26');
    t.match(
      [publicArrival(given), publicVehicle(out.vehicles[0]!)],
      [
        { trip_id: '2-0600', feed_trip_id: '036500_2..S01R' },
        { trip_id: '2-0600', feed_trip_id: '036500_2..S01R' },
      ],
      'the API shows both ids',
    );
    t.match(
      out.arrivals.find((r) => r.trip_id === '036800_2..S01R'),
      { in_schedule: false, feed_trip_id: null },
    );
  }

  const own = normalize([
    tu('a', '036500_2..S01R', '2024-05-06T06:26:00Z'),
    tu('c', '036000_2..S01R', '2024-05-06T06:21:00Z'),
  ]);
  t.same(
    byTrip(own.trips),
    [
      ['036500_2..S01R', null],
      ['2-0600', '036000_2..S01R'],
    ],
    'the 06:00 runs under its own id: the 06:05 is not given it (nor an older trip)',
  );
  t.match(own.matching, { strategies: { nyct: { matched: 1 }, nyct_loose: { matched: 0, unmatched: 1 } } });

  const tie = normalize([
    tu('p', '036500_2..S01R', '2024-05-06T06:26:00Z'),
    tu('q', '036500_2..S', '2024-05-06T06:26:00Z'),
  ]);
  t.same(
    byTrip(tie.trips),
    [
      ['036500_2..S', null],
      ['036500_2..S01R', null],
    ],
    'two trains equally late for the 06:00: neither is given it',
  );
});

t.test("aliases reach the stored route; the feed's id is kept only where it is not the trip id", async (t) => {
  const fiveX = tu('x', '036500_5..S01R', '2024-05-06T06:21:00Z', '5X');
  t.match(normalize([fiveX]).arrivals[0], { trip_id: '5-0600', route_id: '5X' }, 'no alias: the route as written');
  t.match(
    normalize([fiveX], { '5X': '5' }).arrivals[0],
    { trip_id: '5-0600', feed_trip_id: '036500_5..S01R', route_id: '5', in_schedule: true },
    '5X → 5',
  );
  const exact = normalize([
    { id: 'e', trip_update: { trip: { trip_id: '2-0700', start_date: '20240506' }, stop_time_update: [] } },
  ]);
  t.same(byTrip(exact.trips), [['2-0700', null]], 'an exact id: nothing kept twice');
});
