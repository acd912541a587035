// The export_manifests table: one row per file, and the state machine
// pending → running → ready | failed. Every write goes through the Db queue.
import { listValue, type DuckDBConnection } from '@duckdb/node-api';
import type { Db } from '../store/db.ts';
import { isServiceDate, utcDate } from '../core/dates.ts';
import {
  DATASETS,
  exportFileName,
  exportRelativePath,
  findPart,
  isExportDataset,
  isExportFormat,
  type DatasetPart,
  type ExportDataset,
  type ExportFormat,
} from './datasets.ts';

export const MANIFEST_STATES = ['pending', 'running', 'ready', 'failed'] as const;
export type ManifestState = (typeof MANIFEST_STATES)[number];

export interface SchemaColumn {
  name: string;
  type: string;
}

export interface ExportManifest {
  /** the file name, e.g. alerts-2024-05-01.ndjson.gz */
  id: string;
  dataset: ExportDataset;
  part: string;
  service_date: string;
  format: ExportFormat;
  state: ManifestState;
  /** relative to exports.dir */
  file_path: string;
  rows: number | null;
  bytes: number | null;
  sha256: string | null;
  schema: SchemaColumn[] | null;
  error: string | null;
  attempts: number;
  queued_at: string;
  started_at: string | null;
  /** when the file was completed */
  created_at: string | null;
  updated_at: string;
}

/** Keyset position: the last row's (service_date, id); listings run newest day first. */
export type ManifestCursor = readonly [serviceDate: string, manifestId: string];

export interface ManifestQuery {
  dataset?: ExportDataset;
  /** first service date, inclusive */
  from?: string;
  /** last service date, inclusive */
  to?: string;
  format?: ExportFormat;
  state?: ManifestState;
  limit: number;
  cursor?: ManifestCursor;
}

export interface ManifestPage {
  items: ExportManifest[];
  /** pass back as `cursor` for the next page; null on the last page */
  next_cursor: ManifestCursor | null;
}

export const MAX_MANIFEST_PAGE = 1_000;

interface ManifestRow {
  manifest_id: string;
  dataset: string;
  part: string;
  service_date: Date;
  format: string;
  state: string;
  file_path: string;
  rows: bigint | null;
  bytes: bigint | null;
  sha256: string | null;
  schema: SchemaColumn[] | null;
  error: string | null;
  attempts: number;
  queued_at: Date;
  started_at: Date | null;
  created_at: Date | null;
  updated_at: Date;
}

const COLUMNS = `manifest_id, dataset, part, service_date, format, state, file_path, "rows", bytes, sha256,
  "schema", error, attempts, queued_at, started_at, created_at, updated_at`;

function fromRow(r: ManifestRow): ExportManifest {
  return {
    id: r.manifest_id,
    dataset: r.dataset as ExportDataset,
    part: r.part,
    service_date: utcDate(r.service_date.getTime()),
    format: r.format as ExportFormat,
    state: r.state as ManifestState,
    file_path: r.file_path,
    rows: r.rows === null ? null : Number(r.rows),
    bytes: r.bytes === null ? null : Number(r.bytes),
    sha256: r.sha256,
    schema: r.schema ? r.schema.map((c) => ({ name: c.name, type: c.type })) : null,
    error: r.error,
    attempts: r.attempts,
    queued_at: r.queued_at.toISOString(),
    started_at: r.started_at?.toISOString() ?? null,
    created_at: r.created_at?.toISOString() ?? null,
    updated_at: r.updated_at.toISOString(),
  };
}

export interface ManifestKey {
  part: DatasetPart;
  date: string;
  format: ExportFormat;
}

export function manifestId(key: ManifestKey): string {
  return exportFileName(key.part, key.date, key.format);
}

export function manifestKeyOf(m: ExportManifest): ManifestKey {
  const part = findPart(m.dataset, m.part);
  if (!part) throw new Error(`export manifest ${m.id} names an unknown part ${m.part}`);
  return { part, date: m.service_date, format: m.format };
}

interface QueueOptions {
  force?: boolean;
  now?: Date;
}

