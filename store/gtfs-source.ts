import { createWriteStream } from 'node:fs';
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
  'agency', 'routes', 'stops', 'trips', 'stop_times', 'calendar', 'calendar_dates',
  'frequencies', 'shapes', 'feed_info',
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
    let info;
    try {
      info = await stat(path);
    } catch {
      throw new GtfsSourceError(`GTFS source not found: ${source}`);
    }
    const folder = info.isDirectory()
      ? await fromDirectory(path)
      : await fromZip(path, source, temps, onProgress);
    return { ...folder, cleanup };
  } catch (err) {
    await cleanup();
    throw err;
  }
}

async function download(url: string, dest: string, onProgress?: ProgressFn): Promise<void> {
  let res: Response;
  try {
    res = await fetch(url, { signal: AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS), redirect: 'follow' });
  } catch (err) {
    throw new GtfsSourceError(`GTFS download failed: ${url}: ${(err as Error).message}`);
  }
  if (!res.ok || !res.body) {
    await res.body?.cancel().catch(() => undefined);
    throw new GtfsSourceError(`GTFS download failed: ${url}: HTTP ${res.status}`);
  }
  const total = Number(res.headers.get('content-length') ?? 0);
  let done = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _enc: BufferEncoding, next: TransformCallback) {
      done += chunk.length;
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
    throw new GtfsSourceError(`GTFS download failed: ${url}: ${(err as Error).message}`);
  }
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
  dirs.set('', rootEntries.filter((e) => e.isFile()).map((e) => e.name));
  for (const sub of rootEntries.filter((e) => e.isDirectory() && !isLitter(e.name))) {
    const inner = await readdir(join(root, sub.name), { withFileTypes: true });
    dirs.set(sub.name, inner.filter((e) => e.isFile()).map((e) => e.name));
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
  path: string, source: string, temps: string[], onProgress?: ProgressFn,
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
