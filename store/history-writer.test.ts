import t from 'tap';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HistoryBatch } from '../core/ports.ts';
import type { Alert, Arrival, FeedPoll, TripObservation, VehiclePosition } from '../core/types.ts';
import { loadLatestAlerts } from './alerts-store.ts';
import { Db } from './db.ts';
import { createHistoryWriter, IDLE_CHECKPOINT_WAL_BYTES } from './history-writer.ts';
import { lastPolls, recentPolls } from '../test/support/stored-history.ts';

const T0 = Date.UTC(2024, 4, 1, 12, 0, 0, 250);

const vehicle = (i: number, over: Partial<VehiclePosition> = {}): VehiclePosition => ({
  feed_id: 'f',
  vehicle_id: `v${i}`,
  route_id: `r${i % 3}`,
  trip_id: i % 2 ? `t${i}` : null,
  mode: 'bus',
  lat: 45 + i / 1000,
  lon: -73.5,
  position_source: 'gps',
  bearing: i % 2 ? 90.5 : null,
  speed_mps: 7.25,
  stop_id: null,
  current_status: 'STOPPED_AT',
  timestamp_ms: T0 + i,
  observed_ms: T0 + 1000 + i,
  ...over,
});

const arrival: Arrival = {
  feed_id: 'f',
  trip_id: 't1',
  feed_trip_id: '036050_1..N03R',
  trip_instance: null,
  route_id: 'RED',
  mode: 'rail',
  station_id: 'STA',
  stop_id: 'P1',
  stop_sequence: 3,
  direction_id: 1,
  service_date: '2024-05-01',
  scheduled_ms: T0,
  predicted_ms: T0 + 90_000,
  delay_s: 90,
  delay_state: 'late',
  trip_relationship: 'scheduled',
  in_schedule: true,
  vehicle_id: null,
  observed_ms: T0 + 5,
};

const trip: TripObservation = {
  feed_id: 'f',
  service_date: '2024-04-30',
  trip_id: 't9',
  route_id: null,
  mode: null,
  relationship: 'canceled',
  skipped_stops: 2,
  source: 'trip_update',
  in_schedule: false,
  observed_ms: T0,
};

const alert = (version: number, over: Partial<Alert> = {}): Alert => ({
  id: 'f:a1',
  feed_id: 'f',
  entity_id: 'a1',
  modes: ['rail', 'bus'],
  status: 'active',
  impact: 'detour',
  cause: 'construction',
  severity: null,
  header: { en: 'Detour on Main St', fr: 'Détour sur la rue Main — très long texte pour dépasser douze octets' },
  description: {},
  url: { en: 'https://example.org/a1' },
  active_periods: [
    { start_ms: T0, end_ms: null },
    { start_ms: null, end_ms: T0 + 3_600_000 },
  ],
  routes: ['RED'],
  stations: ['STA', 'STB'],
  trips: [],
  version,
  first_seen_ms: T0,
  updated_ms: T0 + version,
  resolved_ms: null,
  ...over,
});

const poll: FeedPoll = {
  feed_id: 'f',
  polled_ms: T0,
  status: 'ok',
  http_status: 200,
  bytes: 5_000_000_000,
  duration_ms: 12.5,
  header_timestamp_ms: T0 - 3000,
  entities: 10,
  vehicles: 4,
  trip_updates: 5,
  alerts: 1,
  stored: 9,
  rejected: { lat_lon_out_of_range: 1, missing_entity_id: 2 },
  matching: {
    trips: 5,
    matched: 3,
    unmatched: 1,
    ambiguous: 1,
    previous_day: 1,
    match_rate: 0.6,
    strategies: {
      exact: { matched: 2, unmatched: 3, ambiguous: 0 },
      start: { matched: 1, unmatched: 1, ambiguous: 1 },
    },
  },
  error: null,
  findings: { E022: { count: 2, example: 'tu-1' }, W008: { count: 1, example: null } },
};

const empty = (): HistoryBatch => ({ vehicles: [], arrivals: [], trips: [], alertVersions: [], polls: [] });

