import { chmodSync, lstatSync, mkdirSync, type Stats } from 'node:fs';
import { chmod, mkdir } from 'node:fs/promises';

// Everything the service writes (the database and its WAL, DuckDB's spill folder, backups,
// exports, the analyst snapshot, the signing secret) is for its own user only: they hold key
// hashes, webhook secrets and usage. Files are 0600 and folders 0700 whatever umask the process
// started with.

export const PRIVATE_FILE_MODE = 0o600;
export const PRIVATE_DIR_MODE = 0o700;

/**
 * Owner-only permissions for files created from now on, by this process's code and by native
 * code that creates its own files later (DuckDB's WAL and spill files), which no chmod of ours
 * can reach in time. Bits the umask already clears stay cleared.
 */
export function restrictUmask(): void {
  // set, then read back what it was (reading alone is deprecated): a stricter umask stays stricter
  const previous = process.umask(0o077);
  if ((previous & ~0o077) !== 0) process.umask(previous | 0o077);
}

/** Creates `dir` (and missing parents) as 0700; a folder that exists keeps its mode. */
export function makePrivateDirSync(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
}

export async function makePrivateDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
}

/**
 * Takes group and other permissions away from an existing file or folder (not a link: its
 * target may be anything). Returns true when it had some, false when it was private already or
 * does not exist.
 */
export function tightenSync(path: string): boolean {
  let stat: Stats;
  try {
    stat = lstatSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
  if (stat.isSymbolicLink() || (stat.mode & 0o077) === 0) return false;
  chmodSync(path, stat.isDirectory() ? PRIVATE_DIR_MODE : PRIVATE_FILE_MODE);
  return true;
}

/** chmod 0600 of a file this process just wrote (filesystems and umasks that ignored the mode). */
export async function makePrivateFile(path: string): Promise<void> {
  await chmod(path, PRIVATE_FILE_MODE);
}
