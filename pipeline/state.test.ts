import t from 'tap';
import type { DomainEvent, EventBus } from '../core/events.ts';
import type { Arrival, FeedPoll, TripObservation, VehiclePosition } from '../core/types.ts';
import type { NormalizedPoll } from './normalize-feed.ts';
import { LiveState } from './state.ts';
import { testConfig } from '../test/support/pipeline-fakes.ts';

class RecordingBus implements EventBus {
  events: DomainEvent[] = [];
  publish(event: DomainEvent): void {
    this.events.push(event);
  }
  subscribe() {
    return () => undefined;
  }
  take(): DomainEvent[] {
    const out = this.events;
    this.events = [];
    return out;
  }
}

const config = testConfig({
  feeds: [
    { id: 'vp', kind: 'gtfs-rt', url: 'http://x/vp' },
    { id: 'tu', kind: 'gtfs-rt', url: 'http://x/tu' },
  ],
  freshness: { stale_after_s: 60, expired_after_s: 300, max_future_s: 30, max_age_days: 365 },
});

const poll = (feedId: string, at: number, status: FeedPoll['status'] = 'ok'): FeedPoll => ({
  feed_id: feedId,
  polled_ms: at,
  status,
  http_status: 200,
  bytes: 1,
  duration_ms: 1,
  header_timestamp_ms: at,
  entities: 1,
  vehicles: 0,
  trip_updates: 0,
  alerts: 0,
  stored: 0,
  rejected: status === 'ok' ? {} : { timeout: 1 },
  matching: null,
  error: null,
});
const rows = (header: number | null, extra: Partial<NormalizedPoll> = {}): NormalizedPoll => ({
  header_timestamp_ms: header,
  entities: 1,
  vehicle_entities: 0,
  trip_update_entities: 0,
  alert_entities: 0,
  vehicles: [],
  arrivals: [],
  trips: [],
  alerts: [],
  rejected: {},
  matching: null,
  ...extra,
});
const vehicle = (id: string, lat: number, at: number): VehiclePosition => ({
  feed_id: 'vp',
  vehicle_id: id,
  route_id: '66',
  trip_id: null,
  mode: 'bus',
  lat,
  lon: 1,
  position_source: 'gps',
  bearing: null,
  speed_mps: null,
  stop_id: null,
  current_status: null,
  timestamp_ms: at,
  observed_ms: at,
});

t.test('freshness flips fresh → stale → expired and back, with events', async (t) => {
  let clock = 1_000_000;
  const bus = new RecordingBus();
  const state = new LiveState({ config, bus, now: () => clock });
  t.equal(state.feeds()[0]!.freshness, 'expired', 'never polled');

  state.applyPoll(poll('vp', clock), rows(clock, { vehicles: [vehicle('v1', 1, clock)] }));
  t.equal(state.feed('vp')!.freshness, 'fresh');
  t.same(
    bus.take().map((e) => e.type),
    ['vehicle.position'],
    'the first verdict is a baseline, not a recovery',
  );

  clock += 61_000;
  state.tick();
  t.equal(state.feed('vp')!.freshness, 'stale');
  clock += 240_000;
  state.tick();
  t.equal(state.feed('vp')!.freshness, 'expired');
  state.tick();
  const degraded = bus.take();
  t.same(
    degraded.map((e) => [e.type, (e.data as { freshness: string }).freshness]),
    [
      ['feed.stale', 'stale'],
      ['feed.stale', 'expired'],
    ],
  );
  t.same(degraded[0]!.modes, ['bus'], 'modes of what the feed carries');
  t.same(degraded[0]!.routes, ['66']);

  state.applyPoll(poll('vp', clock, 'timeout'));
  t.equal(state.feed('vp')!.freshness, 'expired', 'a failed poll does not refresh');
  state.applyPoll(poll('vp', clock), rows(clock, { vehicles: [vehicle('v1', 1, clock - 301_000)] }));
  const recovered = bus.take();
  t.same(
    recovered.map((e) => e.type),
    ['feed.recovered'],
    'same vehicle position: no vehicle event',
  );
  t.match(state.feed('vp'), { freshness: 'fresh', polls: 3, failures: 1, rejected: 1, last_status: 'ok' });
});

t.test('a header timestamp far in the future cannot keep a feed fresh', async (t) => {
  let clock = 5_000_000;
  const bus = new RecordingBus();
  const state = new LiveState({ config, bus, now: () => clock });
  state.applyPoll(poll('vp', clock), rows(clock + 10 * 365 * 86_400_000));
  t.equal(state.feed('vp')!.freshness, 'fresh', 'counted from when the body changed');
  clock += 400_000;
  state.tick();
  t.equal(state.feed('vp')!.freshness, 'expired');
  t.same(
    bus.take().map((e) => e.type),
    ['feed.stale'],
  );
});