async function memoryDb(t: { teardown(fn: () => unknown): void }): Promise<Db> {
  const db = await Db.open(':memory:');
  t.teardown(() => db.close());
  return db;
}

t.test('every table round-trips', async (t) => {
  const db = await memoryDb(t);
  const writer = createHistoryWriter(db);
  t.equal(await writer.write(empty()), 0, 'an empty batch stores nothing');
  const stored = await writer.write({
    vehicles: [
      vehicle(1, { schedule_id: 'metro' }),
      vehicle(2, {
        stop_id: 'Ünïcödé stop',
        current_status: null,
        mode: null,
        route_id: null,
        position_source: 'stop',
      }),
    ],
    arrivals: [
      { ...arrival, schedule_id: 'metro' },
      {
        ...arrival,
        service_date: null,
        scheduled_ms: null,
        predicted_ms: null,
        delay_s: null,
        delay_state: 'unknown',
        stop_sequence: null,
        direction_id: null,
        route_id: null,
        mode: null,
        vehicle_id: 'bus 1',
        trip_instance: 'to:P9',
      },
    ],
    trips: [{ ...trip, schedule_id: null }],
    alertVersions: [alert(1)],
    polls: [
      poll,
      {
        ...poll,
        status: 'timeout',
        http_status: null,
        header_timestamp_ms: null,
        rejected: {},
        matching: null,
        error: 'timed out after 10 s',
        findings: undefined,
      },
    ],
  });
  t.equal(stored, 8);

  const vehicles = await db.json(`SELECT * FROM vehicle_positions ORDER BY vehicle_id`);
  t.same(vehicles, [
    {
      feed_id: 'f',
      vehicle_id: 'v1',
      route_id: 'r1',
      trip_id: 't1',
      mode: 'bus',
      lat: 45.001,
      lon: -73.5,
      bearing: 90.5,
      speed_mps: 7.25,
      stop_id: null,
      current_status: 'STOPPED_AT',
      position_at: '2024-05-01 12:00:00.251+00',
      observed_at: '2024-05-01 12:00:01.251+00',
      position_source: 'gps',
      feed_trip_id: null,
      schedule_id: 'metro',
    },
    {
      feed_id: 'f',
      vehicle_id: 'v2',
      route_id: null,
      trip_id: null,
      mode: null,
      lat: 45.002,
      lon: -73.5,
      bearing: null,
      speed_mps: 7.25,
      stop_id: 'Ünïcödé stop',
      current_status: null,
      position_at: '2024-05-01 12:00:00.252+00',
      observed_at: '2024-05-01 12:00:01.252+00',
      position_source: 'stop',
      feed_trip_id: null,
      schedule_id: null,
    },
  ]);

  const arrivals = await db.json(`SELECT * FROM arrivals ORDER BY delay_state`);
  t.same(arrivals[0], {
    feed_id: 'f',
    trip_id: 't1',
    route_id: 'RED',
    mode: 'rail',
    station_id: 'STA',
    stop_id: 'P1',
    stop_sequence: 3,
    direction_id: 1,
    service_date: '2024-05-01',
    scheduled_at: '2024-05-01 12:00:00.25+00',
    predicted_at: '2024-05-01 12:01:30.25+00',
    delay_s: 90,
    delay_state: 'late',
    trip_relationship: 'scheduled',
    in_schedule: true,
    vehicle_id: null,
    observed_at: '2024-05-01 12:00:00.255+00',
    trip_instance: null,
    feed_trip_id: '036050_1..N03R',
    schedule_id: 'metro',
  });
  t.match(arrivals[1], {
    service_date: null,
    scheduled_at: null,
    delay_s: null,
    stop_sequence: null,
    vehicle_id: 'bus 1',
    trip_instance: 'to:P9',
  });

  t.same(await db.json(`SELECT * FROM trip_observations`), [
    {
      feed_id: 'f',
      service_date: '2024-04-30',
      trip_id: 't9',
      route_id: null,
      mode: null,
      relationship: 'canceled',
      skipped_stops: 2,
      source: 'trip_update',
      in_schedule: false,
      observed_at: '2024-05-01 12:00:00.25+00',
      polls: 1,
      feed_trip_id: null,
      schedule_id: null,
    },
  ]);

  const [raw] = await db.json(`SELECT modes, header, description, url, active_periods, stations, trips, severity,
    resolved_at FROM alert_versions`);
  t.same(raw, {
    modes: ['rail', 'bus'],
    header: [
      { language: 'en', text: 'Detour on Main St' },
      { language: 'fr', text: 'Détour sur la rue Main — très long texte pour dépasser douze octets' },
    ],
    description: [],
    url: [{ language: 'en', text: 'https://example.org/a1' }],
    active_periods: [
      { start_at: '2024-05-01 12:00:00.25+00', end_at: null },
      { start_at: null, end_at: '2024-05-01 13:00:00.25+00' },
    ],
    stations: ['STA', 'STB'],
    trips: [],
    severity: null,
    resolved_at: null,
  });
  t.same(await loadLatestAlerts(db), [alert(1)], 'alerts map back to the core type');

  const polls = await db.json(`SELECT * FROM feed_polls ORDER BY status`);
  t.same(polls[0], {
    feed_id: 'f',
    polled_at: '2024-05-01 12:00:00.25+00',
    status: 'ok',
    http_status: 200,
    bytes: '5000000000',
    duration_ms: 12.5,
    header_timestamp: '2024-05-01 11:59:57.25+00',
    entities: 10,
    vehicles: 4,
    trip_updates: 5,
    alerts: 1,
    stored: 9,
    rejected: 3,
    rejected_by_reason: [
      { reason: 'lat_lon_out_of_range', count: 1 },
      { reason: 'missing_entity_id', count: 2 },
    ],
    error: null,
    trips_matched: 3,
    trips_unmatched: 1,
    trips_ambiguous: 1,
    trips_previous_day: 1,
    matching: [
      { strategy: 'exact', matched: 2, unmatched: 3, ambiguous: 0 },
      { strategy: 'start', matched: 1, unmatched: 1, ambiguous: 1 },
    ],
    findings: [
      { rule: 'E022', count: 2, example: 'tu-1' },
      { rule: 'W008', count: 1, example: null },
    ],
  });
  t.match(polls[1], {
    status: 'timeout',
    findings: null,
    http_status: null,
    rejected: 0,
    rejected_by_reason: [],
    error: 'timed out after 10 s',
    trips_matched: null,
    matching: null,
  });
  // a poll without a checked body reads back without findings
  const { findings: _, ...unchecked } = poll;
  const readBack = (await recentPolls(db, 'f', T0 - 1)).sort((a, b) => a.status.localeCompare(b.status));
  t.same(
    readBack,
    [
      poll,
      {
        ...unchecked,
        status: 'timeout',
        http_status: null,
        header_timestamp_ms: null,
        rejected: {},
        matching: null,
        error: 'timed out after 10 s',
      },
    ],
    'polls read back as written, trip matching with them',
  );
  t.same(await recentPolls(db, 'f', T0 + 1), []);
  t.same(await recentPolls(db, 'other', 0), []);
});

