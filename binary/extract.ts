import { createHash } from 'node:crypto';
import {
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { NATIVE_DIR, type ManifestEntry, type SeaManifest } from './manifest.ts';

// Embedded files are written once per build to <cache>/<version>-<id>/ and reused by every later
// start. A new tree is written beside it under a temporary name and renamed into place, so two
// processes starting together never see a half-written folder and the loser simply reuses the
// winner's. A folder that lost files (a temp cleaner, a disk full) is replaced, never trusted.

const COMPLETE_MARK = '.complete';

export interface ExtractOptions {
  manifest: SeaManifest;
  /** bytes of one SEA asset as stored (gzipped entries still compressed) */
  read(key: string): Uint8Array;
  /** folder holding one subfolder per version */
  cacheBase: string;
}

export interface Extracted {
  dir: string;
  /** false when an earlier start had already extracted this build */
  wrote: boolean;
}

/** TRANSIT_CACHE_DIR, else a per-user folder in the OS temp folder. */
export function defaultCacheBase(env: NodeJS.ProcessEnv): string {
  if (env.TRANSIT_CACHE_DIR) return resolve(env.TRANSIT_CACHE_DIR);
  const user = typeof process.getuid === 'function' ? String(process.getuid()) : (env.USERNAME ?? 'user');
  return join(tmpdir(), `transit-api-${user}`);
}

/**
 * Native code is loaded from here, so the folder must be ours alone: a shared temp folder lets
 * anyone pre-create the name. Refuses symlinks, other owners and group/world-writable modes.
 */
function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = lstatSync(dir);
  if (!st.isDirectory()) throw new Error(`cache folder ${dir} is not a directory (a symlink is not accepted)`);
  if (typeof process.getuid === 'function' && st.uid !== process.getuid()) {
    throw new Error(`cache folder ${dir} belongs to uid ${st.uid}, not to this user; set TRANSIT_CACHE_DIR`);
  }
  if (process.platform !== 'win32' && (st.mode & 0o022) !== 0) {
    throw new Error(
      `cache folder ${dir} is writable by other users (mode ${(st.mode & 0o777).toString(8)}); set TRANSIT_CACHE_DIR`,
    );
  }
}

function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** Cheap reuse check: the build's mark is there and every file has its size. */
function isIntact(dir: string, manifest: SeaManifest): boolean {
  try {
    if (readFileSync(join(dir, COMPLETE_MARK), 'utf8') !== manifest.id) return false;
    return manifest.entries.every((e) => statSync(join(dir, e.path)).size === e.bytes);
  } catch {
    return false;
  }
}

function decode(entry: ManifestEntry, stored: Uint8Array): Uint8Array {
  const bytes = entry.encoding === 'gzip' ? gunzipSync(stored) : stored;
  if (bytes.byteLength !== entry.bytes || sha256(bytes) !== entry.sha256) {
    throw new Error(`embedded file ${entry.path} is corrupt (size or sha256 differs from the manifest)`);
  }
  return bytes;
}

function writeTree(target: string, options: ExtractOptions): void {
  for (const entry of options.manifest.entries) {
    const file = join(target, entry.path);
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    // read-only: nothing may change a file once a later start trusts it by its size
    const mode = entry.path.startsWith(`${NATIVE_DIR}/`) ? 0o500 : 0o400;
    writeFileSync(file, decode(entry, options.read(entry.key)), { mode });
  }
  writeFileSync(join(target, COMPLETE_MARK), options.manifest.id, { mode: 0o400 });
}

export function extractAssets(options: ExtractOptions): Extracted {
  const { manifest, cacheBase } = options;
  ensurePrivateDir(cacheBase);
  const dir = join(cacheBase, `${manifest.version}-${manifest.id}`);
  if (isIntact(dir, manifest)) return { dir, wrote: false };

  const staging = mkdtempSync(join(cacheBase, `.staging-${manifest.id}-`));
  try {
    writeTree(staging, options);
    if (isIntact(dir, manifest)) return { dir, wrote: false };
    moveAside(dir, cacheBase);
    try {
      renameSync(staging, dir);
    } catch (err) {
      // Another process finished first: its tree is as good as ours.
      if (isIntact(dir, manifest)) return { dir, wrote: false };
      throw err;
    }
    return { dir, wrote: true };
  } finally {
    rmSync(staging, { recursive: true, force: true });
    removeStale(cacheBase);
  }
}

/** A damaged folder under the final name is moved out of the way: rename cannot replace it. */
function moveAside(dir: string, cacheBase: string): void {
  try {
    renameSync(dir, join(cacheBase, `.stale-${process.pid}-${Date.now()}`));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

function removeStale(cacheBase: string): void {
  try {
    for (const name of readdirSync(cacheBase)) {
      if (name.startsWith('.stale-')) rmSync(join(cacheBase, name), { recursive: true, force: true });
    }
  } catch {
    // Leftovers only cost disk space; never fail a start over them.
  }
}