t.test('vehicles and arrivals are replaced per feed per poll; events only for changes', async (t) => {
  const bus = new RecordingBus();
  const state = new LiveState({ config, bus, now: () => 10 });
  const arrival = (trip: string, predicted: number): Arrival => ({
    feed_id: 'tu',
    trip_id: trip,
    trip_instance: null,
    route_id: 'Red',
    mode: 'rail',
    station_id: 's',
    stop_id: 's1',
    stop_sequence: 1,
    direction_id: 0,
    service_date: '2024-01-01',
    scheduled_ms: 0,
    predicted_ms: predicted,
    delay_s: 0,
    delay_state: 'on_time',
    trip_relationship: 'scheduled',
    in_schedule: true,
    vehicle_id: null,
    observed_ms: 10,
  });
  const v0 = state.version;
  state.applyPoll(poll('vp', 10), rows(10, { vehicles: [vehicle('a', 1, 10), vehicle('b', 2, 10)] }));
  state.applyPoll(poll('tu', 10), rows(10, { arrivals: [arrival('t1', 100), arrival('t2', 200)] }));
  t.ok(state.version > v0);
  t.equal(state.vehicles('bus').length, 2);
  t.equal(state.vehicles('rail').length, 0);
  t.equal(state.arrivals().length, 2);
  bus.take();

  state.applyPoll(poll('vp', 20), rows(20, { vehicles: [vehicle('a', 1, 10), vehicle('c', 3, 20)] }));
  state.applyPoll(poll('tu', 20), rows(20, { arrivals: [arrival('t1', 100), arrival('t2', 260)] }));
  t.same(
    state.vehicles('bus').map((v) => v.vehicle_id),
    ['a', 'c'],
    'b left the feed',
  );
  const events = bus.take();
  t.same(
    events.map((e) => [
      e.type,
      (e.data as { vehicle_id?: string; trip_id?: string }).vehicle_id ?? (e.data as { trip_id: string }).trip_id,
    ]),
    [
      ['vehicle.position', 'c'],
      ['arrival.updated', 't2'],
    ],
  );
  t.same([events[1]!.routes, events[1]!.lines], [[], ['Red']], "a rail trip's line is in `lines`");

  const before = state.arrivals();
  state.applyPoll(poll('tu', 30, 'http_error'));
  t.equal(state.arrivals().length, 2, 'a failed poll keeps the last arrivals');
  t.equal(state.arrivals(), before, 'a failed poll leaves the arrivals alone: the same list, not rebuilt');
});

t.test('each slice has its own version, moved only by a change of its content', async (t) => {
  const bus = new RecordingBus();
  const feeds = testConfig({
    feeds: [
      { id: 'vp', kind: 'gtfs-rt', url: 'http://x/vp' },
      { id: 'tu', kind: 'gtfs-rt', url: 'http://x/tu' },
      { id: 'al', kind: 'gtfs-rt', url: 'http://x/al' },
    ],
    freshness: { stale_after_s: 60, expired_after_s: 300, max_future_s: 30, max_age_days: 365 },
  });
  const state = new LiveState({ config: feeds, bus, now: () => 10 });
  const content = {
    id: 'al:1',
    feed_id: 'al',
    entity_id: '1',
    modes: ['bus' as const],
    impact: 'detour',
    cause: 'unknown_cause',
    severity: null,
    header: { en: 'x' },
    description: {},
    url: {},
    active_periods: [],
    routes: ['66'],
    stations: [],
    trips: [],
  };
  state.applyPoll(poll('al', 10), rows(10, { alerts: [content] }));
  state.applyPoll(poll('vp', 10), rows(10, { vehicles: [vehicle('a', 1, 10)] }));
  const versions = () => ({
    alerts: state.sliceVersion('alerts'),
    bus: state.sliceVersion('vehicles:bus'),
    rail: state.sliceVersion('vehicles:rail'),
    arrivals: state.sliceVersion('arrivals'),
    feeds: state.sliceVersion('feeds'),
    freshness: state.sliceVersion('freshness'),
    al: state.feedVersion('al'),
    vp: state.feedVersion('vp'),
    any: state.version,
  });
  const alerts = state.alerts();
  const v0 = versions();

  state.applyPoll(poll('vp', 20, 'unchanged'));
  const v1 = versions();
  t.same({ ...v1, feeds: v0.feeds, vp: v0.vp, any: v0.any }, v0, "an unchanged poll moves only its feed's health");
  t.ok(v1.vp > v0.vp && v1.feeds > v0.feeds && v1.any > v0.any);
  t.equal(state.alerts(), alerts, 'the alert list is not rebuilt');

  state.applyPoll(poll('vp', 30), rows(30, { vehicles: [vehicle('a', 2, 30)] }));
  const v2 = versions();
  t.ok(v2.bus > v1.bus, 'new positions move the bus vehicles');
  t.same(
    [v2.alerts, v2.rail, v2.arrivals, v2.al, v2.freshness],
    [v1.alerts, v1.rail, v1.arrivals, v1.al, v1.freshness],
    'and nothing else',
  );

  state.applyPoll(poll('al', 40), rows(40, { alerts: [content] }));
  const v3 = versions();
  t.equal(v3.alerts, v2.alerts, 'the same alerts again: the alerts slice stays');
  t.ok(v3.al > v2.al, "its feed's health moved (last poll)");
  t.equal(state.alerts(), alerts);

  state.applyPoll(poll('al', 50), rows(50, { alerts: [{ ...content, header: { en: 'y' } }] }));
  t.ok(state.sliceVersion('alerts') > v3.alerts, 'changed content moves the alerts slice');
  t.not(state.alerts(), alerts, 'and rebuilds the list');
});

