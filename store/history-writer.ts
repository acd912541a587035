import { statSync } from 'node:fs';
import { DuckDBTimestampTZValue, type DuckDBConnection } from '@duckdb/node-api';
import type { HistoryBatch, HistoryWriter, SnapshotRecord } from '../core/ports.ts';
import type { Alert, Arrival, FeedPoll, TripObservation, VehiclePosition } from '../core/types.ts';
import { setImmediate as turn } from 'node:timers/promises';
import { appendColumnsInSlices, type ColumnDef } from './chunk-append.ts';
import type { Db } from './db.ts';

// One poll's rows into the history tables through the DuckDB appender, all tables of a batch
// in one transaction: a batch is stored whole or not at all.

type Texts = Record<string, string>;
const texts = (t: Texts): { language: string; text: string }[] =>
  Object.entries(t).map(([language, text]) => ({ language, text }));

export const VEHICLE_COLUMNS: readonly ColumnDef<VehiclePosition>[] = [
  { name: 'feed_id', kind: 'varchar', get: (r) => r.feed_id },
  { name: 'vehicle_id', kind: 'varchar', get: (r) => r.vehicle_id },
  { name: 'route_id', kind: 'varchar', get: (r) => r.route_id },
  { name: 'trip_id', kind: 'varchar', get: (r) => r.trip_id },
  { name: 'mode', kind: 'varchar', get: (r) => r.mode },
  { name: 'lat', kind: 'double', get: (r) => r.lat },
  { name: 'lon', kind: 'double', get: (r) => r.lon },
  { name: 'bearing', kind: 'double', get: (r) => r.bearing },
  { name: 'speed_mps', kind: 'double', get: (r) => r.speed_mps },
  { name: 'stop_id', kind: 'varchar', get: (r) => r.stop_id },
  { name: 'current_status', kind: 'varchar', get: (r) => r.current_status },
  { name: 'position_at', kind: 'timestamptz', get: (r) => r.timestamp_ms },
  { name: 'observed_at', kind: 'timestamptz', get: (r) => r.observed_ms },
  { name: 'position_source', kind: 'varchar', get: (r) => r.position_source },
  { name: 'feed_trip_id', kind: 'varchar', get: (r) => r.feed_trip_id ?? null },
];

export const ARRIVAL_COLUMNS: readonly ColumnDef<Arrival>[] = [
  { name: 'feed_id', kind: 'varchar', get: (r) => r.feed_id },
  { name: 'trip_id', kind: 'varchar', get: (r) => r.trip_id },
  { name: 'route_id', kind: 'varchar', get: (r) => r.route_id },
  { name: 'mode', kind: 'varchar', get: (r) => r.mode },
  { name: 'station_id', kind: 'varchar', get: (r) => r.station_id },
  { name: 'stop_id', kind: 'varchar', get: (r) => r.stop_id },
  { name: 'stop_sequence', kind: 'integer', get: (r) => r.stop_sequence },
  { name: 'direction_id', kind: 'integer', get: (r) => r.direction_id },
  { name: 'service_date', kind: 'date', get: (r) => r.service_date },
  { name: 'scheduled_at', kind: 'timestamptz', get: (r) => r.scheduled_ms },
  { name: 'predicted_at', kind: 'timestamptz', get: (r) => r.predicted_ms },
  { name: 'delay_s', kind: 'integer', get: (r) => r.delay_s },
  { name: 'delay_state', kind: 'varchar', get: (r) => r.delay_state },
  { name: 'trip_relationship', kind: 'varchar', get: (r) => r.trip_relationship },
  { name: 'in_schedule', kind: 'boolean', get: (r) => r.in_schedule },
  { name: 'vehicle_id', kind: 'varchar', get: (r) => r.vehicle_id },
  { name: 'observed_at', kind: 'timestamptz', get: (r) => r.observed_ms },
  { name: 'trip_instance', kind: 'varchar', get: (r) => r.trip_instance },
  { name: 'feed_trip_id', kind: 'varchar', get: (r) => r.feed_trip_id ?? null },
];

