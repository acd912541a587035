import { statSync } from 'node:fs';
import type { DuckDBConnection, DuckDBTimestampTZValue } from '@duckdb/node-api';
import type { HistoryBatch, HistoryWriter, SnapshotRecord } from '../core/ports.ts';
import type { Alert, Arrival, FeedPoll, StopEvent, VehiclePosition } from '../core/types.ts';
import { setImmediate as turn } from 'node:timers/promises';
import { appendColumnsInSlices, type ColumnDef } from './chunk-append.ts';
import type { Db } from './db.ts';
import { ChangeOnlyHistory, type HeldFilter, type Selection, type StoredTripObservation } from './history-changes.ts';
import { holdHistory } from './held-history.ts';
import { runPrepared, timestamptzValue, tsParam } from './sql.ts';
import { STOP_EVENT_COLUMNS } from './stop-events-writer.ts';

// One poll's rows into the history tables through the DuckDB appender, all tables of a batch
// in one transaction: a batch is stored whole or not at all. Of a snapshot's vehicles, arrivals
// and trips only what changed is stored (history-changes.ts); what is held back is written when
// it becomes the last of its kind, before a service day is finalized, and before the file closes.

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
  // migration 020: the schedule the row's ids belong to
  { name: 'schedule_id', kind: 'varchar', get: (r) => r.schedule_id ?? null },
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
  { name: 'schedule_id', kind: 'varchar', get: (r) => r.schedule_id ?? null },
];

export const TRIP_COLUMNS: readonly ColumnDef<StoredTripObservation>[] = [
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
  { name: 'polls', kind: 'integer', get: (r) => r.polls },
  // migration 018 adds it after 016's polls
  { name: 'feed_trip_id', kind: 'varchar', get: (r) => r.feed_trip_id ?? null },
  { name: 'schedule_id', kind: 'varchar', get: (r) => r.schedule_id ?? null },
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
  { name: 'schedule_id', kind: 'varchar', get: (r) => r.schedule_id ?? null },
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
  return ms === null ? null : timestamptzValue(ms);
}

/** What one transaction appends: a poll's rows as selected, or the rows a flush releases. */
interface Rows {
  vehicles: readonly VehiclePosition[];
  arrivals: readonly Arrival[];
  trips: readonly StoredTripObservation[];
  alertVersions: readonly Alert[];
  polls: readonly FeedPoll[];
  stopEvents: readonly StopEvent[];
}

interface TablePlan<R> {
  table: string;
  columns: readonly ColumnDef<R>[];
  rows: (rows: Rows) => readonly R[];
}

// erases the row type so plans of different tables fit one list; each plan stays consistent
function plan<R>(p: TablePlan<R>): TablePlan<unknown> {
  return p as unknown as TablePlan<unknown>;
}