t.test('large batches span several chunks, strings long and short', async (t) => {
  const db = await memoryDb(t);
  const writer = createHistoryWriter(db);
  const rows = Array.from({ length: 5_000 }, (_, i) =>
    vehicle(i, {
      vehicle_id: i % 7 === 0 ? `a-much-longer-vehicle-identifier-${i}` : `v${i}`,
      stop_id: i % 5 === 0 ? null : `s${i % 50}`,
    }),
  );
  t.equal(await writer.write({ ...empty(), vehicles: rows }), 5_000);
  const [stats] = await db.all<Record<string, bigint | number | string>>(`SELECT count(*) AS n, count(stop_id) AS stops,
    count(DISTINCT vehicle_id) AS ids, sum(length(vehicle_id)) AS chars, min(epoch_ms(position_at)) AS first,
    max(epoch_ms(position_at)) AS last, count(*) FILTER (WHERE vehicle_id = 'v4999') AS v4999 FROM vehicle_positions`);
  const expectChars = rows.reduce((sum, r) => sum + r.vehicle_id.length, 0);
  t.same(stats, {
    n: 5000n,
    stops: 4000n,
    ids: 5000n,
    chars: BigInt(expectChars),
    first: BigInt(T0),
    last: BigInt(T0 + 4999),
    v4999: 1n,
  });
  const [longOne] = await db.all(
    `SELECT vehicle_id, stop_id FROM vehicle_positions WHERE vehicle_id LIKE 'a-much%' ORDER BY lat LIMIT 1`,
  );
  t.same(longOne, { vehicle_id: 'a-much-longer-vehicle-identifier-0', stop_id: null });
  const [grouped] = await db.all<{ n: bigint }>(`SELECT count(*) AS n FROM vehicle_positions WHERE stop_id = 's1'`);
  t.equal(grouped!.n, 100n, 'inline strings compare equal to SQL literals');
});

