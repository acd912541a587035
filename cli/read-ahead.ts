// The next file's bytes read on libuv's thread pool while `validate` decodes and checks the one
// before: opened and sized here (two quick system calls), then one read of the whole file, so the
// copy out of the page cache overlaps the work on the main thread. fs.promises.readFile would
// chain its open, stat, read and close through the event loop, which the checks keep busy.
import { closeSync, fstatSync, openSync, read } from 'node:fs';

/**
 * The file's bytes, or the error that reading it met (kept for its turn, not thrown); null for a
 * file that is not regular (a pipe, /dev/stdin), which is read at its turn like before.
 */
export function readAhead(path: string): Promise<Uint8Array | Error> | null {
  let fd: number | null = null;
  let bytes: Buffer;
  let size: number;
  try {
    fd = openSync(path, 'r');
    const stat = fstatSync(fd);
    if (!stat.isFile()) {
      close(fd);
      return null;
    }
    size = stat.size;
    bytes = Buffer.allocUnsafe(size); // a RangeError past the largest buffer, like readFileSync's
  } catch (err) {
    if (fd !== null) close(fd);
    return Promise.resolve(err as Error);
  }
  const file = fd;
  return new Promise((resolve) => {
    const done = (result: Uint8Array | Error): void => {
      close(file);
      resolve(result);
    };
    const from = (offset: number): void => {
      if (offset >= size) {
        done(bytes);
        return;
      }
      read(file, bytes, offset, size - offset, offset, (err, n) => {
        if (err) done(err);
        // shorter than its size when opened: what is there
        else if (n === 0) done(bytes.subarray(0, offset));
        else from(offset + n);
      });
    };
    from(0);
  });
}

/** Closing a file only read from cannot lose anything: a failure to close is not the read's. */
function close(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // nothing to do: the descriptor is released or was never valid
  }
}
