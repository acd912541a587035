import t from 'tap';
import { ConfigSchema } from '../core/config.ts';
import type { HistoryBatch } from '../core/ports.ts';
import { newPoll, type Alert } from '../core/types.ts';
import { loadLatestAlerts } from './alerts-store.ts';
import { Db } from './db.ts';
import { createHistoryWriter } from './history-writer.ts';
import { captureLogs } from '../test/support/logs.ts';
import { pruneHistory, scheduleRetention } from './retention.ts';

const DAY = 86_400_000;
const NOW = Date.UTC(2025, 0, 31, 3, 17);
const retention = ConfigSchema.parse({}).retention_days; // 7 / 30 / 400 / 400 / 30 days

const alert = (id: string, version: number, updatedMs: number, status: Alert['status']): Alert => ({
  id,
  feed_id: 'f',
  entity_id: id,
  modes: ['bus'],
  status,
  impact: 'detour',
  cause: 'unknown_cause',
  severity: null,
  header: { en: id },
  description: {},
  url: {},
  active_periods: [],
  routes: [],
  stations: [],
  trips: [],
  version,
  first_seen_ms: updatedMs,
  updated_ms: updatedMs,
  resolved_ms: status === 'resolved' ? updatedMs : null,
});

/** One row per table at each age, in days before NOW. */
function batchAt(ageDays: number): HistoryBatch {
  const at = NOW - ageDays * DAY;
  return {
    vehicles: [
      {
        feed_id: 'f',
        vehicle_id: `v${ageDays}`,
        route_id: null,
        trip_id: null,
        mode: null,
        lat: 1,
        lon: 2,
        position_source: 'gps',
        bearing: null,
        speed_mps: null,
        stop_id: null,
        current_status: null,
        timestamp_ms: at,
        observed_ms: at,
      },
    ],
    arrivals: [
      {
        feed_id: 'f',
        trip_id: `t${ageDays}`,
        trip_instance: null,
        route_id: null,
        mode: null,
        station_id: 's',
        stop_id: 's',
        stop_sequence: null,
        direction_id: null,
        service_date: null,
        scheduled_ms: null,
        predicted_ms: null,
        delay_s: null,
        delay_state: 'unknown',
        trip_relationship: 'scheduled',
        in_schedule: true,
        vehicle_id: null,
        observed_ms: at,
      },
    ],
    trips: [
      {
        feed_id: 'f',
        service_date: '2024-01-01',
        trip_id: `t${ageDays}`,
        route_id: null,
        mode: null,
        relationship: 'scheduled',
        skipped_stops: 0,
        source: 'trip_update',
        in_schedule: true,
        observed_ms: at,
      },
    ],
    alertVersions: [],
    polls: [{ ...newPoll('f', at), http_status: 200, bytes: 1, duration_ms: 1 }],
    snapshot: {
      feed_id: 'f',
      body_sha256: `hash-${ageDays}`,
      header_timestamp_ms: at,
      observed_ms: at,
      source: 'poll',
    },
  };
}

async function counts(db: Db): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const table of [
    'vehicle_positions',
    'arrivals',
    'trip_observations',
    'alert_versions',
    'feed_polls',
    'feed_snapshots',
  ]) {
    const [row] = await db.all<{ n: bigint }>(`SELECT count(*) AS n FROM ${table}`);
    out[table] = Number(row!.n);
  }
  return out;
}

t.test('pruning deletes only rows past each window', async (t) => {
  const db = await Db.open(':memory:');
  t.teardown(() => db.close());
  const writer = createHistoryWriter(db);
  for (const age of [1, 6.9, 7.1, 29, 31, 399, 401]) await writer.write(batchAt(age));
  await writer.write({
    vehicles: [],
    arrivals: [],
    trips: [],
    polls: [],
    alertVersions: [
      // still open after 500 days: its newest version stays, older versions go
      alert('open', 1, NOW - 500 * DAY, 'active'),
      alert('open', 2, NOW - 450 * DAY, 'active'),
      // resolved long ago: gone
      alert('old', 1, NOW - 420 * DAY, 'active'),
      alert('old', 2, NOW - 410 * DAY, 'resolved'),
      // resolved recently: kept whole
      alert('recent', 1, NOW - 10 * DAY, 'active'),
      alert('recent', 2, NOW - 5 * DAY, 'resolved'),
    ],
  });
  t.same(await counts(db), {
    vehicle_positions: 7,
    arrivals: 7,
    trip_observations: 7,
    alert_versions: 6,
    feed_polls: 7,
    feed_snapshots: 7,
  });

  const deleted = await pruneHistory(db, retention, NOW);
  t.same(deleted, {
    vehicle_positions: 5,
    arrivals: 3,
    trip_observations: 1,
    alert_versions: 3,
    feed_polls: 3,
    stop_events: 0,
    feed_snapshots: 1,
  });
  const vehicles = await db.all<{ id: string }>(
    `SELECT vehicle_id AS id FROM vehicle_positions ORDER BY observed_at DESC`,
  );
  t.same(
    vehicles.map((v) => v.id),
    ['v1', 'v6.9'],
  );
  t.same(
    (await loadLatestAlerts(db)).map((a) => [a.id, a.version]),
    [
      ['open', 2],
      ['recent', 2],
    ],
  );
  t.same(
    await pruneHistory(db, retention, NOW),
    {
      vehicle_positions: 0,
      arrivals: 0,
      trip_observations: 0,
      alert_versions: 0,
      feed_polls: 0,
      stop_events: 0,
      feed_snapshots: 0,
    },
    'idempotent',
  );
});

t.test('tables that do not exist yet are skipped', async (t) => {
  const db = await Db.open(':memory:');
  t.teardown(() => db.close());
  const deleted = await pruneHistory(db, retention, NOW, [
    { key: 'usage', table: 'usage_events', column: 'at' },
    { key: 'feed_polls', table: 'feed_polls', column: 'polled_at' },
  ]);
  t.same(deleted, { feed_polls: 0 });
});

t.test('the cron job prunes on schedule, logs, and stops', async (t) => {
  const db = await Db.open(':memory:');
  t.teardown(() => db.close());
  await createHistoryWriter(db).write(batchAt(100));
  const logs = captureLogs();
  const lines = logs.lines;
  t.throws(
    () => scheduleRetention(db, { prune_cron: 'every day', retention_days: retention }, logs.logger),
    /prune_cron is not a valid cron expression: every day/,
  );

  // every second, so the test sees a run without waiting a day
  const job = scheduleRetention(db, { prune_cron: '* * * * * *', retention_days: retention }, logs.logger, () => NOW);
  t.teardown(() => job.stop());
  const started = Date.now();
  while (lines.length === 0 && Date.now() - started < 5_000) await new Promise((r) => setTimeout(r, 50));
  job.stop();
  t.match(lines[0], {
    component: 'retention',
    msg: 'pruned history past its retention',
    ms: Number,
    deleted: {
      vehicle_positions: 1,
      arrivals: 1,
      trip_observations: 0,
      alert_versions: 0,
      feed_polls: 1,
      feed_snapshots: 0,
    },
  });

  // a failing run is logged, and the job keeps its schedule
  await db.close();
  const failingLogs = captureLogs();
  const failing = failingLogs.lines;
  const job2 = scheduleRetention(db, { prune_cron: '* * * * * *', retention_days: retention }, failingLogs.logger);
  const started2 = Date.now();
  while (failing.length === 0 && Date.now() - started2 < 5_000) await new Promise((r) => setTimeout(r, 50));
  job2.stop();
  t.match(failing[0], { msg: 'pruning failed', err: { message: 'database is closed', stack: /./ } });
});