t.test('a batch is all or nothing', async (t) => {
  const db = await memoryDb(t);
  const writer = createHistoryWriter(db);
  // polls are appended last: vehicles and trips are already in the transaction when this fails
  const badPoll = { ...poll, status: null as unknown as FeedPoll['status'] };
  await t.rejects(
    writer.write({ ...empty(), vehicles: [vehicle(1)], trips: [trip], polls: [poll, badPoll] }),
    /NOT NULL/,
  );
  const badVehicle = { ...vehicle(3), vehicle_id: null as unknown as string };
  await t.rejects(writer.write({ ...empty(), vehicles: [vehicle(1), badVehicle] }), /NOT NULL/);
  await t.rejects(
    writer.write({ ...empty(), vehicles: [vehicle(1)], arrivals: [{ ...arrival, service_date: '2024-02-30' }] }),
    /service_date: "2024-02-30" is not a YYYY-MM-DD date/,
  );
  await t.rejects(
    writer.write({ ...empty(), vehicles: [{ ...vehicle(1), lat: '45' as unknown as number }] }),
    /lat: expected a number, got string/,
  );
  await t.rejects(
    writer.write({ ...empty(), vehicles: [{ ...vehicle(1), route_id: 7 as unknown as string }] }),
    /route_id: expected a string, got number/,
  );
  for (const table of ['vehicle_positions', 'arrivals', 'trip_observations', 'feed_polls']) {
    const [row] = await db.all<{ n: bigint }>(`SELECT count(*) AS n FROM ${table}`);
    t.equal(row!.n, 0n, `${table} untouched`);
  }
  t.equal(await writer.write({ ...empty(), vehicles: [vehicle(1)] }), 1, 'the writer still works after a failure');
});

t.test('a schema that drifted from the writer is reported, not written into', async (t) => {
  const db = await memoryDb(t);
  await db.run('ALTER TABLE feed_polls ADD COLUMN surprise INTEGER');
  const writer = createHistoryWriter(db);
  await t.rejects(
    writer.write({ ...empty(), vehicles: [vehicle(1)] }),
    /history table feed_polls has columns \(.*surprise\)/,
  );
  await db.run('ALTER TABLE feed_polls DROP COLUMN surprise');
  t.equal(await writer.write({ ...empty(), vehicles: [vehicle(1)] }), 1, 'checked again after a failure');
});

t.test('latest alert versions restore state after a restart', async (t) => {
  const db = await memoryDb(t);
  const writer = createHistoryWriter(db);
  const other = alert(1, { id: 'g:b', feed_id: 'g', entity_id: 'b', first_seen_ms: T0 + 10, header: { en: 'B' } });
  await writer.write({ ...empty(), alertVersions: [alert(1), other] });
  await writer.write({ ...empty(), alertVersions: [alert(2, { impact: 'no_service', stations: ['STA'] })] });
  const resolved = alert(3, { status: 'resolved', resolved_ms: T0 + 50_000, updated_ms: T0 + 50_000 });
  await writer.write({ ...empty(), alertVersions: [resolved] });

  const latest = await loadLatestAlerts(db);
  t.same(
    latest.map((a) => [a.id, a.version, a.status]),
    [
      ['f:a1', 3, 'resolved'],
      ['g:b', 1, 'active'],
    ],
  );
  t.same(latest[0], resolved);
  t.same(
    (await loadLatestAlerts(db, { resolvedSinceMs: T0 + 60_000 })).map((a) => a.id),
    ['g:b'],
  );
  t.same(
    (await loadLatestAlerts(db, { resolvedSinceMs: T0 })).map((a) => a.id),
    ['f:a1', 'g:b'],
  );
  t.same(
    (await loadLatestAlerts(db, { feedId: 'g' })).map((a) => a.id),
    ['g:b'],
  );
  t.same(
    (
      await db.all<{ version: number; impact: string }>(
        "SELECT version, impact FROM alert_versions WHERE alert_id = 'f:a1' ORDER BY version, updated_at",
      )
    ).map((a) => [a.version, a.impact]),
    [
      [1, 'detour'],
      [2, 'no_service'],
      [3, 'detour'],
    ],
  );
});

