import { stat } from 'node:fs/promises';
import type { DuckDBConnection } from '@duckdb/node-api';
import { isTimeZone } from '../core/dates.ts';
import type { Db } from './db.ts';
import {
  GtfsSourceError,
  openGtfsSource,
  REQUIRED_GTFS_FILES,
  type GtfsFile,
  type GtfsFolder,
  type ProgressFn,
} from './gtfs-source.ts';
import { csvHeader, describeCsvError, readCsvSql, withEncoding, type CsvEncoding } from './gtfs-csv.ts';
import { ESSENTIAL_FILES, SourceColumns, TABLE_SPECS, type TableSpec } from './gtfs-tables.ts';
import { inTransaction, sqlString } from './sql.ts';

// Static GTFS into DuckDB: every file through DuckDB's CSV reader (cast in SQL, never row by
// row), then one transaction that deletes the schedule's previous rows and inserts the new
// ones, so a re-import replaces atomically and a failed one leaves the old schedule as it was.

export { GtfsSourceError } from './gtfs-source.ts';

export interface TableLoad {
  rows: number;
  /** rows dropped for a missing or malformed key column */
  skipped: number;
  ms: number;
}

export interface ImportSummary {
  schedule_id: string;
  source: string;
  /** where the files were found, e.g. "schedule/ inside feed.zip" */
  location: string;
  timezone: string;
  feed_version: string | null;
  /** feed_info.txt's feed_start_date / feed_end_date (YYYY-MM-DD), when given */
  feed_start_date: string | null;
  feed_end_date: string | null;
  /** every .txt file of the feed */
  files: string[];
  tables: Partial<Record<GtfsFile, TableLoad>>;
  warnings: string[];
  ms: number;
}

export interface ImportOptions {
  /**
   * Runs inside the import's transaction after the new rows are in, on the import's connection:
   * checks that may refuse the import (throw: ROLLBACK, the old schedule stays) and work that
   * must commit with it (a version row, re-expanded days, the in-memory index read).
   */
  beforeCommit?: (conn: DuckDBConnection, summary: Omit<ImportSummary, 'ms'>) => Promise<void>;
  /** read the files from here instead of `source` (a copy already fetched); `source` is still recorded */
  localPath?: string;
}

const imports = new WeakMap<Db, Promise<unknown>>();

/** Imports one schedule. Imports into the same Db run one at a time. */
export function importGtfs(
  db: Db,
  scheduleId: string,
  source: string,
  onProgress?: ProgressFn,
  options: ImportOptions = {},
): Promise<ImportSummary> {
  const previous = imports.get(db) ?? Promise.resolve();
  const run = previous.catch(() => undefined).then(() => importNow(db, scheduleId, source, onProgress, options));
  imports.set(db, run);
  return run;
}

async function importNow(
  db: Db,
  scheduleId: string,
  source: string,
  onProgress: ProgressFn | undefined,
  options: ImportOptions,
): Promise<ImportSummary> {
  const started = performance.now();
  if (!scheduleId) throw new GtfsSourceError('schedule id must not be empty');
  const folder = await openGtfsSource(options.localPath ?? source, onProgress);
  try {
    checkFiles(folder);
    // its own connection: a long import must not hold up history writes on the shared queue
    const conn = await db.connect();
    try {
      const result = await loadAll(conn, scheduleId, source, folder, onProgress, options.beforeCommit);
      return { ...result, ms: Math.round(performance.now() - started) };
    } finally {
      conn.closeSync();
    }
  } finally {
    await folder.cleanup();
  }
}

function checkFiles(folder: GtfsFolder): void {
  const missing = REQUIRED_GTFS_FILES.filter((f) => !folder.paths[f]).map((f) => `${f}.txt`);
  if (!folder.paths.calendar && !folder.paths.calendar_dates) missing.push('calendar.txt or calendar_dates.txt');
  if (missing.length) {
    const found = folder.files.length ? folder.files.join(', ') : 'no .txt files';
    throw new GtfsSourceError(
      `GTFS feed is missing required file(s): ${missing.join(', ')} (looked in ${folder.location}; found: ${found})`,
    );
  }
}

type Loaded = Omit<ImportSummary, 'ms'>;

/** A file read into a temp table, validated, waiting to be inserted. */
interface Staged {
  spec: TableSpec;
  stage: string;
  /** SQL over the stage: the rows to keep */
  valid: string;
  load: TableLoad;
}

