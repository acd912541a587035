// The matching stage over small schedules: which strategy decides, on which service day, and the
// counts it leaves on the poll.
import t from 'tap';
import type { ScheduleIndex } from '../../core/ports.ts';
import type { TripRelationship } from '../../core/types.ts';
import { decodeFeedMessage } from '../decode.ts';
import type { TripDescriptorMsg } from '../gtfs-rt-types.ts';
import { RejectTally } from '../normalize-context.ts';
import { normalizeFeedMessage } from '../normalize-feed.ts';
import { encodeFeed, fakeSchedule, header, testConfig } from '../../test/support/pipeline-fakes.ts';
import { TripMatcher } from './match.ts';

const cfg = testConfig();
// Monday 2024-05-06, UTC for round numbers. `wk` runs Monday and Tuesday, `mon` Monday only.
const schedule = fakeSchedule({
  routes: [
    { route_id: 'B9', route_type: 3 },
    { route_id: 'L1', route_type: 1 },
  ],
  stops: [{ stop_id: 'A' }, { stop_id: 'B' }],
  trips: [
    { trip_id: 'am-0', route_id: 'B9', direction_id: 0, service_id: 'wk' },
    { trip_id: 'am-1', route_id: 'B9', direction_id: 1, service_id: 'wk' },
    { trip_id: 'late', route_id: 'B9', direction_id: 0, service_id: 'wk' },
    { trip_id: 'mon-late', route_id: 'B9', direction_id: 0, service_id: 'mon' },
    { trip_id: 'early', route_id: 'L1', direction_id: 0, service_id: 'wk' },
  ],
  stopTimes: {
    'am-0': [
      ['A', '08:00:00'],
      ['B', '08:20:00'],
    ],
    'am-1': [
      ['A', '08:00:00'],
      ['B', '08:25:00'],
    ],
    late: [
      ['A', '24:30:00'],
      ['B', '24:40:00'],
    ],
    'mon-late': [
      ['A', '25:00:00'],
      ['B', '25:10:00'],
    ],
    early: [
      ['A', '00:30:00'],
      ['B', '00:45:00'],
    ],
  },
  services: { wk: ['2024-05-06', '2024-05-07'], mon: ['2024-05-06'] },
});
const MONDAY_8 = Date.parse('2024-05-06T08:05:00Z');
const TUESDAY_0035 = Date.parse('2024-05-07T00:35:00Z');

function match(
  td: TripDescriptorMsg,
  nowMs: number,
  opts: { relationship?: TripRelationship; matcher?: TripMatcher; schedule?: ScheduleIndex } = {},
) {
  const matcher = opts.matcher ?? new TripMatcher();
  const result = matcher.match({
    td,
    relationship: opts.relationship ?? 'scheduled',
    schedule: 'schedule' in opts ? opts.schedule : schedule,
    timezone: 'UTC',
    now_ms: nowMs,
  });
  return { ...result, trip: result.trip?.trip_id, summary: matcher.summary() };
}

t.test('exact: the id on its start date; without start_date the run nearest now', async (t) => {
  t.match(match({ trip_id: 'am-0', start_date: '20240506' }, MONDAY_8), {
    outcome: 'matched',
    strategy: 'exact',
    trip: 'am-0',
    service_date: '2024-05-06',
    previous_day: false,
  });
  t.match(match({ trip_id: 'am-0' }, MONDAY_8), { outcome: 'matched', service_date: '2024-05-06' });
  t.match(
    match({ trip_id: 'late' }, TUESDAY_0035),
    { outcome: 'matched', service_date: '2024-05-06', previous_day: false },
    'after midnight a late trip is still the day before, start_date or not',
  );
});

