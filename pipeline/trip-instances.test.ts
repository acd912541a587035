// One trip id twice in a snapshot (NYCT: five ids twice, same start date, different stops): both
// trains are kept as instances of the trip, through normalizing and the live state; the same train
// reported twice is a duplicate, rejected and counted. Small feeds built here.
import t from 'tap';
import type { DomainEvent, EventBus } from '../core/events.ts';
import type { FeedPoll } from '../core/types.ts';
import { decodeFeedMessage } from './decode.ts';
import type { TripUpdateMsg } from './gtfs-rt-types.ts';
import { RejectTally } from './normalize-context.ts';
import { normalizeFeedMessage, type NormalizedPoll } from './normalize-feed.ts';
import { LiveState } from './state.ts';
import { encodeFeed, fakeSchedule, header, testConfig } from '../test/support/pipeline-fakes.ts';
import { instanceNames } from './trip-instances.ts';

const cfg = testConfig({ feeds: [{ id: 'nyct', kind: 'gtfs-rt', url: 'http://x/nyct' }] });
const NOW_S = Date.parse('2026-03-02T14:00:00Z') / 1000;
const schedule = fakeSchedule({
  timezone: 'America/New_York',
  routes: [{ route_id: 'A', route_type: 1 }],
  stops: ['A02S', 'A03S', 'A05S', 'A07S', 'A09S'].map((stop_id) => ({ stop_id })),
  trips: [{ trip_id: 'A-0830-S', route_id: 'A', direction_id: 1 }],
  stopTimes: {
    'A-0830-S': [
      ['A02S', '08:30:00'],
      ['A03S', '08:32:00'],
      ['A05S', '08:35:00'],
      ['A07S', '08:38:00'],
      ['A09S', '08:41:00'],
    ],
  },
});

function run(entities: unknown[]): NormalizedPoll {
  const decoded = decodeFeedMessage(encodeFeed({ header: header(NOW_S), entity: entities }));
  if (!decoded.ok) throw new Error(decoded.error);
  return normalizeFeedMessage(decoded.message, {
    feed_id: 'nyct',
    observed_ms: NOW_S * 1000,
    schedule,
    timezone: 'America/New_York',
    freshness: cfg.freshness,
    delay: cfg.delay,
    rejects: new RejectTally(),
  });
}

const at = (stop_id: string, timeS: number) => ({ stop_id, arrival: { time: timeS } });
const tu = (id: string, stops: unknown[], extra: Record<string, unknown> = {}) => ({
  id,
  trip_update: { trip: { trip_id: 'A-0830-S', start_date: '20260302' }, stop_time_update: stops, ...extra },
});

t.test('a trip id twice with different stops: both trains kept, told apart by their first stop', async (t) => {
  const out = run([
    tu('1', [at('A03S', NOW_S + 60), at('A05S', NOW_S + 240), at('A09S', NOW_S + 600)]),
    tu('2', [at('A07S', NOW_S + 30), at('A09S', NOW_S + 200)]),
  ]);
  t.same(out.rejected, {});
  const stopsOf = (instance: string) => out.arrivals.filter((a) => a.trip_instance === instance).map((a) => a.stop_id);
  t.same(stopsOf('from:A03S'), ['A03S', 'A05S', 'A07S', 'A09S'], 'the first train (A07S by propagation)');
  t.same(stopsOf('from:A07S'), ['A07S', 'A09S'], 'the second train');
  t.same(
    [...new Set(out.arrivals.map((a) => a.trip_instance))],
    ['from:A03S', 'from:A07S'],
    'same terminal, so the first stop names them',
  );
  t.same(
    out.arrivals.filter((a) => a.stop_id === 'A09S').map((a) => [a.trip_instance, a.predicted_ms]),
    [
      ['from:A03S', (NOW_S + 600) * 1000],
      ['from:A07S', (NOW_S + 200) * 1000],
    ],
    'each train keeps its own prediction',
  );
  t.equal(out.trips.filter((o) => o.source === 'trip_update').length, 2, 'one observation per train');
});

t.test('the same train twice (identical content, or same stops and vehicle) is a duplicate_trip', async (t) => {
  const stops = [at('A03S', NOW_S + 60), at('A05S', NOW_S + 240)];
  const out = run([tu('1', stops), tu('2', stops), tu('3', [at('A03S', NOW_S + 90), at('A05S', NOW_S + 270)])]);
  t.same(out.rejected, { duplicate_trip: 2 });
  t.same(
    out.arrivals.filter((a) => a.stop_id === 'A03S').map((a) => a.predicted_ms),
    [(NOW_S + 60) * 1000],
    'the first report is kept',
  );
  t.ok(out.arrivals.every((a) => a.trip_instance === null));
  t.equal(out.trips.length, 1);
});

t.test('a trip id carried once keeps a null instance; different vehicles name the instances', async (t) => {
  const once = run([tu('1', [at('A03S', NOW_S + 60)])]);
  t.equal(once.arrivals[0]!.trip_instance, null);
  const twice = run([
    tu('1', [at('A03S', NOW_S + 60)], { vehicle: { id: 'R211-4001' } }),
    tu('2', [at('A03S', NOW_S + 60)], { vehicle: { id: 'R211-4021' } }),
  ]);
  t.same(twice.rejected, {});
  t.same(
    twice.arrivals.filter((a) => a.stop_id === 'A03S').map((a) => [a.trip_instance, a.vehicle_id]),
    [
      ['vehicle:R211-4001', 'R211-4001'],
      ['vehicle:R211-4021', 'R211-4021'],
    ],
  );
});