/** Set-based, so queuing a month of files costs three statements, not two per file. */
async function enqueueOn(c: DuckDBConnection, keys: readonly ManifestKey[], options: QueueOptions): Promise<string[]> {
  const now = (options.now ?? new Date()).toISOString();
  const ids = listValue(keys.map(manifestId));
  await c.run(
    `INSERT INTO export_manifests (manifest_id, dataset, part, service_date, format, state, file_path,
      attempts, queued_at, updated_at)
    SELECT unnest($ids), unnest($datasets), unnest($parts), unnest($dates)::DATE, unnest($formats), 'pending',
      unnest($paths), 0, $now::TIMESTAMPTZ, $now::TIMESTAMPTZ
    ON CONFLICT DO NOTHING`,
    {
      ids,
      datasets: listValue(keys.map((k) => k.part.dataset)),
      parts: listValue(keys.map((k) => k.part.part)),
      dates: listValue(keys.map((k) => k.date)),
      formats: listValue(keys.map((k) => k.format)),
      paths: listValue(keys.map((k) => exportRelativePath(k.part, k.date, k.format))),
      now,
    },
  );
  await c.run(
    `UPDATE export_manifests SET state = 'pending', error = NULL, queued_at = $now::TIMESTAMPTZ,
      updated_at = $now::TIMESTAMPTZ
    WHERE list_contains($ids, manifest_id) AND list_contains($requeue, state)`,
    {
      ids,
      requeue: listValue(options.force ? ['failed', 'ready'] : ['failed']),
      now,
    },
  );
  const pending = new Set(
    (
      await c.runAndReadAll(
        `SELECT manifest_id FROM export_manifests
    WHERE list_contains($ids, manifest_id) AND state = 'pending'`,
        { ids },
      )
    )
      .getRowObjectsJS()
      .map((r) => String(r.manifest_id)),
  );
  return [...new Set(keys.map(manifestId))].filter((id) => pending.has(id));
}

async function claimOn(c: DuckDBConnection, ids: readonly string[], now: Date): Promise<ExportManifest[]> {
  if (ids.length === 0) return [];
  const reader = await c.runAndReadAll(
    `UPDATE export_manifests
    SET state = 'running', attempts = attempts + 1, started_at = $now::TIMESTAMPTZ, updated_at = $now::TIMESTAMPTZ,
      error = NULL
    WHERE state = 'pending' AND list_contains($ids, manifest_id)
    RETURNING ${COLUMNS}`,
    { ids: listValue([...ids]), now: now.toISOString() },
  );
  return (reader.getRowObjectsJS() as unknown as ManifestRow[]).map(fromRow);
}

/**
 * Queues files: missing rows are inserted as pending; failed rows (and ready ones when `force`)
 * go back to pending. Running rows are left alone. Returns the ids now pending.
 */
export async function enqueueManifests(
  db: Db,
  keys: readonly ManifestKey[],
  options: QueueOptions = {},
): Promise<string[]> {
  if (keys.length === 0) return [];
  return db.transaction((c) => enqueueOn(c, keys, options));
}

/** pending → running for the given ids; returns the rows this caller now owns. */
export async function claimManifests(db: Db, ids: readonly string[], now = new Date()): Promise<ExportManifest[]> {
  if (ids.length === 0) return [];
  return db.exclusive((c) => claimOn(c, ids, now));
}

/** enqueueManifests then claimManifests in one transaction (one commit): what a manual run owns. */
export async function enqueueAndClaim(
  db: Db,
  keys: readonly ManifestKey[],
  options: QueueOptions = {},
): Promise<ExportManifest[]> {
  if (keys.length === 0) return [];
  return db.transaction(async (c) => claimOn(c, await enqueueOn(c, keys, options), options.now ?? new Date()));
}

/** Deletes rows still pending: files that will not be written (their day has no service data). */
export async function dropPending(db: Db, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await db.run(`DELETE FROM export_manifests WHERE state = 'pending' AND list_contains($ids, manifest_id)`, {
    ids: listValue([...ids]),
  });
}

export interface CompletedFile {
  rows: number;
  bytes: number;
  sha256: string;
  schema: SchemaColumn[];
}

export async function markReady(db: Db, id: string, file: CompletedFile, now = new Date()): Promise<ExportManifest> {
  const rows = await db.all<ManifestRow>(
    `UPDATE export_manifests
    SET state = 'ready', "rows" = $rows, bytes = $bytes, sha256 = $sha, "schema" = $schema::JSON::STRUCT(name VARCHAR,
      type VARCHAR)[],
      error = NULL, created_at = $now::TIMESTAMPTZ, updated_at = $now::TIMESTAMPTZ
    WHERE manifest_id = $id AND state = 'running'
    RETURNING ${COLUMNS}`,
    {
      id,
      rows: BigInt(file.rows),
      bytes: BigInt(file.bytes),
      sha: file.sha256,
      schema: JSON.stringify(file.schema),
      now: now.toISOString(),
    },
  );
  if (!rows[0]) throw new Error(`export manifest ${id} is not running`);
  return fromRow(rows[0]);
}

export async function markFailed(db: Db, id: string, error: string, now = new Date()): Promise<ExportManifest | null> {
  const rows = await db.all<ManifestRow>(
    `UPDATE export_manifests
    SET state = 'failed', error = $error, updated_at = $now::TIMESTAMPTZ
    WHERE manifest_id = $id AND state = 'running'
    RETURNING ${COLUMNS}`,
    { id, error: error.slice(0, 2_000), now: now.toISOString() },
  );
  return rows[0] ? fromRow(rows[0]) : null;
}