t.test('trip.canceled is announced once per trip per service date', async (t) => {
  const bus = new RecordingBus();
  const state = new LiveState({ config, bus, now: () => Date.parse('2024-01-02T12:00:00Z') });
  const obs = (date: string): TripObservation => ({
    feed_id: 'tu',
    service_date: date,
    trip_id: 'T9',
    route_id: 'Red',
    mode: 'rail',
    relationship: 'canceled',
    skipped_stops: 0,
    source: 'trip_update',
    in_schedule: true,
    observed_ms: 0,
  });
  state.applyPoll(poll('tu', 1), rows(1, { trips: [obs('2024-01-02')] }));
  state.applyPoll(poll('tu', 2), rows(2, { trips: [obs('2024-01-02')] }));
  state.applyPoll(poll('tu', 3), rows(3, { trips: [obs('2024-01-03')] }));
  const canceled = bus.take().filter((e) => e.type === 'trip.canceled');
  t.equal(canceled.length, 2);
  t.same(canceled[0]!.modes, ['rail']);
});

t.test('alerts are restored, versioned, resolved, and published with their scope', async (t) => {
  const bus = new RecordingBus();
  const state = new LiveState({ config, bus, now: () => 100 });
  const content = {
    id: 'tu:1',
    feed_id: 'tu',
    entity_id: '1',
    modes: ['rail' as const],
    impact: 'detour',
    cause: 'unknown_cause',
    severity: null,
    header: { en: 'x' },
    description: {},
    url: {},
    active_periods: [],
    routes: ['Red'],
    stations: [],
    trips: [],
  };
  const created = state.applyPoll(poll('tu', 100), rows(100, { alerts: [content] }));
  t.same(
    created.map((a) => [a.id, a.version]),
    [['tu:1', 1]],
  );
  const resolved = state.applyPoll(poll('tu', 200), rows(200, { alerts: [] }));
  t.same(
    resolved.map((a) => a.status),
    ['resolved'],
  );
  // a rail alert's line is a line in the envelope, as REST and the filters name it (issue 15)
  t.same(
    bus.take().map((e) => [e.type, e.routes, e.lines]),
    [
      ['alert.created', [], ['Red']],
      ['alert.resolved', [], ['Red']],
    ],
  );
  t.equal(state.alerts().length, 1, 'resolved alerts stay readable for a while');

  const restored = new LiveState({ config, bus, now: () => 300, initialAlerts: [{ ...created[0]!, version: 4 }] });
  t.equal(restored.alerts()[0]!.version, 4);
  t.same(restored.applyPoll(poll('tu', 300), rows(300, { alerts: [content] })), [], 'unchanged after restart');
});

