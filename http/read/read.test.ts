import t from 'tap';
import { Db } from '../../store/db.ts';
import { FakeLive, makeAlert, makeArrival, makeFeed, makeVehicle } from '../../test/support/fake-live.ts';
import { Directory, readDirectory, StoreDirectory } from './directory.ts';
import { LiveIndex } from './live-index.ts';
import { ageFreshness, alertToApi, vehicleToApi, worse } from './represent.ts';
import { railSummaries, vehicleSummaries } from './summaries.ts';
import { logInto } from '../../test/support/logs.ts';
import { iso, isoOr } from '../../core/dates.ts';

const thresholds = { stale_after_s: 90, expired_after_s: 300 };

t.test('timestamps from feeds never throw', async (t) => {
  t.equal(iso(0), '1970-01-01T00:00:00.000Z');
  t.equal(iso(null), null);
  t.equal(iso(Number.NaN), null);
  t.equal(iso(1.7e18), null, 'a seconds field read as ms, times 1000 again');
  t.equal(isoOr(Number.POSITIVE_INFINITY, 1000), '1970-01-01T00:00:01.000Z');
  t.equal(isoOr(Number.NaN, Number.NaN), '1970-01-01T00:00:00.000Z');
  const v = vehicleToApi(
    makeVehicle({ vehicle_id: 'x', timestamp_ms: 5e17, observed_ms: 1_000_000 }),
    1_010_000,
    undefined,
    null,
    thresholds,
  );
  t.equal(v.timestamp, '1970-01-01T00:16:40.000Z', 'an absurd position time falls back to the poll time');
  t.equal(v.age_s, 10);
});

t.test('freshness', async (t) => {
  t.equal(ageFreshness(90, thresholds), 'fresh');
  t.equal(ageFreshness(91, thresholds), 'stale');
  t.equal(ageFreshness(301, thresholds), 'expired');
  t.equal(ageFreshness(Number.NaN, thresholds), 'expired');
  t.equal(worse('fresh', 'stale'), 'stale');
  t.equal(worse('expired', 'stale'), 'expired');
  const stale = vehicleToApi(makeVehicle({ vehicle_id: 'x', timestamp_ms: 0 }), 10_000, 'stale', 30.4, thresholds);
  t.equal(stale.freshness, 'stale', "the feed's state caps a fresh position");
  t.equal(stale.delay_s, 30);
});

t.test('alerts are memoized per object and source freshness', async (t) => {
  const a = makeAlert({ id: 'f:1', active_periods: [{ start_ms: null, end_ms: 0 }] });
  t.equal(alertToApi(a, 'fresh'), alertToApi(a, 'fresh'));
  t.same(alertToApi(a, 'fresh').active_periods, [{ start: null, end: '1970-01-01T00:00:00.000Z' }]);
  t.not(alertToApi({ ...a }, 'fresh'), alertToApi(a, 'fresh'));
  t.equal(alertToApi(a, 'expired').freshness, 'expired', 'an alert from an expired feed says so');
  t.equal(alertToApi(a, 'fresh').freshness, 'fresh');
});

t.test('summaries', async (t) => {
  const rows = [
    makeArrival({ trip_id: 'A', station_id: 's1', stop_sequence: 5, delay_s: 10, delay_state: 'on_time' }),
    makeArrival({ trip_id: 'A', station_id: 's2', stop_sequence: 2, delay_s: 20.6, delay_state: 'on_time' }),
    makeArrival({
      trip_id: 'B',
      station_id: 's1',
      stop_sequence: null,
      delay_s: null,
      delay_state: 'unknown',
      route_id: null,
    }),
  ];
  const s = railSummaries(rows, (id) => (id === 's1' ? 'One' : null));
  t.match(
    s.trains.find((x) => x.trip_id === 'A'),
    { next_station_id: 's2', delay_s: 21, arrivals: 2 },
  );
  t.same(
    s.lines.map((l) => l.line),
    [null, 'Red'],
  );
  t.match(
    s.lines.find((l) => l.line === 'Red'),
    { mean_delay_s: 15.3, max_delay_s: 21, trains: 1 },
  );
  t.match(
    s.lines.find((l) => l.line === null),
    { mean_delay_s: null, max_delay_s: null, delay_states: { unknown: 1 } },
  );
  t.same(
    s.stations.map((x) => [x.station_id, x.name, x.arrivals]),
    [
      ['s1', 'One', 2],
      ['s2', null, 1],
    ],
  );
  const none = vehicleSummaries([]);
  t.same(none, { routes: [], freshness: [] });
});

t.test('a trip id carried for two trains: one delay per train where the arrivals name the vehicle', async (t) => {
  const live = new FakeLive();
  live.arrivalList = [
    makeArrival({
      trip_id: 'T',
      station_id: 's1',
      feed_id: 'a',
      trip_instance: 'vehicle:v1',
      vehicle_id: 'v1',
      stop_sequence: null,
      delay_s: 30,
    }),
    makeArrival({
      trip_id: 'T',
      station_id: 's4',
      feed_id: 'a',
      trip_instance: 'vehicle:v2',
      vehicle_id: 'v2',
      stop_sequence: null,
      delay_s: 90,
    }),
  ];
  const delays = new LiveIndex(live).tripDelays();
  t.equal(delays.get('a\u0000T\u0000v1'), 30);
  t.equal(delays.get('a\u0000T\u0000v2'), 90);
  t.ok(delays.has('a\u0000T'), 'the trip alone still has one, for vehicles the arrivals do not name');
});

