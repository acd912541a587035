// Running exports: queue manifest rows, claim them, write each file, record the outcome and
// announce it on the event bus. Manual runs (CLI) and the daily job share this path.
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { domainEvent, type DomainEvent, type EventBus } from '../core/events.ts';
import type { Db } from '../store/db.ts';
import {
  daysBetween,
  isServiceDate,
  parseClock,
  dateRange,
  serviceDayWindow,
  type ServiceDayWindow,
} from '../core/dates.ts';
import { writeHeldHistory } from '../store/held-history.ts';
import { resolveTimezone } from '../store/reliability/timezone.ts';
import {
  DATASETS,
  EXPORT_FORMATS,
  isExportDataset,
  isExportFormat,
  partSelect,
  type ExportDataset,
  type ExportFormat,
} from './datasets.ts';
import {
  claimManifests,
  enqueueAndClaim,
  getManifest,
  manifestId,
  manifestKeyOf,
  manifestKeys,
  manifestsInState,
  markFailed,
  markReady,
  requeueManifests,
  resetRunning,
  type ExportManifest,
  type ManifestKey,
  type SchemaColumn,
} from './manifests.ts';
import {
  copyToTemp,
  describeSelect,
  finishExportFile,
  prepareExportConnection,
  removeStrayTempFiles,
  type CopiedFile,
} from './writer.ts';

export const MAX_EXPORT_RANGE_DAYS = 400;

export interface ExportProgress {
  /** files finished so far (ready or failed) */
  done: number;
  total: number;
  /** the file being written, or the one just finished */
  manifestId: string;
  step: 'writing' | 'ready' | 'failed';
}

export interface ExportSettings {
  db: Db;
  /** exports.dir */
  dir: string;
  timezone: string;
  /** reliability.service_day_end (HH:MM) */
  serviceDayEnd: string;
  bus?: EventBus;
  now?: () => Date;
  onProgress?: (progress: ExportProgress) => void;
}

export interface RunExportOptions {
  dataset: ExportDataset | readonly ExportDataset[];
  /** first service date (YYYY-MM-DD) */
  from: string;
  /** last service date, inclusive; default `from` */
  to?: string;
  /** default: both */
  formats?: readonly ExportFormat[];
  dir: string;
  /** default: reliability.timezone resolution (configured, else the agency's, else UTC) */
  timezone?: string;
  serviceDayEnd?: string;
  /** rewrite files that are already ready */
  force?: boolean;
  bus?: EventBus;
  now?: () => Date;
  onProgress?: (progress: ExportProgress) => void;
}

export type FileOutcome = 'ready' | 'failed' | 'already_ready' | 'not_ready' | 'busy';

export interface ExportFileResult {
  id: string;
  dataset: ExportDataset;
  part: string;
  service_date: string;
  format: ExportFormat;
  outcome: FileOutcome;
  /** the row after the run; null when none was created (not_ready) */
  manifest: ExportManifest | null;
  /** why a file was not written (not_ready, busy, failed) */
  reason?: string;
}

export interface ExportRunSummary {
  timezone: string;
  files: ExportFileResult[];
}

export function exportEvent(manifest: ExportManifest, atMs: number): DomainEvent<'export.ready' | 'export.failed'> {
  const common = {
    id: manifest.id,
    dataset: manifest.dataset,
    part: manifest.part,
    service_date: manifest.service_date,
    format: manifest.format,
  };
  const scope = { modes: [] };
  return manifest.state === 'ready'
    ? domainEvent('export.ready', atMs, scope, {
        ...common,
        rows: manifest.rows,
        bytes: manifest.bytes,
        sha256: manifest.sha256,
        created_at: manifest.created_at,
      })
    : domainEvent('export.failed', atMs, scope, { ...common, error: manifest.error, attempts: manifest.attempts });
}

/** Why `date` cannot be exported yet for `dataset`, or null when its rows are complete. */
export async function notReadyReason(
  db: Db,
  dataset: ExportDataset,
  day: ServiceDayWindow,
  now: Date,
): Promise<string | null> {
  if (DATASETS[dataset].readiness === 'finalized') {
    const rows = await db.all('SELECT 1 FROM reliability_finalized WHERE service_date = $date::DATE', {
      date: day.date,
    });
    return rows.length > 0 ? null : `service day ${day.date} is not finalized by the reliability job yet`;
  }
  return now >= day.end ? null : `service day ${day.date} runs until ${day.end.toISOString()}`;
}

function resultOf(
  key: ManifestKey,
  outcome: FileOutcome,
  manifest: ExportManifest | null,
  reason?: string,
): ExportFileResult {
  return {
    id: manifestId(key),
    dataset: key.part.dataset,
    part: key.part.part,
    service_date: key.date,
    format: key.format,
    outcome,
    manifest,
    ...(reason === undefined ? {} : { reason }),
  };
}

