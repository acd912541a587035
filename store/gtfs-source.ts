import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, type Stats } from 'node:fs';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join, posix } from 'node:path';
import { Readable, Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { openZip, type ZipEntry } from './zip.ts';

// Turns a schedule source (zip, folder, file:// or http(s):// URL) into local GTFS text files.
// Real feeds put their files inside one nested folder, add macOS litter or ship extra files;
// all of that is handled here so the loader only sees `name.txt → path`.

export const GTFS_FILES = [
  'agency',
  'routes',
  'stops',
  'trips',
  'stop_times',
  'calendar',
  'calendar_dates',
  'frequencies',
  'shapes',
  'feed_info',
] as const;
export type GtfsFile = (typeof GTFS_FILES)[number];
export const REQUIRED_GTFS_FILES: readonly GtfsFile[] = ['agency', 'routes', 'trips', 'stop_times', 'stops'];

const DOWNLOAD_TIMEOUT_MS = 10 * 60_000;
const DOWNLOAD_MAX_BYTES = 2 * 1024 ** 3;

export class GtfsSourceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GtfsSourceError';
  }
}

export type ProgressFn = (p: { step: string; done: number; total: number }) => void;

export interface GtfsFolder {
  /** GTFS files this project loads, by name without `.txt` */
  paths: Partial<Record<GtfsFile, string>>;
  /** every `.txt` file beside them, e.g. fare_rules.txt, sorted */
  files: string[];
  /** where the files were found, for messages: "schedule/ inside x.zip" */
  location: string;
  cleanup(): Promise<void>;
}

/** Local GTFS files for `source`. The caller must call `cleanup()`. */
export async function openGtfsSource(source: string, onProgress?: ProgressFn): Promise<GtfsFolder> {
  const temps: string[] = [];
  const cleanup = async (): Promise<void> => {
    await Promise.all(temps.map((d) => rm(d, { recursive: true, force: true })));
  };
  try {
    let path = source;
    if (/^https?:\/\//i.test(source)) {
      const dir = await mkdtemp(join(tmpdir(), 'gtfs-dl-'));
      temps.push(dir);
      path = join(dir, 'download.zip');
      await download(source, path, onProgress);
    } else if (/^file:\/\//i.test(source)) {
      path = fileURLToPath(source);
    }
    let info: Stats;
    try {
      info = await stat(path);
    } catch {
      throw new GtfsSourceError(`GTFS source not found: ${source}`);
    }
    const folder = info.isDirectory() ? await fromDirectory(path) : await fromZip(path, source, temps, onProgress);
    return { ...folder, cleanup };
  } catch (err) {
    await cleanup();
    throw err;
  }
}

/** HTTP validators of a fetched copy, sent back on the next fetch (conditional GET). */
export interface SourceValidators {
  etag?: string | null;
  last_modified?: string | null;
}

export type FetchedGtfs =
  | { changed: false }
  | {
      changed: true;
      /** a local zip file or folder holding the copy */
      path: string;
      /** SHA-256 of the file (of a folder: of its .txt files' names and contents, sorted) */
      sha256: string;
      etag: string | null;
      last_modified: string | null;
      cleanup(): Promise<void>;
    };

/**
 * The source's current bytes and their hash, or `{ changed: false }` when an http(s) server
 * answers 304 to the validators of the last copy. Local files and folders are hashed in place.
 */
export async function fetchGtfs(
  source: string,
  validators: SourceValidators = {},
  onProgress?: ProgressFn,
): Promise<FetchedGtfs> {
  if (/^https?:\/\//i.test(source)) {
    const dir = await mkdtemp(join(tmpdir(), 'gtfs-dl-'));
    const cleanup = (): Promise<void> => rm(dir, { recursive: true, force: true });
    try {
      const path = join(dir, 'download.zip');
      const got = await download(source, path, onProgress, validators);
      if (!got.changed) {
        await cleanup();
        return { changed: false };
      }
      return { changed: true, path, sha256: got.sha256, etag: got.etag, last_modified: got.last_modified, cleanup };
    } catch (err) {
      await cleanup();
      throw err;
    }
  }
  const path = /^file:\/\//i.test(source) ? fileURLToPath(source) : source;
  let info: Stats;
  try {
    info = await stat(path);
  } catch {
    throw new GtfsSourceError(`GTFS source not found: ${source}`);
  }
  const sha256 = info.isDirectory() ? await hashFolder(path) : await hashFile(path);
  return { changed: true, path, sha256, etag: null, last_modified: null, cleanup: async () => undefined };
}