export const TRIP_COLUMNS: readonly ColumnDef<TripObservation>[] = [
  { name: 'feed_id', kind: 'varchar', get: (r) => r.feed_id },
  { name: 'service_date', kind: 'date', get: (r) => r.service_date },
  { name: 'trip_id', kind: 'varchar', get: (r) => r.trip_id },
  { name: 'route_id', kind: 'varchar', get: (r) => r.route_id },
  { name: 'mode', kind: 'varchar', get: (r) => r.mode },
  { name: 'relationship', kind: 'varchar', get: (r) => r.relationship },
  { name: 'skipped_stops', kind: 'integer', get: (r) => r.skipped_stops },
  { name: 'source', kind: 'varchar', get: (r) => r.source },
  { name: 'in_schedule', kind: 'boolean', get: (r) => r.in_schedule },
  { name: 'observed_at', kind: 'timestamptz', get: (r) => r.observed_ms },
  { name: 'feed_trip_id', kind: 'varchar', get: (r) => r.feed_trip_id ?? null },
];

export const ALERT_COLUMNS: readonly ColumnDef<Alert>[] = [
  { name: 'alert_id', kind: 'varchar', get: (r) => r.id },
  { name: 'feed_id', kind: 'varchar', get: (r) => r.feed_id },
  { name: 'entity_id', kind: 'varchar', get: (r) => r.entity_id },
  { name: 'version', kind: 'integer', get: (r) => r.version },
  { name: 'status', kind: 'varchar', get: (r) => r.status },
  { name: 'modes', kind: 'varchar_list', get: (r) => r.modes },
  { name: 'impact', kind: 'varchar', get: (r) => r.impact },
  { name: 'cause', kind: 'varchar', get: (r) => r.cause },
  { name: 'severity', kind: 'varchar', get: (r) => r.severity },
  { name: 'header', kind: 'struct_list', get: (r) => texts(r.header) },
  { name: 'description', kind: 'struct_list', get: (r) => texts(r.description) },
  { name: 'url', kind: 'struct_list', get: (r) => texts(r.url) },
  {
    name: 'active_periods',
    kind: 'struct_list',
    get: (r) => r.active_periods.map((p) => ({ start_at: toTimestamp(p.start_ms), end_at: toTimestamp(p.end_ms) })),
  },
  { name: 'routes', kind: 'varchar_list', get: (r) => r.routes },
  { name: 'stations', kind: 'varchar_list', get: (r) => r.stations },
  { name: 'trips', kind: 'varchar_list', get: (r) => r.trips },
  { name: 'first_seen_at', kind: 'timestamptz', get: (r) => r.first_seen_ms },
  { name: 'updated_at', kind: 'timestamptz', get: (r) => r.updated_ms },
  { name: 'resolved_at', kind: 'timestamptz', get: (r) => r.resolved_ms },
];