t.test('lastPolls gives the newest poll per feed', async (t) => {
  const db = await memoryDb(t);
  const writer = createHistoryWriter(db);
  await writer.write({
    ...empty(),
    polls: [poll, { ...poll, polled_ms: T0 + 15_000, status: 'unchanged' }, { ...poll, feed_id: 'g' }],
  });
  const last = await lastPolls(db);
  t.equal(last.get('f')?.status, 'unchanged');
  t.equal(last.get('f')?.polled_ms, T0 + 15_000);
  t.equal(last.get('g')?.status, 'ok');
  t.same(
    (await recentPolls(db, 'f', 0, 1)).map((p) => p.status),
    ['unchanged'],
    'limit keeps the newest',
  );
});

t.test('a snapshot is recorded with its rows, and its rows are never appended twice', async (t) => {
  const db = await memoryDb(t);
  const writer = createHistoryWriter(db);
  const snapshot = {
    feed_id: 'f',
    body_sha256: 'ab'.repeat(32),
    header_timestamp_ms: T0 - 3000,
    observed_ms: T0,
    source: 'poll' as const,
  };
  const batch = (): HistoryBatch => ({
    ...empty(),
    vehicles: [vehicle(1)],
    arrivals: [arrival],
    trips: [trip],
    polls: [poll],
    snapshot,
  });
  t.equal(await writer.hasSnapshot(snapshot), false);
  t.equal(await writer.write(batch()), 4);
  t.equal(await writer.hasSnapshot(snapshot), true);
  t.equal(await writer.hasSnapshot({ feed_id: 'g', body_sha256: snapshot.body_sha256 }), false, 'per feed');
  t.equal(
    await writer.write({ ...batch(), alertVersions: [alert(1)] }),
    2,
    'the same snapshot again: its poll and alert versions only',
  );
  const count = async (table: string) =>
    Number((await db.all<{ n: bigint }>(`SELECT count(*) AS n FROM ${table}`))[0]!.n);
  t.same(
    [
      await count('vehicle_positions'),
      await count('arrivals'),
      await count('trip_observations'),
      await count('feed_polls'),
    ],
    [1, 1, 1, 2],
  );
  t.same(await db.json('SELECT feed_id, header_timestamp, observed_at, source FROM feed_snapshots'), [
    {
      feed_id: 'f',
      header_timestamp: '2024-05-01 11:59:57.25+00',
      observed_at: '2024-05-01 12:00:00.25+00',
      source: 'poll',
    },
  ]);
});

t.test(
  "idle(): a checkpoint once the WAL has grown to most of DuckDB's own threshold, folding it into the file",
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'history-idle-'));
    const db = await Db.open(join(dir, 'h.duckdb'));
    t.teardown(async () => {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    });
    const writer = createHistoryWriter(db);
    const walBytes = () => (existsSync(join(dir, 'h.duckdb.wal')) ? statSync(join(dir, 'h.duckdb.wal')).size : 0);
    await writer.write({ ...empty(), vehicles: [vehicle(1)] });
    await writer.idle!();
    t.ok(walBytes() > 0, 'a few rows: the WAL is left alone');
    const many = Array.from({ length: 20_000 }, (_, i) =>
      vehicle(i, { stop_id: `a stop id long enough to be stored apart ${i}` }),
    );
    // each poll moves every vehicle on: unchanged vehicles would not be stored again
    for (let poll = 1; walBytes() < IDLE_CHECKPOINT_WAL_BYTES; poll++) {
      const moved = many.map((v) => ({ ...v, timestamp_ms: v.timestamp_ms + poll, observed_ms: v.observed_ms + poll }));
      await writer.write({ ...empty(), vehicles: moved });
    }
    await writer.idle!();
    t.equal(walBytes(), 0, 'checkpointed');
  },
);

