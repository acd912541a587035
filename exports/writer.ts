// Writes one export file with DuckDB's own COPY, under a temporary name in the target folder,
// and renames it into place only once it is complete and on disk, so a crash can leave a stray
// temporary file (removed at start-up) but never a half file under the final name.
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, type Dirent } from 'node:fs';
import { open, readdir, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { makePrivateDir, makePrivateFile } from '../core/private-files.ts';
import { sqlString } from '../store/sql.ts';
import { NDJSON_TIMESTAMP_FORMAT, type ExportFormat } from './datasets.ts';
import type { CompletedFile, SchemaColumn } from './manifests.ts';

const TEMP_MARK = '.tmp-';
const TEMP_RE = /\.tmp-\d+-[0-9a-f]{8}$/;

export function isTempExportFile(name: string): boolean {
  return TEMP_RE.test(name);
}

function copyOptions(format: ExportFormat): string {
  return format === 'parquet'
    ? 'FORMAT parquet, COMPRESSION zstd'
    : `FORMAT json, COMPRESSION gzip, TIMESTAMPFORMAT ${sqlString(NDJSON_TIMESTAMP_FORMAT)}`;
}

/**
 * Session settings every export connection needs: NDJSON timestamps are rendered in the session
 * zone, and the files promise UTC (`…Z`). Parquet stores instants and is unaffected.
 */
export async function prepareExportConnection(conn: DuckDBConnection): Promise<void> {
  await conn.run("SET SESSION TimeZone = 'UTC'");
}

/** Column names and DuckDB types of a query, without running it. */
export async function describeSelect(conn: DuckDBConnection, select: string): Promise<SchemaColumn[]> {
  const reader = await conn.runAndReadAll(`DESCRIBE (${select})`);
  return reader.getRowObjectsJS().map((r) => ({ name: String(r.column_name), type: String(r.column_type) }));
}

export async function sha256File(path: string): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) {
    hash.update(chunk as Buffer);
    bytes += (chunk as Buffer).length;
  }
  return { sha256: hash.digest('hex'), bytes };
}

async function fsyncPath(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

export interface ExportFileRequest {
  /** the rows to write, rendered for `format` */
  select: string;
  /** the typed query recorded as the schema; the same for every format of a part */
  schema: SchemaColumn[];
  format: ExportFormat;
  finalPath: string;
}

/** A complete COPY under its temporary name, not yet durable nor visible. */
export interface CopiedFile {
  temp: string;
  finalPath: string;
  rows: number;
  schema: SchemaColumn[];
}

/** Step 1: DuckDB's COPY to a temporary name beside the final one. Removes the temp file on error. */
export async function copyToTemp(conn: DuckDBConnection, req: ExportFileRequest): Promise<CopiedFile> {
  await makePrivateDir(dirname(req.finalPath));
  const temp = `${req.finalPath}${TEMP_MARK}${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    const result = await conn.runAndReadAll(`COPY (${req.select}) TO ${sqlString(temp)} (${copyOptions(req.format)})`);
    const rows = Number(result.getRowObjectsJS()[0]?.Count ?? Number.NaN);
    if (!Number.isFinite(rows)) throw new Error('COPY reported no row count');
    // DuckDB created it under the process umask; the file is owner-only whatever that was
    await makePrivateFile(temp);
    return { temp, finalPath: req.finalPath, rows, schema: req.schema };
  } catch (err) {
    await rm(temp, { force: true }).catch(() => undefined);
    throw err;
  }
}

/**
 * Step 2: fsync, hash, rename into place, fsync the folder. Needs no database connection, so
 * the job runs it while DuckDB already copies the next file. Removes the temp file on error.
 */
export async function finishExportFile(copied: CopiedFile): Promise<CompletedFile> {
  try {
    await fsyncPath(copied.temp);
    // the bytes hashed are the bytes renamed: the final file is never written again
    const { sha256, bytes } = await sha256File(copied.temp);
    await rename(copied.temp, copied.finalPath);
    await fsyncPath(dirname(copied.finalPath)).catch(() => undefined);
    return { rows: copied.rows, bytes, sha256, schema: copied.schema };
  } catch (err) {
    await rm(copied.temp, { force: true }).catch(() => undefined);
    throw err;
  }
}

/** Deletes temporary files a crash left under `dir` (recursively). Returns their paths. */
export async function removeStrayTempFiles(dir: string): Promise<string[]> {
  let entries: Dirent[];
  try {
    entries = await readdir(dir, { recursive: true, withFileTypes: true });
  } catch (err) {
    // no folder yet, or a misconfigured path: nothing to clean, and each export reports the error
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return [];
    throw err;
  }
  const removed: string[] = [];
  for (const entry of entries) {
    if (!entry.isFile() || !isTempExportFile(entry.name)) continue;
    const path = join(entry.parentPath, entry.name);
    await rm(path, { force: true });
    removed.push(path);
  }
  return removed;
}