export const POLL_COLUMNS: readonly ColumnDef<FeedPoll>[] = [
  { name: 'feed_id', kind: 'varchar', get: (r) => r.feed_id },
  { name: 'polled_at', kind: 'timestamptz', get: (r) => r.polled_ms },
  { name: 'status', kind: 'varchar', get: (r) => r.status },
  { name: 'http_status', kind: 'integer', get: (r) => r.http_status },
  { name: 'bytes', kind: 'bigint', get: (r) => r.bytes },
  { name: 'duration_ms', kind: 'double', get: (r) => r.duration_ms },
  { name: 'header_timestamp', kind: 'timestamptz', get: (r) => r.header_timestamp_ms },
  { name: 'entities', kind: 'integer', get: (r) => r.entities },
  { name: 'vehicles', kind: 'integer', get: (r) => r.vehicles },
  { name: 'trip_updates', kind: 'integer', get: (r) => r.trip_updates },
  { name: 'alerts', kind: 'integer', get: (r) => r.alerts },
  { name: 'stored', kind: 'integer', get: (r) => r.stored },
  { name: 'rejected', kind: 'integer', get: (r) => Object.values(r.rejected).reduce((a, b) => a + (b ?? 0), 0) },
  {
    name: 'rejected_by_reason',
    kind: 'struct_list',
    get: (r) =>
      Object.entries(r.rejected)
        .filter(([, n]) => (n ?? 0) > 0)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([reason, count]) => ({ reason, count })),
  },
  { name: 'error', kind: 'varchar', get: (r) => r.error },
  { name: 'trips_matched', kind: 'integer', get: (r) => r.matching?.matched ?? null },
  { name: 'trips_unmatched', kind: 'integer', get: (r) => r.matching?.unmatched ?? null },
  { name: 'trips_ambiguous', kind: 'integer', get: (r) => r.matching?.ambiguous ?? null },
  { name: 'trips_previous_day', kind: 'integer', get: (r) => r.matching?.previous_day ?? null },
  {
    name: 'matching',
    kind: 'struct_list',
    get: (r) =>
      r.matching ? Object.entries(r.matching.strategies).map(([strategy, c]) => ({ strategy, ...c })) : null,
  },
  {
    name: 'findings',
    kind: 'struct_list',
    get: (r) =>
      r.findings ? Object.entries(r.findings).map(([rule, t]) => ({ rule, count: t.count, example: t.example })) : null,
  },
];

// fields inside a list of structs are not converted by kind, so their timestamps are built here
function toTimestamp(ms: number | null): DuckDBTimestampTZValue | null {
  return ms === null ? null : new DuckDBTimestampTZValue(BigInt(Math.round(ms * 1000)));
}

interface TablePlan<R> {
  table: string;
  columns: readonly ColumnDef<R>[];
  rows: (batch: HistoryBatch) => readonly R[];
  /** rows that come from the batch's snapshot, skipped when that snapshot is stored already */
  ofSnapshot?: boolean;
}

// erases the row type so plans of different tables fit one list; each plan stays consistent
function plan<R>(p: TablePlan<R>): TablePlan<unknown> {
  return p as unknown as TablePlan<unknown>;
}

const PLANS: readonly TablePlan<unknown>[] = [
  plan({ table: 'vehicle_positions', columns: VEHICLE_COLUMNS, rows: (b) => b.vehicles, ofSnapshot: true }),
  plan({ table: 'arrivals', columns: ARRIVAL_COLUMNS, rows: (b) => b.arrivals, ofSnapshot: true }),
  plan({ table: 'trip_observations', columns: TRIP_COLUMNS, rows: (b) => b.trips, ofSnapshot: true }),
  plan({ table: 'alert_versions', columns: ALERT_COLUMNS, rows: (b) => b.alertVersions }),
  plan({ table: 'feed_polls', columns: POLL_COLUMNS, rows: (b) => b.polls }),
];

/** Checks once that each table's columns are the ones the writer fills, in that order. */
async function checkSchema(db: Db): Promise<void> {
  const rows = await db.all<{ table_name: string; column_name: string }>(
    `SELECT table_name, column_name FROM information_schema.columns
     WHERE table_name IN (${PLANS.map((p) => `'${p.table}'`).join(', ')}) AND table_schema = 'main'
     ORDER BY table_name, ordinal_position`,
  );
  for (const plan of PLANS) {
    const actual = rows.filter((r) => r.table_name === plan.table).map((r) => r.column_name);
    const expected = plan.columns.map((c) => c.name);
    if (actual.join(',') !== expected.join(',')) {
      throw new Error(
        `history table ${plan.table} has columns (${actual.join(', ')}); the writer expects (${expected.join(', ')})`,
      );
    }
  }
}

const SNAPSHOT_KNOWN = 'SELECT 1 FROM feed_snapshots WHERE feed_id = $1 AND body_sha256 = $2';