t.test('change-only: an unchanged poll stores nothing; what is held is written when the file closes', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'history-held-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'h.duckdb');
  const db = await Db.open(path);
  const writer = createHistoryWriter(db);
  const at = (k: number): HistoryBatch => ({
    ...empty(),
    vehicles: [vehicle(1, { observed_ms: T0 + k * 10_000 })],
    arrivals: [{ ...arrival, predicted_ms: arrival.predicted_ms! + k * 1000, observed_ms: T0 + k * 10_000 }],
    trips: [{ ...trip, observed_ms: T0 + k * 10_000 }],
  });
  t.equal(await writer.write(at(0)), 3, 'the first poll: every row');
  t.equal(await writer.write(at(1)), 0, 'the same vehicle report, a prediction 1 s later, the same trip: nothing');
  t.equal(await writer.write(at(2)), 0);
  t.same(writer.held(), { trips: 1, stops: 1, vehicles: 1, held: 2 });
  await db.close();
  const again = await Db.open(path);
  t.teardown(() => again.close());
  t.same(
    await again.json(`SELECT CAST(observed_at AS VARCHAR) AS at, polls FROM trip_observations ORDER BY observed_at`),
    [
      { at: '2024-05-01 12:00:00.25+00', polls: 1 },
      { at: '2024-05-01 12:00:20.25+00', polls: 2 },
    ],
    "the trip's last poll, standing for the two polls since its first",
  );
  t.same(
    await again.json(
      `SELECT CAST(observed_at AS VARCHAR) AS at, CAST(predicted_at AS VARCHAR) AS p FROM arrivals ` +
        `ORDER BY observed_at`,
    ),
    [
      { at: '2024-05-01 12:00:00.25+00', p: '2024-05-01 12:01:30.25+00' },
      { at: '2024-05-01 12:00:20.25+00', p: '2024-05-01 12:01:32.25+00' },
    ],
    'the first prediction, and the last one seen',
  );
  const [n] = await again.all<{ n: bigint }>('SELECT count(*) AS n FROM vehicle_positions');
  t.equal(Number(n!.n), 1, 'a vehicle that did not move: one row');
});

t.test('migration 016: trip observations stored before it stand for one poll each', async (t) => {
  const db = await memoryDb(t);
  // a file as it was at 015: no polls column, one row per poll
  await db.run('ALTER TABLE trip_observations DROP COLUMN polls');
  await db.run('DELETE FROM schema_migrations WHERE version = 16');
  await db.run(`INSERT INTO trip_observations (feed_id, service_date, trip_id, route_id, mode, relationship,
    skipped_stops, source, in_schedule, observed_at) VALUES ('f', DATE '2024-05-01', 't1', 'R', 'bus', 'scheduled', 0,
    'trip_update', true, TIMESTAMPTZ '2024-05-01 12:00:00+00'), ('f', DATE '2024-05-01', 't1', 'R', 'bus',
      'scheduled', 0,
    'trip_update', true, TIMESTAMPTZ '2024-05-01 12:00:30+00')`);
  t.same(await db.migrate(), ['016_change_only_history.sql']);
  t.same(await db.json('SELECT polls FROM trip_observations'), [{ polls: 1 }, { polls: 1 }]);
  await t.rejects(
    db.run(`INSERT INTO trip_observations (feed_id, service_date, trip_id, relationship, skipped_stops, source,
      in_schedule, observed_at, polls) VALUES ('f', DATE '2024-05-01', 't2', 'scheduled', 0, 'trip_update', true,
        now(), NULL)`),
    /NOT NULL/,
    'polls is required from then on',
  );
});
