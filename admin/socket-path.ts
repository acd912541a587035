import { relative, resolve } from 'node:path';

// A Unix socket address holds at most 107 bytes on Linux (sun_path). A longer absolute path is
// reached through its relative form when that fits, as both ends run from the same tree in the
// usual deployment (WorkingDirectory of the unit, or the checkout).
const SUN_PATH_MAX = 107;

export class SocketPathError extends Error {
  override name = 'SocketPathError';
}

/** The form of `path` to bind or connect to; throws when neither form fits. */
export function socketAddress(path: string, cwd: string = process.cwd()): string {
  const absolute = resolve(cwd, path);
  if (Buffer.byteLength(absolute) <= SUN_PATH_MAX) return absolute;
  const rel = relative(cwd, absolute);
  if (Buffer.byteLength(rel) <= SUN_PATH_MAX) return rel;
  throw new SocketPathError(
    `the admin socket path ${absolute} is longer than ${SUN_PATH_MAX} bytes: set admin.socket to a shorter path`,
  );
}