t.test('a trip past 24:00 published with the calendar date gets the day before', async (t) => {
  t.match(
    match({ trip_id: 'mon-late', start_date: '20240507' }, TUESDAY_0035),
    {
      outcome: 'matched',
      service_date: '2024-05-06',
      previous_day: true,
    },
    'its service does not run on start_date',
  );
  t.match(
    match({ trip_id: 'late', start_date: '20240507', start_time: '00:30:00' }, TUESDAY_0035),
    {
      service_date: '2024-05-06',
      previous_day: true,
    },
    'runs both days: start_time 00:30 is the calendar clock',
  );
  t.match(
    match({ trip_id: 'late', start_date: '20240506', start_time: '24:30:00' }, TUESDAY_0035),
    {
      service_date: '2024-05-06',
      previous_day: false,
    },
    'start_time 24:30 on the service date is taken as published',
  );
  t.match(
    match({ trip_id: 'late', start_date: '20240507' }, TUESDAY_0035),
    { service_date: '2024-05-06', previous_day: true },
    "no start_time: Monday's run is 5 minutes away, Tuesday's a day",
  );
  t.match(
    match({ trip_id: 'late', start_date: '20240507' }, Date.parse('2024-05-08T00:35:00Z')),
    { service_date: '2024-05-07', previous_day: false },
    "a day later the same descriptor is Tuesday's run",
  );
  t.match(
    match({ trip_id: 'late', start_date: '20240507', start_time: '00:35:00', schedule_relationship: 6 }, TUESDAY_0035, {
      relationship: 'duplicated',
    }),
    { service_date: '2024-05-07', previous_day: false },
    "a DUPLICATED trip's start_time is its own: no shift",
  );
  t.match(
    match({ trip_id: 'am-0', start_date: '20240508' }, MONDAY_8),
    { outcome: 'unmatched', strategy: 'exact', trip: 'am-0', service_date: null },
    'an id that does not run that day is known (route, mode) but not matched',
  );
});

t.test('start: route, direction and start time when the id is unknown or absent', async (t) => {
  t.match(
    match(
      { trip_id: 'X-123', route_id: 'B9', direction_id: 1, start_date: '20240506', start_time: '08:00:00' },
      MONDAY_8,
    ),
    {
      outcome: 'matched',
      strategy: 'start',
      trip: 'am-1',
      summary: { strategies: { exact: { unmatched: 1 }, start: { matched: 1 } } },
    },
  );
  t.match(
    match({ route_id: 'B9', direction_id: 0, start_time: '08:00:00' }, MONDAY_8),
    { outcome: 'matched', trip: 'am-0', service_date: '2024-05-06' },
    'no id, no start_date: the day whose 08:00 is nearest',
  );
  const both = match({ route_id: 'B9', start_date: '20240506', start_time: '08:00:00' }, MONDAY_8);
  t.match(both, { outcome: 'ambiguous', strategy: 'start', trip: undefined });
  t.same(
    both.summary,
    {
      trips: 1,
      matched: 0,
      unmatched: 0,
      ambiguous: 1,
      previous_day: 0,
      match_rate: 0,
      strategies: { start: { matched: 0, unmatched: 0, ambiguous: 1 } },
    },
    'no direction: two trips leave at 08:00, none is chosen',
  );
  t.match(
    match({ route_id: 'B9', direction_id: 0, start_date: '20240507', start_time: '01:00:00' }, TUESDAY_0035),
    {
      outcome: 'matched',
      trip: 'mon-late',
      service_date: '2024-05-06',
      previous_day: true,
    },
    '01:00 on Tuesday is 25:00 of Monday',
  );
  t.match(
    match({ route_id: 'L1', start_date: '20240507', start_time: '00:30:00' }, TUESDAY_0035),
    { outcome: 'matched', trip: 'early', service_date: '2024-05-07' },
    "Tuesday's own 00:30 trip is not Monday's",
  );
  t.match(match({ route_id: 'B9', start_date: '20240507', start_time: '00:30:00' }, TUESDAY_0035), {
    trip: 'late',
    previous_day: true,
  });
  t.match(match({ route_id: 'B9', start_date: '20240506', start_time: '09:00:00' }, MONDAY_8), {
    outcome: 'unmatched',
    strategy: 'start',
  });
});

t.test('what each strategy needs, and trips the feed says are extra', async (t) => {
  t.match(
    match({ start_date: '20240506' }, MONDAY_8),
    { outcome: 'unmatched', strategy: null, summary: { trips: 1, unmatched: 1, strategies: {} } },
    'nothing to go on: no strategy applies',
  );
  t.match(
    match(
      { trip_id: 'X-9', route_id: 'B9', start_time: '08:00:00', start_date: '20240506', schedule_relationship: 1 },
      MONDAY_8,
      { relationship: 'added' },
    ),
    { outcome: 'unmatched', strategy: 'exact', summary: { strategies: { exact: { unmatched: 1 } } } },
    'ADDED: looked up by id only, never given a scheduled trip that starts at the same time',
  );
  t.match(
    match({ trip_id: 'am-0', start_date: '20240506' }, MONDAY_8, { schedule: undefined }),
    { outcome: 'unmatched', strategy: null },
    'no schedule: unmatched, no strategy tried',
  );
  t.match(
    match({ trip_id: 'am-0', route_id: 'B9', start_date: '20240508', start_time: '08:00:00' }, MONDAY_8),
    {
      outcome: 'unmatched',
      trip: 'am-0',
      summary: { strategies: { exact: { unmatched: 1 } } },
    },
    'a known id that does not run is not swapped for another trip by start time',
  );
});