/**
 * Records the snapshot unless it is there; false when it was (then its rows are stored already).
 * Inside the batch's transaction, so a snapshot is marked stored exactly when its rows are.
 */
async function recordSnapshot(conn: DuckDBConnection, s: SnapshotRecord): Promise<boolean> {
  const known = await conn.runAndReadAll(SNAPSHOT_KNOWN, [s.feed_id, s.body_sha256]);
  if (known.currentRowCount > 0) return false;
  await conn.run(
    `INSERT INTO feed_snapshots (feed_id, body_sha256, header_timestamp, observed_at, source)
     VALUES ($1, $2, to_timestamp($3::DOUBLE / 1000), to_timestamp($4::DOUBLE / 1000), $5)`,
    [s.feed_id, s.body_sha256, s.header_timestamp_ms, s.observed_ms, s.source],
  );
  return true;
}

/** One batch's rows inside the caller's transaction; the number of rows stored. */
async function storeBatch(conn: DuckDBConnection, batch: HistoryBatch): Promise<number> {
  const work = PLANS.map((plan) => ({ plan, rows: plan.rows(batch) })).filter((w) => w.rows.length > 0);
  const fresh = batch.snapshot ? await recordSnapshot(conn, batch.snapshot) : true;
  let stored = 0;
  for (const { plan, rows } of work) {
    if (plan.ofSnapshot && !fresh) continue;
    const appender = await conn.createAppender(plan.table);
    try {
      // a chunk at a time, each flushed into the transaction (inside the try, so constraint errors
      // surface here and roll the batch back), letting requests and streams through between them
      await appendColumnsInSlices(appender, plan.columns, rows, () => turn());
    } finally {
      try {
        appender.closeSync();
      } catch {
        // the flush error above is the one worth reporting
      }
    }
    stored += rows.length;
  }
  return stored;
}

const isEmpty = (batch: HistoryBatch): boolean =>
  !batch.snapshot && PLANS.every((plan) => plan.rows(batch).length === 0);

/**
 * WAL size past which the writer checkpoints once the history queue is idle: three quarters of
 * DuckDB's own threshold (checkpoint_threshold, 16 MiB), which would otherwise checkpoint inside
 * whichever poll's commit crosses it, and that commit takes 5–20× its usual time. Any earlier
 * costs more in all: each checkpoint rewrites the tables' last, partly filled row groups.
 */
export const IDLE_CHECKPOINT_WAL_BYTES = 12 * 2 ** 20;

function walBytes(db: Db): number {
  if (db.path === ':memory:') return 0;
  try {
    return statSync(`${db.path}.wal`).size;
  } catch {
    return 0; // no WAL: nothing since the last checkpoint
  }
}

export function createHistoryWriter(db: Db): HistoryWriter {
  let schemaChecked: Promise<void> | null = null;
  const checked = (): Promise<void> =>
    (schemaChecked ??= checkSchema(db).catch((err: unknown) => {
      schemaChecked = null;
      throw err;
    }));
  return {
    async hasSnapshot(key) {
      // asked on the poll's critical path: a connection of its own, so the answer never waits
      // behind the history queue's appends and commits on the shared one (MVCC reads committed rows)
      const conn = await db.connect();
      try {
        return (await conn.runAndReadAll(SNAPSHOT_KNOWN, [key.feed_id, key.body_sha256])).currentRowCount > 0;
      } finally {
        conn.closeSync();
      }
    },
    async write(batch) {
      await checked();
      if (isEmpty(batch)) return 0;
      return db.transaction((conn) => storeBatch(conn, batch));
    },
    async idle() {
      if (walBytes(db) < IDLE_CHECKPOINT_WAL_BYTES) return;
      // refused while another connection writes (an export, a finalize): DuckDB's own threshold
      // or the next idle moment checkpoints instead
      await db.run('CHECKPOINT').catch(() => undefined);
    },
  };
}