/**
 * Writes claimed (running) files. One read transaction per service day and dataset, so both
 * formats and all parts of a day show the same rows even while ingestion keeps appending.
 * While DuckDB copies one file, the previous one is finished (fsync, hash, rename, manifest):
 * that work needs no export connection, and durability then costs the job almost no time.
 */
export async function exportClaimed(
  settings: ExportSettings,
  claimed: readonly ExportManifest[],
): Promise<ExportFileResult[]> {
  const now = settings.now ?? (() => new Date());
  const groups = new Map<string, ExportManifest[]>();
  for (const m of claimed) {
    const k = `${m.dataset}\n${m.service_date}`;
    groups.set(k, [...(groups.get(k) ?? []), m]);
  }
  const results: ExportFileResult[] = [];
  let done = 0;
  const progress = (manifestId: string, step: ExportProgress['step']) =>
    settings.onProgress?.({ done, total: claimed.length, manifestId, step });
  const settle = (manifest: ExportManifest, result: ExportFileResult) => {
    results.push(result);
    done += 1;
    progress(manifest.id, result.outcome === 'ready' ? 'ready' : 'failed');
  };
  // at most one file is being finished; its error surfaces at the next wait, never unhandled
  let finishing: Promise<void> = Promise.resolve();
  let finishError: { err: unknown } | null = null;
  const waitFinishing = async () => {
    await finishing;
    if (finishError) {
      const { err } = finishError;
      finishError = null;
      throw err;
    }
  };
  try {
    const conn = await settings.db.connect();
    try {
      await prepareExportConnection(conn);
      for (const group of groups.values()) {
        await conn.run('BEGIN TRANSACTION');
        try {
          for (const manifest of group) {
            progress(manifest.id, 'writing');
            const copied = await copyOne(settings, conn, manifest);
            await waitFinishing();
            if (!copied.ok) {
              settle(manifest, await recordFailure(settings, manifest, copied.error, now));
              // an error may leave the transaction aborted; the day's other files get a fresh one
              await conn.run('ROLLBACK').catch(() => undefined);
              await conn.run('BEGIN TRANSACTION');
              continue;
            }
            finishing = finishOne(settings, manifest, copied.file, now).then(
              (result) => settle(manifest, result),
              (err: unknown) => {
                finishError = { err };
              },
            );
          }
        } finally {
          await conn.run('ROLLBACK').catch(() => undefined);
        }
      }
    } finally {
      conn.closeSync();
    }
    await waitFinishing();
  } catch (err) {
    await finishing;
    // the connection or the database failed: no claimed row may stay running until a restart
    const settled = new Set(results.map((r) => r.id));
    for (const manifest of claimed.filter((m) => !settled.has(m.id))) {
      settle(manifest, await recordFailure(settings, manifest, err, now));
    }
  }
  return results;
}

async function recordFailure(
  settings: ExportSettings,
  manifest: ExportManifest,
  err: unknown,
  now: () => Date,
): Promise<ExportFileResult> {
  const outcome = await markFailed(settings.db, manifest.id, err instanceof Error ? err.message : String(err), now());
  if (outcome) settings.bus?.publish(exportEvent(outcome, now().getTime()));
  return resultOf(manifestKeyOf(manifest), 'failed', outcome, outcome?.error ?? String(err));
}

type CopyOutcome = { ok: true; file: CopiedFile } | { ok: false; error: unknown };

/** DESCRIBE for the schema, then COPY to a temporary file: the part that needs the export connection. */
async function copyOne(
  settings: ExportSettings,
  conn: DuckDBConnection,
  manifest: ExportManifest,
): Promise<CopyOutcome> {
  try {
    const key = manifestKeyOf(manifest);
    // change-only history holds a trip's last predictions until it is passed or times out: they
    // belong in the day's file (trips of the day running late, a feed that stopped answering)
    if (key.part.dataset === 'realtime') await writeHeldHistory(settings.db, { through: manifest.service_date });
    const day = serviceDayWindow(manifest.service_date, settings.timezone, settings.serviceDayEnd);
    const schema: SchemaColumn[] = await describeSelect(conn, partSelect(key.part, day, 'typed'));
    const file = await copyToTemp(conn, {
      select: partSelect(key.part, day, key.format),
      schema,
      format: key.format,
      finalPath: join(settings.dir, manifest.file_path),
    });
    return { ok: true, file };
  } catch (error) {
    return { ok: false, error };
  }
}

/** fsync, hash, rename, then the manifest row turns ready and export.ready is published. */
async function finishOne(
  settings: ExportSettings,
  manifest: ExportManifest,
  copied: CopiedFile,
  now: () => Date,
): Promise<ExportFileResult> {
  let ready: ExportManifest;
  try {
    ready = await markReady(settings.db, manifest.id, await finishExportFile(copied), now());
  } catch (err) {
    return recordFailure(settings, manifest, err, now);
  }
  settings.bus?.publish(exportEvent(ready, now().getTime()));
  return resultOf(manifestKeyOf(manifest), 'ready', ready);
}