t.test('the configured strategies, in their order', async (t) => {
  t.same(new TripMatcher().order, ['exact', 'nyct', 'start', 'nyct_loose']);
  t.same(new TripMatcher('start').order, ['start']);
  t.same(new TripMatcher(['start', 'exact']).order, ['start', 'exact']);
  const exactOnly = new TripMatcher('exact');
  t.match(
    match(
      { trip_id: 'X-1', route_id: 'B9', direction_id: 0, start_date: '20240506', start_time: '08:00:00' },
      MONDAY_8,
      { matcher: exactOnly },
    ),
    { outcome: 'unmatched', summary: { strategies: { exact: { unmatched: 1 } } } },
  );
  t.notOk('start' in exactOnly.summary()!.strategies);
  const startFirst = new TripMatcher(['start', 'exact']);
  t.match(
    match(
      { trip_id: 'late', route_id: 'B9', direction_id: 0, start_date: '20240506', start_time: '08:00:00' },
      MONDAY_8,
      { matcher: startFirst },
    ),
    { outcome: 'matched', strategy: 'start', trip: 'am-0' },
    "the feed's ids are not trusted: start time first",
  );
});

t.test('counts over a poll, on the normalized output', async (t) => {
  const body = encodeFeed({
    header: header(TUESDAY_0035 / 1000),
    entity: [
      {
        id: '1',
        trip_update: {
          trip: { trip_id: 'late', start_date: '20240507', start_time: '00:30:00' },
          stop_time_update: [{ stop_id: 'B', arrival: { time: Date.parse('2024-05-07T00:41:00Z') / 1000 } }],
        },
      },
      {
        id: '2',
        trip_update: {
          trip: { route_id: 'B9', direction_id: 0, start_date: '20240507', start_time: '01:00:00' },
          stop_time_update: [{ stop_id: 'B', arrival: { delay: 30 } }],
        },
      },
      { id: '3', trip_update: { trip: { trip_id: 'nope', start_date: '20240507' }, stop_time_update: [] } },
      { id: '4', trip_update: { trip: { start_date: '20240507' }, stop_time_update: [] } },
      {
        id: '5',
        vehicle: { trip: { trip_id: 'early', start_date: '20240507' }, position: { latitude: 1, longitude: 2 } },
      },
    ],
  });
  const decoded = decodeFeedMessage(body);
  if (!decoded.ok) throw new Error(decoded.error);
  const out = normalizeFeedMessage(decoded.message, {
    feed_id: 'f',
    observed_ms: TUESDAY_0035 + 1000,
    schedule,
    timezone: 'UTC',
    freshness: cfg.freshness,
    delay: cfg.delay,
    rejects: new RejectTally(),
    matcher: new TripMatcher('auto'),
  });
  t.same(
    out.matching,
    {
      trips: 4,
      matched: 3,
      unmatched: 1,
      ambiguous: 0,
      previous_day: 2,
      match_rate: 0.75,
      strategies: {
        exact: { matched: 2, unmatched: 1, ambiguous: 0 },
        start: { matched: 1, unmatched: 0, ambiguous: 0 },
      },
    },
    'entity 4 names no trip and is rejected before matching',
  );
  t.same(out.rejected, { missing_trip: 1 });
  const late = out.arrivals.find((a) => a.trip_id === 'late')!;
  t.match(late, {
    service_date: '2024-05-06',
    delay_s: 60,
    scheduled_ms: Date.parse('2024-05-07T00:40:00Z'),
    in_schedule: true,
  });
  const byStart = out.arrivals.find((a) => a.trip_id === 'mon-late')!;
  t.match(
    byStart,
    { service_date: '2024-05-06', delay_s: 30, scheduled_ms: Date.parse('2024-05-07T01:10:00Z'), route_id: 'B9' },
    "a trip found by its start time carries the schedule's id",
  );
  t.same(out.trips.map((o) => [o.trip_id, o.service_date, o.in_schedule, o.source]).sort(), [
    ['early', '2024-05-07', true, 'vehicle_position'],
    ['late', '2024-05-06', true, 'trip_update'],
    ['mon-late', '2024-05-06', true, 'trip_update'],
    ['nope', '2024-05-07', false, 'trip_update'],
  ]);
  t.equal(out.vehicles[0]!.trip_id, 'early');
});