/**
 * Reads every file into temp tables first, outside any transaction: a failed read inside a
 * DuckDB transaction aborts it, and an unreadable optional file must only cost a warning.
 * Then one short transaction swaps the schedule's rows.
 */
async function loadAll(
  conn: DuckDBConnection,
  scheduleId: string,
  source: string,
  folder: GtfsFolder,
  onProgress?: ProgressFn,
  beforeCommit?: ImportOptions['beforeCommit'],
): Promise<Loaded> {
  const warnings: string[] = [];
  const specs = TABLE_SPECS.filter((s) => folder.paths[s.file]);
  const staged: Staged[] = [];
  try {
    for (const spec of specs) {
      onProgress?.({ step: `read ${spec.file}.txt`, done: staged.length, total: specs.length });
      const table = await stageTable(conn, spec, folder.paths[spec.file]!, warnings);
      if (table) staged.push(table);
    }
    const timezone = await agencyTimezone(conn, warnings);
    const feedInfo = folder.paths.feed_info ? await readFeedInfo(conn, folder.paths.feed_info, warnings) : NO_FEED_INFO;
    const feedVersion = feedInfo.feed_version;
    const tables: ImportSummary['tables'] = {};
    const committed = await inTransaction(conn, async () => {
      for (const spec of TABLE_SPECS) {
        await conn.run(`DELETE FROM ${spec.table} WHERE schedule_id = $1`, [scheduleId]);
      }
      await conn.run('DELETE FROM schedules WHERE schedule_id = $1', [scheduleId]);
      let done = 0;
      for (const { spec, stage, valid, load } of staged) {
        onProgress?.({ step: `store ${spec.file}`, done: done++, total: staged.length });
        const started = performance.now();
        const inserted = Object.keys(spec.columns(ALL_COLUMNS)).filter((c) => !c.startsWith('_'));
        const targets = [...inserted, ...Object.keys(spec.derived ?? {})];
        const selects = [...inserted, ...Object.values(spec.derived ?? {})];
        await conn.run(
          `INSERT INTO ${spec.table} (schedule_id, ${targets.join(', ')})
           SELECT $1, ${selects.join(', ')} FROM ${stage} WHERE ${valid}`,
          [scheduleId],
        );
        tables[spec.file] = { ...load, ms: load.ms + Math.round(performance.now() - started) };
      }
      await conn.run(
        `INSERT INTO schedules (schedule_id, source, imported_at, agency_timezone, feed_version, files)
         VALUES ($1, $2, now(), $3, $4, [${folder.files.map(sqlString).join(', ')}]::VARCHAR[])`,
        [scheduleId, source, timezone, feedVersion],
      );
      const loaded: Loaded = {
        schedule_id: scheduleId,
        source,
        location: folder.location,
        timezone,
        ...feedInfo,
        files: folder.files,
        tables,
        warnings,
      };
      await beforeCommit?.(conn, loaded);
      return loaded;
    });
    onProgress?.({ step: 'done', done: staged.length, total: staged.length });
    return committed;
  } finally {
    for (const { stage } of staged) await conn.run(`DROP TABLE IF EXISTS ${stage}`).catch(() => undefined);
  }
}

/** Column names only: every spec column is present, so the target list can be read off it. */
const ALL_COLUMNS = new SourceColumns([]);

function stageName(file: string): string {
  return `_gtfs_stage_${file}`;
}