async function hashFile(path: string, hash = createHash('sha256')): Promise<string> {
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

async function hashFolder(root: string): Promise<string> {
  const hash = createHash('sha256');
  const walk = async (dir: string, prefix: string): Promise<void> => {
    const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1));
    for (const e of entries) {
      if (isLitter(e.name)) continue;
      if (e.isDirectory()) await walk(join(dir, e.name), `${prefix}${e.name}/`);
      else if (e.name.toLowerCase().endsWith('.txt')) {
        hash.update(`${prefix}${e.name}\0`);
        for await (const chunk of createReadStream(join(dir, e.name))) hash.update(chunk as Buffer);
        hash.update('\0');
      }
    }
  };
  await walk(root, '');
  return hash.digest('hex');
}

/** fetch() says only "fetch failed": the reason (ECONNREFUSED, ENOTFOUND, …) is its cause's code. */
function describeFetchError(err: unknown): string {
  const e = err as Error & { cause?: Error & { code?: string } };
  const cause = e?.cause ? `: ${e.cause.code ?? e.cause.message}` : '';
  return `${e?.message ?? String(err)}${cause}`;
}

type Downloaded =
  | { changed: false }
  | { changed: true; sha256: string; etag: string | null; last_modified: string | null };

async function download(
  url: string,
  dest: string,
  onProgress?: ProgressFn,
  validators: SourceValidators = {},
): Promise<Downloaded> {
  let res: Response;
  const headers: Record<string, string> = {};
  if (validators.etag) headers['if-none-match'] = validators.etag;
  if (validators.last_modified) headers['if-modified-since'] = validators.last_modified;
  try {
    res = await fetch(url, { signal: AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS), redirect: 'follow', headers });
  } catch (err) {
    throw new GtfsSourceError(`GTFS download failed: ${url}: ${describeFetchError(err)}`);
  }
  if (res.status === 304 && (validators.etag || validators.last_modified)) {
    await res.body?.cancel().catch(() => undefined);
    return { changed: false };
  }
  if (!res.ok || !res.body) {
    await res.body?.cancel().catch(() => undefined);
    throw new GtfsSourceError(`GTFS download failed: ${url}: HTTP ${res.status}`);
  }
  const total = Number(res.headers.get('content-length') ?? 0);
  let done = 0;
  const hash = createHash('sha256');
  const meter = new Transform({
    transform(chunk: Buffer, _enc: BufferEncoding, next: TransformCallback) {
      done += chunk.length;
      hash.update(chunk);
      if (done > DOWNLOAD_MAX_BYTES) {
        next(new GtfsSourceError(`GTFS download failed: ${url}: larger than ${DOWNLOAD_MAX_BYTES} bytes`));
        return;
      }
      onProgress?.({ step: 'download', done, total });
      next(null, chunk);
    },
  });
  try {
    await pipeline(Readable.fromWeb(res.body as never), meter, createWriteStream(dest));
  } catch (err) {
    if (err instanceof GtfsSourceError) throw err;
    throw new GtfsSourceError(`GTFS download failed: ${url}: ${describeFetchError(err)}`);
  }
  return {
    changed: true,
    sha256: hash.digest('hex'),
    etag: res.headers.get('etag'),
    last_modified: res.headers.get('last-modified'),
  };
}

/** macOS resource forks and hidden files are never GTFS. */
function isLitter(path: string): boolean {
  return path.split('/').some((part) => part === '__MACOSX' || part.startsWith('.'));
}