t.test("NYCT: no VehicleDescriptor, but the extension's train id names each train", async (t) => {
  const nyct = (trainId: string) => ({
    trip_id: 'A-0830-S',
    start_date: '20260302',
    '.transit_realtime.nyct_trip_descriptor': { train_id: trainId },
  });
  const out = run([
    {
      id: '1',
      trip_update: {
        trip: nyct('1A 0830+ 207/FAR'),
        stop_time_update: [at('A03S', NOW_S + 60), at('A09S', NOW_S + 600)],
      },
    },
    {
      id: '2',
      trip_update: {
        trip: nyct('1A 0831+ 207/FAR'),
        stop_time_update: [at('A07S', NOW_S + 30), at('A09S', NOW_S + 200)],
      },
    },
  ]);
  t.same(out.rejected, {});
  t.same(
    [...new Set(out.arrivals.map((a) => `${a.trip_instance} ${a.vehicle_id}`))],
    ['vehicle:1A 0830+ 207/FAR 1A 0830+ 207/FAR', 'vehicle:1A 0831+ 207/FAR 1A 0831+ 207/FAR'],
    'stable across polls as the trains advance, and the arrivals name the train',
  );
});

t.test('instance names: the most stable discriminator that tells every one apart', async (t) => {
  const msg = (o: Record<string, unknown>) => ({ trip: {}, stop_time_update: [], ...o }) as unknown as TripUpdateMsg;
  t.same(instanceNames([msg({ stop_time_update: [{ stop_id: 'X' }] })]), [null], 'alone: none');
  t.same(
    instanceNames([
      msg({ trip: { start_time: '08:30:00' }, stop_time_update: [{ stop_id: 'X' }] }),
      msg({ trip: { start_time: '08:40:00' }, stop_time_update: [{ stop_id: 'X' }] }),
    ]),
    ['start:08:30:00', 'start:08:40:00'],
    'frequency-based trips: the start time',
  );
  t.same(
    instanceNames([
      msg({ stop_time_update: [{ stop_id: 'A' }, { stop_id: 'Y' }] }),
      msg({ stop_time_update: [{ stop_id: 'B' }, { stop_id: 'Z' }] }),
    ]),
    ['to:Y', 'to:Z'],
    'the last stop before the first: it does not move as the train runs',
  );
  t.same(
    instanceNames([
      msg({ vehicle: { id: 'v1' }, stop_time_update: [{ stop_sequence: 4 }, { stop_sequence: 6 }] }),
      msg({
        vehicle: { id: 'v1' },
        stop_time_update: [{ stop_sequence: 4 }, { stop_sequence: 5 }, { stop_sequence: 6 }],
      }),
    ]),
    ['#1', '#2'],
    'nothing else differs: the order in the feed',
  );
});

class RecordingBus implements EventBus {
  events: DomainEvent[] = [];
  publish(event: DomainEvent): void {
    this.events.push(event);
  }
  subscribe() {
    return () => undefined;
  }
}

t.test('the live state keeps both trains and announces each', async (t) => {
  const bus = new RecordingBus();
  const state = new LiveState({ config: cfg, bus, now: () => NOW_S * 1000 });
  const rows = run([
    tu('1', [at('A03S', NOW_S + 60), at('A09S', NOW_S + 600)]),
    tu('2', [at('A07S', NOW_S + 30), at('A09S', NOW_S + 200)]),
  ]);
  const poll: FeedPoll = {
    feed_id: 'nyct',
    polled_ms: NOW_S * 1000,
    status: 'ok',
    http_status: 200,
    bytes: 1,
    duration_ms: 1,
    header_timestamp_ms: NOW_S * 1000,
    entities: 2,
    vehicles: 0,
    trip_updates: 2,
    alerts: 0,
    stored: 0,
    rejected: {},
    matching: null,
    error: null,
  };
  state.applyPoll(poll, rows);
  t.same(
    state.arrivals().map((a) => `${a.trip_instance} ${a.stop_id}`),
    ['from:A03S A03S', 'from:A03S A05S', 'from:A03S A07S', 'from:A03S A09S', 'from:A07S A07S', 'from:A07S A09S'],
  );
  const updates = bus.events
    .filter((e) => e.type === 'arrival.updated')
    .map((e) => e.data as { trip_id: string; trip_instance: string | null });
  t.same(
    updates.map((u) => [u.trip_id, u.trip_instance]),
    [
      ['A-0830-S', 'from:A03S'],
      ['A-0830-S', 'from:A07S'],
    ],
    'one arrival.updated per train, not one merged trip',
  );
  bus.events = [];
  state.applyPoll({ ...poll, polled_ms: poll.polled_ms + 1 }, rows);
  t.same(
    bus.events.filter((e) => e.type === 'arrival.updated'),
    [],
    'unchanged trains: no events',
  );
});