/** Start-up: rows a crash left running go back to pending. Returns their ids. */
export async function resetRunning(db: Db, now = new Date()): Promise<string[]> {
  const rows = await db.all<{ manifest_id: string }>(
    `UPDATE export_manifests
    SET state = 'pending', updated_at = $now::TIMESTAMPTZ WHERE state = 'running' RETURNING manifest_id`,
    { now: now.toISOString() },
  );
  return rows.map((r) => r.manifest_id);
}

/** Ready rows whose file is gone or has another size go back to pending (they are no longer listed). */
export async function requeueManifests(db: Db, ids: readonly string[], now = new Date()): Promise<void> {
  if (ids.length === 0) return;
  await db.run(
    `UPDATE export_manifests SET state = 'pending', error = NULL, updated_at = $now::TIMESTAMPTZ
    WHERE list_contains($ids, manifest_id)`,
    { ids: listValue([...ids]), now: now.toISOString() },
  );
}

export async function getManifest(db: Db, id: string): Promise<ExportManifest | null> {
  const rows = await db.all<ManifestRow>(`SELECT ${COLUMNS} FROM export_manifests WHERE manifest_id = $id`, { id });
  return rows[0] ? fromRow(rows[0]) : null;
}

/** Rows in one state, oldest service day first (recovery and the daily job). */
export async function manifestsInState(db: Db, state: ManifestState, sinceDate?: string): Promise<ExportManifest[]> {
  const rows = await db.all<ManifestRow>(
    `SELECT ${COLUMNS} FROM export_manifests
    WHERE state = $state AND ($since IS NULL OR service_date >= $since::DATE)
    ORDER BY service_date, manifest_id`,
    { state, since: sinceDate ?? null },
  );
  return rows.map(fromRow);
}

function validateQuery(q: ManifestQuery): void {
  if (!Number.isInteger(q.limit) || q.limit < 1 || q.limit > MAX_MANIFEST_PAGE) {
    throw new RangeError(`limit must be an integer from 1 to ${MAX_MANIFEST_PAGE}`);
  }
  if (q.dataset !== undefined && !isExportDataset(q.dataset))
    throw new RangeError(`unknown dataset ${String(q.dataset)}`);
  if (q.format !== undefined && !isExportFormat(q.format)) throw new RangeError(`unknown format ${String(q.format)}`);
  if (q.state !== undefined && !(MANIFEST_STATES as readonly string[]).includes(q.state)) {
    throw new RangeError(`unknown state ${String(q.state)}`);
  }
  for (const [name, value] of [
    ['from', q.from],
    ['to', q.to],
  ] as const) {
    if (value !== undefined && !isServiceDate(value)) throw new RangeError(`${name} must be a date (YYYY-MM-DD)`);
  }
  if (q.cursor !== undefined) {
    const [date, id] = q.cursor;
    if (q.cursor.length !== 2 || !isServiceDate(date) || typeof id !== 'string' || id.length === 0) {
      throw new RangeError('cursor must be [service_date, manifest id]');
    }
  }
}

/**
 * Manifests newest service day first, then by id, with keyset pagination: stable while new
 * rows are added, because a page starts strictly after the previous page's last key.
 */
export async function listManifests(db: Db, query: ManifestQuery): Promise<ManifestPage> {
  validateQuery(query);
  const rows = await db.all<ManifestRow>(
    `SELECT ${COLUMNS} FROM export_manifests
    WHERE ($dataset IS NULL OR dataset = $dataset)
      AND ($format IS NULL OR format = $format)
      AND ($state IS NULL OR state = $state)
      AND ($from IS NULL OR service_date >= $from::DATE)
      AND ($to IS NULL OR service_date <= $to::DATE)
      AND ($after_date IS NULL OR service_date < $after_date::DATE
        OR (service_date = $after_date::DATE AND manifest_id > $after_id))
    ORDER BY service_date DESC, manifest_id
    LIMIT $limit`,
    {
      dataset: query.dataset ?? null,
      format: query.format ?? null,
      state: query.state ?? null,
      from: query.from ?? null,
      to: query.to ?? null,
      after_date: query.cursor?.[0] ?? null,
      after_id: query.cursor?.[1] ?? null,
      limit: query.limit + 1,
    },
  );
  const items = rows.slice(0, query.limit).map(fromRow);
  const last = items[items.length - 1];
  return { items, next_cursor: rows.length > query.limit && last ? [last.service_date, last.id] : null };
}

/** Every (part, format) file of a dataset for one day. */
export function manifestKeys(dataset: ExportDataset, date: string, formats: readonly ExportFormat[]): ManifestKey[] {
  return DATASETS[dataset].parts.flatMap((part) => formats.map((format) => ({ part, date, format })));
}