function gtfsName(fileName: string): GtfsFile | undefined {
  const lower = fileName.toLowerCase();
  if (!lower.endsWith('.txt')) return undefined;
  const stem = lower.slice(0, -4);
  return (GTFS_FILES as readonly string[]).includes(stem) ? (stem as GtfsFile) : undefined;
}

/**
 * The folder holding the GTFS files: the shallowest one with any known GTFS file. Two such
 * folders at the same depth are ambiguous (two feeds in one archive) and refused.
 */
function pickFolder(dirs: Map<string, string[]>, where: string): string {
  const candidates = [...dirs.entries()]
    .filter(([, names]) => names.some((n) => gtfsName(n) !== undefined))
    .map(([dir]) => dir);
  if (candidates.length === 0) {
    throw new GtfsSourceError(`no GTFS files (agency.txt, stops.txt, …) found in ${where}`);
  }
  const depth = (d: string): number => (d === '' ? 0 : d.split('/').length);
  const shallowest = Math.min(...candidates.map(depth));
  const top = candidates.filter((d) => depth(d) === shallowest).sort();
  if (top.length > 1) {
    throw new GtfsSourceError(`${where} holds GTFS files in several folders (${top.join(', ')}); expected one feed`);
  }
  return top[0]!;
}

function describe(dir: string, where: string): string {
  return dir === '' ? where : `${dir}/ inside ${where}`;
}

async function fromDirectory(root: string): Promise<Omit<GtfsFolder, 'cleanup'>> {
  // the root and one level of sub-folders: the layouts real feeds use
  const dirs = new Map<string, string[]>();
  const rootEntries = await readdir(root, { withFileTypes: true });
  dirs.set(
    '',
    rootEntries.filter((e) => e.isFile()).map((e) => e.name),
  );
  for (const sub of rootEntries.filter((e) => e.isDirectory() && !isLitter(e.name))) {
    const inner = await readdir(join(root, sub.name), { withFileTypes: true });
    dirs.set(
      sub.name,
      inner.filter((e) => e.isFile()).map((e) => e.name),
    );
  }
  const dir = pickFolder(dirs, root);
  const names = dirs.get(dir)!.filter((n) => !isLitter(n));
  const paths: GtfsFolder['paths'] = {};
  for (const name of names) {
    const gtfs = gtfsName(name);
    if (gtfs) paths[gtfs] = join(root, dir, name);
  }
  return { paths, files: txtFiles(names), location: describe(dir, root) };
}

function txtFiles(names: string[]): string[] {
  return names.filter((n) => n.toLowerCase().endsWith('.txt')).sort();
}

async function fromZip(
  path: string,
  source: string,
  temps: string[],
  onProgress?: ProgressFn,
): Promise<Omit<GtfsFolder, 'cleanup'>> {
  const zip = await openZip(path);
  try {
    const byDir = new Map<string, ZipEntry[]>();
    for (const entry of zip.entries) {
      if (entry.isDirectory || isLitter(entry.name)) continue;
      const dir = posix.dirname(entry.name);
      const key = dir === '.' ? '' : dir;
      byDir.set(key, [...(byDir.get(key) ?? []), entry]);
    }
    const where = basename(source);
    const dir = pickFolder(new Map([...byDir].map(([d, es]) => [d, es.map((e) => posix.basename(e.name))])), where);
    const entries = byDir.get(dir)!;
    const out = await mkdtemp(join(tmpdir(), 'gtfs-'));
    temps.push(out);
    const wanted = entries.filter((e) => gtfsName(posix.basename(e.name)) !== undefined);
    const paths: GtfsFolder['paths'] = {};
    let done = 0;
    for (const entry of wanted) {
      const gtfs = gtfsName(posix.basename(entry.name))!;
      const dest = join(out, `${gtfs}.txt`);
      await zip.extract(entry, dest);
      paths[gtfs] = dest;
      onProgress?.({ step: 'extract', done: ++done, total: wanted.length });
    }
    return { paths, files: txtFiles(entries.map((e) => posix.basename(e.name))), location: describe(dir, where) };
  } finally {
    await zip.close();
  }
}
