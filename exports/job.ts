// Running exports: queue manifest rows, claim them, write each file, record the outcome and
// announce it on the event bus. Manual runs (CLI) and the daily job share this path.
import { stat } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { tightenSync } from '../core/private-files.ts';
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
  dropPending,
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
import { noServiceDataReason } from './service-data.ts';
import { DEFAULT_CONFIG } from '../core/config.ts';

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

/** `no_data`: the day has no service data (exports/service-data.ts), so no file is written. */
export type FileOutcome = 'ready' | 'failed' | 'already_ready' | 'not_ready' | 'busy' | 'no_data';

export interface ExportFileResult {
  id: string;
  dataset: ExportDataset;
  part: string;
  service_date: string;
  format: ExportFormat;
  outcome: FileOutcome;
  /** the row after the run; null when none was created (not_ready, no_data without an earlier file) */
  manifest: ExportManifest | null;
  /** why a file was not written (not_ready, busy, failed, no_data) */
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
  parseClock(options.serviceDayEnd ?? DEFAULT_CONFIG.reliability.service_day_end);
  return { datasets: [...new Set(datasets)], formats: [...new Set(formats)], to };
}

/**
 * Exports `dataset` for every service day from `from` to `to`. Days whose rows are not complete
 * yet are reported `not_ready` and get no manifest row, days without service data `no_data`
 * (no file; one written before is kept, even with `force`); files already ready are kept unless
 * `force`. Each written file ends `ready` (with rows, bytes, sha256, schema) or `failed`.
 */
export async function runExport(db: Db, options: RunExportOptions): Promise<ExportRunSummary> {
  const { datasets, formats, to } = validateRun(options);
  const now = options.now ?? (() => new Date());
  const timezone = await resolveTimezone(db, options.timezone);
  const serviceDayEnd = options.serviceDayEnd ?? DEFAULT_CONFIG.reliability.service_day_end;
  const early: ExportFileResult[] = [];
  const wanted: ManifestKey[] = [];
  const noData = serviceDataCheck(db);
  for (const dataset of datasets) {
    for (const date of dateRange(options.from, to)) {
      const keys = manifestKeys(dataset, date, formats);
      const day = serviceDayWindow(date, timezone, serviceDayEnd);
      const reason = await notReadyReason(db, dataset, day, now());
      if (reason) {
        early.push(...keys.map((k) => resultOf(k, 'not_ready', null, reason)));
        continue;
      }
      const empty = await noData(day);
      if (empty === null) {
        wanted.push(...keys);
        continue;
      }
      // a file written before (its rows since pruned, or another deployment's) is never replaced by an empty one
      for (const key of keys) {
        const earlier = await getManifest(db, manifestId(key));
        const kept = earlier?.state === 'ready' ? `${empty}; the ready file is kept` : empty;
        early.push(resultOf(key, 'no_data', earlier, kept));
      }
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
 * reliability job finalizes a day). Pending files of days not complete yet stay pending; those
 * of a complete day without service data are dropped (`no_data`).
 */
export async function runPending(settings: ExportSettings): Promise<ExportFileResult[]> {
  const now = settings.now ?? (() => new Date());
  const pending = await manifestsInState(settings.db, 'pending');
  const ready: string[] = [];
  const empty: ExportFileResult[] = [];
  const verdicts = new Map<string, string | null>();
  const noData = serviceDataCheck(settings.db);
  for (const m of pending) {
    const k = `${m.dataset}\n${m.service_date}`;
    const day = serviceDayWindow(m.service_date, settings.timezone, settings.serviceDayEnd);
    if (!verdicts.has(k)) verdicts.set(k, await notReadyReason(settings.db, m.dataset, day, now()));
    if (verdicts.get(k) !== null) continue;
    const reason = await noData(day);
    if (reason === null) ready.push(m.id);
    else empty.push(resultOf(manifestKeyOf(m), 'no_data', null, reason));
  }
  // queued before the day turned out empty (or by an older version): no file, and no row left pending
  await dropPending(
    settings.db,
    empty.map((r) => r.id),
  );
  return [...empty, ...(await exportClaimed(settings, await claimManifests(settings.db, ready, now())))];
}

/** noServiceDataReason, asked once per service day by a run. */
function serviceDataCheck(db: Db): (day: ServiceDayWindow) => Promise<string | null> {
  const seen = new Map<string, Promise<string | null>>();
  return (day) => {
    let found = seen.get(day.date);
    if (!found) {
      found = noServiceDataReason(db, day);
      seen.set(day.date, found);
    }
    return found;
  };
}

export interface RecoverySummary {
  /** rows a crash left running, now pending again */
  reset: string[];
  /** ready rows whose file was missing or had another size, now pending again */
  requeued: string[];
  removedTempFiles: string[];
  /** ready files (and their folders) that other users could read, now owner-only */
  tightened: string[];
}

/** The file and the folders between it and the export folder, made owner-only where they were not. */
function tightenExportFile(dir: string, path: string): string[] {
  const paths = [path];
  for (let d = dirname(path); relative(dir, d) !== '' && !relative(dir, d).startsWith('..'); d = dirname(d))
    paths.push(d);
  return paths.filter((p) => tightenSync(p));
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
  const tightened: string[] = [];
  for (const m of await manifestsInState(db, 'ready')) {
    const path = join(dir, m.file_path);
    const size = await stat(path).then(
      (s) => s.size,
      () => null,
    );
    if (size === null || size !== m.bytes) requeued.push(m.id);
    // files written before exports were private (or under another umask) become so
    else tightened.push(...tightenExportFile(dir, path));
  }
  await requeueManifests(db, requeued, now);
  return { reset, requeued, removedTempFiles, tightened };
}
