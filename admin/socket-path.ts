import { closeSync, openSync } from 'node:fs';
import { basename, dirname, relative, resolve } from 'node:path';

// A Unix socket address holds at most 107 bytes on Linux (sun_path). A longer path is reached
// through its relative form when that fits, else (Linux) through /proc/self/fd/<n>/<name> with
// <n> an open descriptor of its folder: bind() and connect() resolve that path like any other.
const SUN_PATH_MAX = 107;

export class SocketPathError extends Error {
  override name = 'SocketPathError';
}

export interface SocketAddress {
  /** what to pass to bind/connect (listen(path), connect(path), http socketPath) */
  address: string;
  /** closes the folder descriptor a long path needed; the address is invalid after */
  release(): void;
}

const fits = (p: string): boolean => Buffer.byteLength(p) <= SUN_PATH_MAX;

/** The form of `path` to bind or connect to; throws when none fits. Release it when done. */
export function socketAddress(path: string, cwd: string = process.cwd()): SocketAddress {
  const absolute = resolve(cwd, path);
  if (fits(absolute)) return { address: absolute, release: () => undefined };
  const rel = relative(cwd, absolute);
  if (fits(rel)) return { address: rel, release: () => undefined };
  if (process.platform === 'linux' && fits(`/proc/self/fd/2147483647/${basename(absolute)}`)) {
    const fd = openSync(dirname(absolute), 'r');
    let open = true;
    return {
      address: `/proc/self/fd/${fd}/${basename(absolute)}`,
      release: () => {
        if (open) closeSync(fd);
        open = false;
      },
    };
  }
  throw new SocketPathError(
    `the admin socket path ${absolute} is longer than ${SUN_PATH_MAX} bytes: set admin.socket to a shorter path`,
  );
}
