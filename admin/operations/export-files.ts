// `transit-api export` (through admin/operations/export.ts): parses the flags, opens the database,
// recovers what a crash left, runs the export with a progress bar on a TTY, and prints one line
// per file. Exit code 0 when every requested file is ready. The operator's part lives here, which
// uses exports/; exports/ never imports admin/.
import type { Config } from '../../core/config.ts';
import type { Db } from '../../store/db.ts';
import { progressReporter } from './progress.ts';
import {
  EXPORT_DATASETS,
  EXPORT_FORMATS,
  isExportDataset,
  isExportFormat,
  type ExportDataset,
  type ExportFormat,
} from '../../exports/datasets.ts';
import { recoverExports, runExport, type ExportFileResult, type ExportRunSummary } from '../../exports/job.ts';

export interface ExportCommandArgs {
  /** a dataset, a comma-separated list, or "all" (default all) */
  dataset?: string;
  from: string;
  /** default `from` */
  to?: string;
  /** parquet, ndjson.gz, a comma-separated list or "all" (default: exports.formats) */
  format?: string;
  /** rewrite files that are already ready */
  force?: boolean;
}

/** Bad command-line input: the caller prints the message and exits 2 (as for a UsageError). */
export class ExportArgsError extends Error {
  override name = 'ExportArgsError';
}

function parseList<T extends string>(
  value: string | undefined,
  all: readonly T[],
  fallback: readonly T[],
  valid: (v: string) => v is T,
  what: string,
): T[] {
  if (value === undefined || value === '') return [...fallback];
  if (value === 'all') return [...all];
  const items = value
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean);
  const bad = items.filter((v) => !valid(v));
  if (bad.length || items.length === 0) {
    throw new ExportArgsError(
      `unknown ${what} ${bad.map((b) => JSON.stringify(b)).join(', ')}: use ${all.join(', ')} or all`,
    );
  }
  return [...new Set(items as T[])];
}

export function describeResult(r: ExportFileResult): string {
  const m = r.manifest;
  switch (r.outcome) {
    case 'ready':
      return `ready         ${r.id}  ${m?.rows ?? 0} rows  ${m?.bytes ?? 0} bytes  sha256 ${m?.sha256 ?? ''}`;
    case 'already_ready':
      return `already ready ${r.id}  (--force rewrites it)`;
    case 'failed':
      return `FAILED        ${r.id}  ${r.reason ?? ''}`;
    case 'busy':
      return `busy          ${r.id}  ${r.reason ?? ''}`;
    case 'not_ready':
      return `not ready     ${r.id}  ${r.reason ?? ''}`;
    case 'no_data':
      return `no data       ${r.id}  ${r.reason ?? ''}`;
  }
}

export interface ExportCommandIO {
  out?: (line: string) => void;
  /** a TTY for the progress bar (default: none) */
  stream?: NodeJS.WriteStream;
  /** one JSON document instead of lines */
  json?: boolean;
}

/**
 * The export command on an open database: by the CLI on its own file (`recover`: rows left
 * running are a crashed run's), or inside the serving process through the admin channel, where
 * a running row may be the service's own job and is left alone.
 */
export async function runExportCommand(
  db: Db,
  args: ExportCommandArgs,
  config: Pick<Readonly<Config>, 'exports' | 'reliability'>,
  io: ExportCommandIO & { recover: boolean },
): Promise<number> {
  const out = io.out ?? ((line: string) => void process.stdout.write(`${line}\n`));
  const datasets: ExportDataset[] = parseList(
    args.dataset,
    EXPORT_DATASETS,
    EXPORT_DATASETS,
    isExportDataset,
    'dataset',
  );
  const formats: ExportFormat[] = parseList(
    args.format,
    EXPORT_FORMATS,
    config.exports.formats,
    isExportFormat,
    'format',
  );
  const progress = progressReporter('export', io.stream ?? NO_TTY);
  try {
    const recovered = io.recover ? (await recoverExports(db, config.exports.dir)).reset.length : 0;
    if (recovered && !io.json) out(`recovered ${recovered} export(s) left running by a crash`);
    let summary: ExportRunSummary;
    try {
      summary = await runExport(db, {
        dataset: datasets,
        from: args.from,
        to: args.to,
        formats,
        force: args.force,
        dir: config.exports.dir,
        timezone: config.reliability.timezone,
        serviceDayEnd: config.reliability.service_day_end,
        onProgress: (p) => progress.update(p.manifestId.slice(0, 40), p.done, p.total),
      });
    } catch (err) {
      if (err instanceof RangeError) throw new ExportArgsError(err.message);
      throw err;
    }
    progress.done();
    // a day without service data has nothing to write: not a failure
    const ok = summary.files.every((f) => OK_OUTCOMES.has(f.outcome));
    if (io.json) {
      out(
        JSON.stringify({
          timezone: summary.timezone,
          dir: config.exports.dir,
          recovered,
          files: summary.files.map((f) => ({
            id: f.id,
            outcome: f.outcome,
            reason: f.reason ?? null,
            manifest: f.manifest ?? null,
          })),
        }),
      );
      return ok ? 0 : 1;
    }
    out(`service days in ${summary.timezone}; files under ${config.exports.dir}`);
    for (const file of summary.files) out(describeResult(file));
    return ok ? 0 : 1;
  } finally {
    progress.done();
  }
}

const OK_OUTCOMES: ReadonlySet<ExportFileResult['outcome']> = new Set(['ready', 'already_ready', 'no_data']);

/** Progress goes nowhere when there is no terminal to redraw. */
const NO_TTY = { isTTY: false } as NodeJS.WriteStream;