const PLANS: readonly TablePlan<unknown>[] = [
  plan({ table: 'vehicle_positions', columns: VEHICLE_COLUMNS, rows: (b) => b.vehicles }),
  plan({ table: 'arrivals', columns: ARRIVAL_COLUMNS, rows: (b) => b.arrivals }),
  plan({ table: 'trip_observations', columns: TRIP_COLUMNS, rows: (b) => b.trips }),
  plan({ table: 'alert_versions', columns: ALERT_COLUMNS, rows: (b) => b.alertVersions }),
  plan({ table: 'feed_polls', columns: POLL_COLUMNS, rows: (b) => b.polls }),
  // the tracker writes each stop once, whatever the snapshot's verdict
  plan({ table: 'stop_events', columns: STOP_EVENT_COLUMNS, rows: (b) => b.stopEvents }),
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

const SNAPSHOT_LOOKUP = 'SELECT 1 FROM feed_snapshots WHERE feed_id = $feed_id AND body_sha256 = $body_sha256';
// One prepared statement rather than a lookup then an insert, each parsed and planned anew: sent
// at once, it runs while the change selection does (~10 ms of JS), where the two had to take
// turns with it and the transaction waited for them after. NOT EXISTS rather than ON CONFLICT DO
// NOTHING, which took DuckDB about twice as long (3 against 6 ms a snapshot, on a loaded machine).
const SNAPSHOT_RECORD = `INSERT INTO feed_snapshots (feed_id, body_sha256, header_timestamp, observed_at, source)
  SELECT $feed_id, $body_sha256, ${tsParam('header_ms')}, ${tsParam('observed_ms')}, $source
  WHERE NOT EXISTS (SELECT 1 FROM feed_snapshots WHERE feed_id = $feed_id AND body_sha256 = $body_sha256)`;

/**
 * Records the snapshot unless it is there; false when it was (then its rows are stored already).
 * Inside the batch's transaction, so a snapshot is marked stored exactly when its rows are.
 */
async function recordSnapshot(conn: DuckDBConnection, s: SnapshotRecord): Promise<boolean> {
  const inserted = await runPrepared(conn, SNAPSHOT_RECORD, {
    feed_id: s.feed_id,
    body_sha256: s.body_sha256,
    header_ms: s.header_timestamp_ms,
    observed_ms: s.observed_ms,
    source: s.source,
  });
  return inserted.rowsChanged > 0;
}

/** Appends every table's rows inside the caller's transaction; the number of rows stored. */
async function appendRows(conn: DuckDBConnection, rows: Rows): Promise<number> {
  let stored = 0;
  for (const plan of PLANS) {
    const list = plan.rows(rows);
    if (list.length === 0) continue;
    const appender = await conn.createAppender(plan.table);
    try {
      // a chunk at a time, each flushed into the transaction (inside the try, so constraint errors
      // surface here and roll the batch back), letting requests and streams through between them
      await appendColumnsInSlices(appender, plan.columns, list, () => turn());
    } finally {
      try {
        appender.closeSync();
      } catch {
        // the flush error above is the one worth reporting
      }
    }
    stored += list.length;
  }
  return stored;
}

const NOTHING: Selection = { vehicles: [], arrivals: [], trips: [], commit: () => undefined };

const isEmpty = (batch: HistoryBatch): boolean =>
  !batch.snapshot &&
  batch.vehicles.length +
    batch.arrivals.length +
    batch.trips.length +
    batch.alertVersions.length +
    batch.polls.length +
    (batch.stopEvents?.length ?? 0) ===
    0;

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

export interface HistoryWriterOptions {
  /** config history.prediction_change_s: a prediction that moved less is held back (default 30) */
  predictionChangeS?: number;
  /** config history.trip_timeout_s: a trip or vehicle unseen this long is closed (default 900) */
  tripTimeoutS?: number;
  /** the longest a trip seen unchanged goes without a row; bounds what a crash loses (default 10 min) */
  checkpointS?: number;
}

/** The writer's own figures, for tests and benches. */
export interface ChangeOnlyWriter extends HistoryWriter {
  /** writes what is held back (of service days through `filter.through`); resolves with the rows written */
  flush(filter?: HeldFilter): Promise<number>;
  /** trips, stops and vehicles in memory, and the rows held back */
  held(): { trips: number; stops: number; vehicles: number; held: number };
}

export function createHistoryWriter(db: Db, options: HistoryWriterOptions = {}): ChangeOnlyWriter {
  const changes = new ChangeOnlyHistory({
    predictionChangeMs: (options.predictionChangeS ?? 30) * 1000,
    tripTimeoutMs: (options.tripTimeoutS ?? 900) * 1000,
    checkpointMs: (options.checkpointS ?? 600) * 1000,
  });
  let schemaChecked: Promise<void> | null = null;
  const checked = (): Promise<void> =>
    (schemaChecked ??= checkSchema(db).catch((err: unknown) => {
      schemaChecked = null;
      throw err;
    }));
  /** connections for snapshot lookups, idle between polls (as many as polls ever asked at once) */
  const lookups: DuckDBConnection[] = [];
  let lookupsClosed = false;
  // the change memory moves with each committed transaction, in order: writes and flushes take turns
  let lane: Promise<unknown> = Promise.resolve();
  const inTurn = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = lane.then(fn);
    lane = run.catch(() => undefined);
    return run;
  };

  const write = async (batch: HistoryBatch): Promise<number> => {
    await checked();
    if (isEmpty(batch)) return 0;
    let selection = NOTHING;
    const stored = await db.transaction(async (conn) => {
      // a snapshot stored before (by this process or another) appends no row of its own again.
      // The rows are chosen while DuckDB checks: a selection changes no memory until its commit(),
      // so one made for a snapshot that turns out stored is simply dropped
      const recording = batch.snapshot ? recordSnapshot(conn, batch.snapshot) : Promise.resolve(true);
      let chosen: Selection;
      try {
        chosen = changes.select(batch);
      } catch (err) {
        await recording.catch(() => undefined);
        throw err;
      }
      if (await recording) selection = chosen;
      const stopEvents = batch.stopEvents ?? [];
      const rows = { ...selection, alertVersions: batch.alertVersions, polls: batch.polls, stopEvents };
      // feed_polls.stored is what this poll added to history, counted once the changes are known
      const own = batch.snapshot && batch.polls.length === 1 ? batch.polls[0] : undefined;
      if (own && own.feed_id === batch.snapshot!.feed_id) {
        own.stored = selection.vehicles.length + selection.arrivals.length + selection.trips.length;
        own.stored += batch.alertVersions.length + stopEvents.length;
      }
      return appendRows(conn, rows);
    });
    selection.commit();
    return stored;
  };

  const flush = async (filter: HeldFilter = {}): Promise<number> => {
    await checked();
    const held = changes.held(filter);
    if (held.arrivals.length + held.trips.length === 0) return 0;
    const stored = await db.transaction((conn) =>
      appendRows(conn, { ...held, alertVersions: [], polls: [], stopEvents: [] }),
    );
    held.commit();
    return stored;
  };

  const writer: ChangeOnlyWriter = {
    async hasSnapshot(key) {
      // asked on the poll's critical path: a connection of its own, so the answer never waits
      // behind the history queue's appends and commits on the shared one (MVCC reads committed
      // rows). Opening one cost more than the lookup: they are kept for the next polls
      const conn = lookups.pop() ?? (await db.connect());
      try {
        const known = await runPrepared(conn, SNAPSHOT_LOOKUP, { feed_id: key.feed_id, body_sha256: key.body_sha256 });
        return known.currentRowCount > 0;
      } finally {
        if (lookupsClosed) conn.closeSync();
        else lookups.push(conn);
      }
    },
    write: (batch) => inTurn(() => write(batch)),
    flush: (filter) => inTurn(() => flush(filter)),
    held: () => changes.size(),
    async idle() {
      if (walBytes(db) < IDLE_CHECKPOINT_WAL_BYTES) return;
      // refused while another connection writes (an export, a finalize): DuckDB's own threshold
      // or the next idle moment checkpoints instead
      await db.run('CHECKPOINT').catch(() => undefined);
    },
  };
  // held rows are written before a service day is finalized and before the file closes
  holdHistory(db, writer.flush);
  db.beforeClose(() => writer.flush());
  db.beforeClose(async () => {
    lookupsClosed = true;
    for (const conn of lookups.splice(0)) conn.closeSync();
  });
  return writer;
}