function validateRun(options: RunExportOptions): { datasets: ExportDataset[]; formats: ExportFormat[]; to: string } {
  const datasets = typeof options.dataset === 'string' ? [options.dataset] : [...options.dataset];
  if (datasets.length === 0 || !datasets.every(isExportDataset)) {
    throw new RangeError(`dataset must be one of ${Object.keys(DATASETS).join(', ')}`);
  }
  const formats = [...(options.formats ?? EXPORT_FORMATS)];
  if (formats.length === 0 || !formats.every(isExportFormat))
    throw new RangeError(`format must be one of ${EXPORT_FORMATS.join(', ')}`);
  const to = options.to ?? options.from;
  if (!isServiceDate(options.from)) throw new RangeError(`from must be a date (YYYY-MM-DD): ${options.from}`);
  if (!isServiceDate(to)) throw new RangeError(`to must be a date (YYYY-MM-DD): ${to}`);
  if (to < options.from) throw new RangeError('to must not be before from');
  if (daysBetween(options.from, to) >= MAX_EXPORT_RANGE_DAYS)
    throw new RangeError(`at most ${MAX_EXPORT_RANGE_DAYS} days per run`);
  parseClock(options.serviceDayEnd ?? '04:00');
  return { datasets: [...new Set(datasets)], formats: [...new Set(formats)], to };
}

/**
 * Exports `dataset` for every service day from `from` to `to`. Days whose rows are not complete
 * yet are reported `not_ready` and get no manifest row; files already ready are kept unless
 * `force`. Each written file ends `ready` (with rows, bytes, sha256, schema) or `failed`.
 */
export async function runExport(db: Db, options: RunExportOptions): Promise<ExportRunSummary> {
  const { datasets, formats, to } = validateRun(options);
  const now = options.now ?? (() => new Date());
  const timezone = await resolveTimezone(db, options.timezone);
  const serviceDayEnd = options.serviceDayEnd ?? '04:00';
  const early: ExportFileResult[] = [];
  const wanted: ManifestKey[] = [];
  for (const dataset of datasets) {
    for (const date of dateRange(options.from, to)) {
      const keys = manifestKeys(dataset, date, formats);
      const reason = await notReadyReason(db, dataset, serviceDayWindow(date, timezone, serviceDayEnd), now());
      if (reason) early.push(...keys.map((k) => resultOf(k, 'not_ready', null, reason)));
      else wanted.push(...keys);
    }
  }
  const claimed = await enqueueAndClaim(db, wanted, { force: options.force, now: now() });
  const claimedIds = new Set(claimed.map((m) => m.id));
  for (const key of wanted) {
    const id = manifestId(key);
    if (claimedIds.has(id)) continue;
    const manifest = await getManifest(db, id);
    if (manifest?.state === 'ready') early.push(resultOf(key, 'already_ready', manifest));
    else early.push(resultOf(key, 'busy', manifest, 'another export of this file is running'));
  }
  const written = await exportClaimed({ ...options, db, timezone, serviceDayEnd }, claimed);
  return { timezone, files: [...early, ...written] };
}

/**
 * Runs every pending file whose service day is complete (the daily job, and after the
 * reliability job finalizes a day). Pending files of days not complete yet stay pending.
 */
export async function runPending(settings: ExportSettings): Promise<ExportFileResult[]> {
  const now = settings.now ?? (() => new Date());
  const pending = await manifestsInState(settings.db, 'pending');
  const ready: string[] = [];
  const verdicts = new Map<string, string | null>();
  for (const m of pending) {
    const k = `${m.dataset}\n${m.service_date}`;
    if (!verdicts.has(k)) {
      const day = serviceDayWindow(m.service_date, settings.timezone, settings.serviceDayEnd);
      verdicts.set(k, await notReadyReason(settings.db, m.dataset, day, now()));
    }
    if (verdicts.get(k) === null) ready.push(m.id);
  }
  return exportClaimed(settings, await claimManifests(settings.db, ready, now()));
}

export interface RecoverySummary {
  /** rows a crash left running, now pending again */
  reset: string[];
  /** ready rows whose file was missing or had another size, now pending again */
  requeued: string[];
  removedTempFiles: string[];
}

/**
 * Start-up recovery, before any export runs: rows left running go back to pending, temporary
 * files are deleted, and a ready row whose file is gone or truncated is queued again, so no
 * listed file is incomplete.
 */
export async function recoverExports(db: Db, dir: string, now = new Date()): Promise<RecoverySummary> {
  const reset = await resetRunning(db, now);
  const removedTempFiles = await removeStrayTempFiles(dir);
  const requeued: string[] = [];
  for (const m of await manifestsInState(db, 'ready')) {
    const size = await stat(join(dir, m.file_path)).then(
      (s) => s.size,
      () => null,
    );
    if (size === null || size !== m.bytes) requeued.push(m.id);
  }
  await requeueManifests(db, requeued, now);
  return { reset, requeued, removedTempFiles };
}