t.test('arrival.updated carries only what changed in a trip; an unchanged trip sends nothing', async (t) => {
  const bus = new RecordingBus();
  const state = new LiveState({ config, bus, now: () => 10 });
  const stop = (trip: string, seq: number, predicted: number, observed: number): Arrival => ({
    feed_id: 'tu',
    trip_id: trip,
    trip_instance: null,
    route_id: 'Red',
    mode: 'rail',
    station_id: `s${seq}`,
    stop_id: `s${seq}`,
    stop_sequence: seq,
    direction_id: 0,
    service_date: '2024-01-01',
    scheduled_ms: seq * 1000,
    predicted_ms: predicted,
    delay_s: 0,
    delay_state: 'on_time',
    trip_relationship: 'scheduled',
    in_schedule: true,
    vehicle_id: 'v1',
    observed_ms: observed,
  });
  const trip = (id: string, observed: number, predicted: (seq: number) => number, seqs = [1, 2, 3, 4, 5]) =>
    seqs.map((seq) => stop(id, seq, predicted(seq), observed));
  const updates = () => bus.take().flatMap((e) => (e.type === 'arrival.updated' ? [e.data] : []));

  state.applyPoll(
    poll('tu', 10),
    rows(10, { arrivals: [...trip('A', 10, (s) => s * 1000), ...trip('B', 10, (s) => s * 1000)] }),
  );
  const first = updates();
  t.same(
    first.map((d) => [d.trip_id, d.partial, d.arrivals.length, d.removed_stops.length]),
    [
      ['A', false, 5, 0],
      ['B', false, 5, 0],
    ],
    'a trip seen for the first time sends every row',
  );

  // the next poll: same predictions (only observed_ms moved) for A; B's stop 4 moved by a minute
  state.applyPoll(
    poll('tu', 20),
    rows(20, {
      arrivals: [...trip('A', 20, (s) => s * 1000), ...trip('B', 20, (s) => (s === 4 ? s * 1000 + 60_000 : s * 1000))],
    }),
  );
  const second = updates();
  t.same(
    second.map((d) => d.trip_id),
    ['B'],
    'the unchanged trip sends nothing',
  );
  t.equal(second[0]!.partial, true);
  t.equal(second[0]!.stop_count, 5);
  t.same(
    second[0]!.arrivals.map((a) => [a.stop_sequence, a.predicted_at]),
    [[4, new Date(64_000).toISOString()]],
    'only the stop that moved',
  );
  t.same(second[0]!.removed_stops, []);
  t.equal(state.arrivals().length, 10, 'the live state still holds every row (REST reads it whole)');

  // B passed stop 1 (no longer in the feed) and nothing else changed
  state.applyPoll(
    poll('tu', 30),
    rows(30, {
      arrivals: [
        ...trip('A', 30, (s) => s * 1000),
        ...trip('B', 30, (s) => (s === 4 ? s * 1000 + 60_000 : s * 1000), [2, 3, 4, 5]),
      ],
    }),
  );
  const third = updates();
  t.same(
    third.map((d) => [d.trip_id, d.partial, d.stop_count, d.arrivals.length, d.removed_stops]),
    [['B', true, 4, 0, [{ stop_id: 's1', stop_sequence: 1 }]]],
    'a stop no longer predicted is named, not re-sent with the rest',
  );

  // a delay that shifts the whole trip sends the whole trip, marked complete
  state.applyPoll(
    poll('tu', 40),
    rows(40, {
      arrivals: [
        ...trip('A', 40, (s) => s * 1000 + 30_000),
        ...trip('B', 40, (s) => (s === 4 ? s * 1000 + 60_000 : s * 1000), [2, 3, 4, 5]),
      ],
    }),
  );
  const fourth = updates();
  t.same(
    fourth.map((d) => [d.trip_id, d.partial, d.arrivals.length]),
    [['A', false, 5]],
  );
  const bytes = (list: ReturnType<typeof updates>) => list.reduce((n, d) => n + JSON.stringify(d).length, 0);
  t.ok(
    bytes(second) * 3 < bytes(first) / 2,
    `a one-stop change (${bytes(second)} B) is a fraction of the trip (${bytes(first) / 2} B)`,
  );
});

t.test("a feed's health adds up the stop events of its polls, each copy keeping what it said", async (t) => {
  const state = new LiveState({ config, bus: new RecordingBus(), now: () => 1_000_000 });
  t.equal(state.feed('vp')?.stop_events, undefined, 'none before a poll that follows trips');
  state.applyPoll(
    { ...poll('vp', 1_000), stop_events: { written: 3, anomalies: { vehicle_backwards: 1 } } },
    rows(1_000),
  );
  const before = state.feed('vp')!;
  state.applyPoll(
    { ...poll('vp', 2_000), stop_events: { written: 2, anomalies: { vehicle_backwards: 1, trip_vanished: 1 } } },
    rows(2_000),
  );
  t.same(state.feed('vp')?.stop_events, { written: 5, anomalies: { vehicle_backwards: 2, trip_vanished: 1 } });
  t.same(before.stop_events, { written: 3, anomalies: { vehicle_backwards: 1 } });
  t.equal(state.feed('tu')?.stop_events, undefined, 'per feed');
});