t.test('the live index is computed once per version', async (t) => {
  const live = new FakeLive();
  live.feedList = [
    makeFeed({ feed_id: 'b' }),
    makeFeed({ feed_id: 'a' }),
    makeFeed({ feed_id: 'never' }),
    makeFeed({ feed_id: 'j', kind: 'alerts-json' }),
  ];
  live.vehicleList = [
    makeVehicle({ vehicle_id: '2', feed_id: 'b', route_id: null }),
    makeVehicle({ vehicle_id: '1', feed_id: 'b' }),
  ];
  live.arrivalList = [
    makeArrival({ trip_id: 'T', station_id: 's', feed_id: 'a' }),
    makeArrival({ trip_id: 'T', station_id: 's0', stop_sequence: 0, delay_s: 5, feed_id: 'a' }),
  ];
  live.alertList = [makeAlert({ id: 'x:1', first_seen_ms: Number.NaN, modes: ['streetcar'], routes: ['E'] })];
  const index = new LiveIndex(live);
  const first = index.vehicles('bus');
  t.equal(index.vehicles('bus'), first, 'same array until the version changes');
  t.same(
    first.map((v) => v.vehicle_id),
    ['2', '1'],
    'route null sorts first',
  );
  t.same(
    index.sources('rail').map((f) => f.feed_id),
    ['a', 'never'],
  );
  t.same(
    index.sources('bus').map((f) => f.feed_id),
    ['b', 'never'],
  );
  t.equal(index.tripDelays().get('a\u0000T'), 5, 'delay at the earliest remaining stop');
  t.ok(index.routesSeen('streetcar').has('E'));
  t.ok(index.routesSeen('rail').has('Red'));
  t.equal(index.alerts().length, 1);
  live.change((l) => {
    l.vehicleList = [];
  });
  t.not(index.vehicles('bus'), first);
  t.same(
    index.sources('bus').map((f) => f.feed_id),
    ['b', 'never'],
    'a feed keeps its mode after its data is gone',
  );
});

t.test('the directory from the store', async (t) => {
  const db = await Db.open(':memory:');
  t.teardown(() => db.close());
  await db.run(`INSERT INTO gtfs_routes (schedule_id, route_id, route_short_name, route_long_name, route_type,
    route_color, mode) VALUES
    ('s1', 'Red', 'RL', 'Red Line', 1, 'DA291C', 'rail'), ('s1', '10', '10', NULL, 3, NULL, 'bus'), ('s1', '9', '9',
      NULL, 3, NULL, 'bus'),
    ('s2', '9', 'nine', NULL, 3, NULL, 'bus'), ('s1', 'F', 'F', NULL, 4, NULL, NULL), ('s1', 'E', 'E', 'E line', 0,
      NULL, 'streetcar')`);
  await db.run(`INSERT INTO gtfs_stops (schedule_id, stop_id, stop_name, location_type, parent_station) VALUES
    ('s1', 'place-a', 'Alpha', 1, NULL), ('s1', 'a1', 'Alpha platform', 0, 'place-a'), ('s1', 'b', 'Beta', 0, '')`);
  await db.run(`INSERT INTO gtfs_trips (schedule_id, trip_id, route_id, service_id) VALUES ('s1', 't1', 'Red', 'wk')`);
  await db.run(
    `INSERT INTO gtfs_stop_times (schedule_id, trip_id, stop_sequence, stop_id) VALUES ('s1', 't1', 2, 'b'), ` +
      `('s1', 't1', 1, 'a1')`,
  );
  const snapshot = await readDirectory(db);
  const dir = new Directory(snapshot);
  t.same(
    dir.routes('bus').map((r) => [r.route_id, r.schedule, r.short_name]),
    [
      ['9', 's1', '9'],
      ['10', 's1', '10'],
    ],
    'numeric order; first schedule wins',
  );
  t.equal(dir.route('rail', 'Red')?.color, 'DA291C');
  t.equal(dir.route('bus', 'Red'), undefined);
  t.same(
    dir.lineStations('Red'),
    [
      { station_id: 'place-a', name: 'Alpha' },
      { station_id: 'b', name: 'Beta' },
    ],
    'stations in running order, platforms folded into stations',
  );
  t.same(dir.lineStations('Nope'), []);
  t.equal(dir.stationName('a1'), 'Alpha platform');
  t.equal(dir.stationName('zzz'), null);
  t.same(dir.schedules, ['s1', 's2']);
  t.equal(dir.routes('rail').length, 1);

  const logged: string[] = [];
  const store = new StoreDirectory(
    db,
    logInto((m) => logged.push(m)),
  );
  await store.reload();
  t.equal(store.version, 1);
  store.start(10).start(10);
  const deadline = Date.now() + 5_000;
  while (store.version < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  t.ok(store.version >= 2, 'reloaded on its timer');
  await store.close();
  await store.close();
});

t.test('a failing reload keeps the previous directory', async (t) => {
  const db = await Db.open(':memory:');
  const logged: string[] = [];
  const store = new StoreDirectory(
    db,
    logInto((m) => logged.push(m)),
  );
  await store.reload();
  await db.close();
  store.start(10);
  const deadline = Date.now() + 5_000;
  while (logged.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  await store.close();
  t.match(logged[0], /directory reload failed/);
  t.equal(store.version, 1);
});