/** Reads one file into a temp table; undefined when an optional file is unusable (with a warning). */
async function stageTable(
  conn: DuckDBConnection,
  spec: TableSpec,
  path: string,
  warnings: string[],
): Promise<Staged | undefined> {
  const started = performance.now();
  const name = `${spec.file}.txt`;
  const fail = (message: string): undefined => {
    if (ESSENTIAL_FILES.has(spec.file)) throw new GtfsSourceError(message);
    warnings.push(`${message}; file ignored`);
    return undefined;
  };
  if ((await stat(path)).size === 0) return fail(`${name} is empty`);
  let cols: SourceColumns;
  let encoding: CsvEncoding;
  try {
    const read = await withEncoding(async (enc) => new SourceColumns(await csvHeader(conn, path, enc)));
    [cols, encoding] = [read.value, read.encoding];
  } catch (err) {
    return fail(`${name} is not readable CSV: ${describeCsvError(err)}`);
  }
  const missing = spec.requiredColumns.filter((c) => !cols.has(c));
  if (missing.length) return fail(`${name} lacks required column(s): ${missing.join(', ')}`);

  const stage = stageName(spec.file);
  const columns = Object.entries(spec.columns(cols)).map(([target, sql]) => `${sql} AS ${target}`);
  try {
    encoding = (
      await withEncoding(
        (enc) =>
          conn.run(
            `CREATE OR REPLACE TEMP TABLE ${stage} AS SELECT ${columns.join(', ')} FROM ${readCsvSql(path, enc)}`,
          ),
        encoding,
      )
    ).encoding;
  } catch (err) {
    return fail(`${name} could not be read: ${describeCsvError(err)}`);
  }
  if (encoding === 'latin-1') warnings.push(`${name} is not UTF-8; read as Latin-1`);
  const valid = spec.notNull.length ? spec.notNull.map((c) => `${c} IS NOT NULL`).join(' AND ') : 'true';
  const audits = spec.audits ?? {};
  const counts = (
    await conn.runAndReadAll(
      `SELECT count(*) FILTER (WHERE ${valid}) AS kept, count(*) FILTER (WHERE NOT (${valid})) AS skipped
     ${Object.entries(audits)
       .map(([a, [sql]]) => `, count(*) FILTER (WHERE ${sql}) AS ${a}`)
       .join('')} FROM ${stage}`,
    )
  ).getRowObjectsJS()[0]!;
  const skipped = Number(counts.skipped);
  if (skipped > 0) {
    warnings.push(`${name}: ${skipped} row(s) skipped: ${spec.notNull.join(', ')} missing or malformed`);
  }
  for (const [audit, [, message]] of Object.entries(audits)) {
    const n = Number(counts[audit]);
    if (n > 0) warnings.push(`${name}: ${n} ${message}`);
  }
  return {
    spec,
    stage,
    valid,
    load: { rows: Number(counts.kept), skipped, ms: Math.round(performance.now() - started) },
  };
}

async function agencyTimezone(conn: DuckDBConnection, warnings: string[]): Promise<string> {
  const rows = (
    await conn.runAndReadAll(
      `SELECT DISTINCT agency_timezone AS tz FROM ${stageName('agency')} WHERE agency_timezone IS NOT NULL ORDER BY 1`,
    )
  )
    .getRowObjectsJS()
    .map((r) => String(r.tz));
  const tz = rows[0];
  if (!tz) throw new GtfsSourceError('agency.txt gives no agency_timezone; times cannot be placed without it');
  if (!isTimeZone(tz))
    throw new GtfsSourceError(`agency.txt: agency_timezone ${JSON.stringify(tz)} is not a known IANA time zone`);
  if (rows.length > 1) warnings.push(`agency.txt: several time zones (${rows.join(', ')}); using ${tz}`);
  return tz;
}

type FeedInfo = Pick<ImportSummary, 'feed_version' | 'feed_start_date' | 'feed_end_date'>;
const NO_FEED_INFO: FeedInfo = { feed_version: null, feed_start_date: null, feed_end_date: null };

async function readFeedInfo(conn: DuckDBConnection, path: string, warnings: string[]): Promise<FeedInfo> {
  if ((await stat(path)).size === 0) return NO_FEED_INFO;
  try {
    const { value } = await withEncoding(async (enc) => {
      const cols = new SourceColumns(await csvHeader(conn, path, enc));
      const rows = (
        await conn.runAndReadAll(
          `SELECT ${cols.text('feed_version')} AS v, strftime(${cols.date('feed_start_date')}, '%Y-%m-%d') AS s,
           strftime(${cols.date('feed_end_date')}, '%Y-%m-%d') AS e FROM ${readCsvSql(path, enc)} LIMIT 1`,
        )
      ).getRowObjectsJS();
      const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);
      return { feed_version: text(rows[0]?.v), feed_start_date: text(rows[0]?.s), feed_end_date: text(rows[0]?.e) };
    });
    return value;
  } catch (err) {
    warnings.push(`feed_info.txt could not be read (${describeCsvError(err)}); feed_version left empty`);
    return NO_FEED_INFO;
  }
}

/** The tables one schedule occupies (besides `schedules`). */
export const GTFS_TABLES: readonly string[] = TABLE_SPECS.map((s) => s.table);
