// Serving one stored file as a download: conditional requests, a single byte range, and the
// headers that let a client check what it got. The bytes themselves stream from disk in the
// socket layer (FileReply), never through the heap as a whole.
import { open } from 'node:fs/promises';
import { ApiError } from '../core/errors.ts';
import { contentRange, decideRange } from './byte-range.ts';
import type { HeaderList } from './headers.ts';
import { matchesIfNoneMatch } from './response-cache.ts';
import { FileReply, Reply } from './types.ts';

export interface StoredFile {
  path: string;
  /** the size the catalogue promises; a file of another size is refused, never served */
  bytes: number;
  /** hex SHA-256 of the whole file: the strong ETag and Repr-Digest */
  sha256: string;
  contentType: string;
  /** the name a browser saves it under */
  filename: string;
  lastModified?: Date | null;
}

export class FileMismatchError extends Error {}

/** RFC 9530 digest of the whole representation, whatever range is sent. */
function reprDigest(sha256Hex: string): string {
  return `sha-256=:${Buffer.from(sha256Hex, 'hex').toString('base64')}:`;
}

function disposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}

/**
 * Opens `file` for the request's headers (range, if-range, if-none-match). Throws ApiError
 * range_not_satisfiable (416) for a range past the end, FileMismatchError when the file on disk
 * is missing or not the size catalogued; the caller decides what that means for its catalogue.
 */
export async function fileDownload(
  file: StoredFile,
  requestHeaders: Readonly<Record<string, string>>,
  extraHeaders: HeaderList = [],
): Promise<FileReply | Reply> {
  const etag = `"${file.sha256}"`;
  const headers: HeaderList = [
    ['ETag', etag],
    ['Repr-Digest', reprDigest(file.sha256)],
    ['Accept-Ranges', 'bytes'],
    ['Content-Disposition', disposition(file.filename)],
    ...(file.lastModified ? [['Last-Modified', file.lastModified.toUTCString()] as [string, string]] : []),
    ...extraHeaders,
  ];
  if (matchesIfNoneMatch(requestHeaders['if-none-match'], etag)) return new Reply(304, file.contentType, '', headers);

  const handle = await open(file.path, 'r').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') throw new FileMismatchError(`${file.path} is missing`);
    throw err;
  });
  try {
    const { size } = await handle.stat();
    if (size !== file.bytes)
      throw new FileMismatchError(`${file.path} has ${size} bytes, the catalogue says ${file.bytes}`);
    const decision = decideRange(requestHeaders.range, size, etag, requestHeaders['if-range']);
    if (decision.kind === 'unsatisfiable') {
      throw new ApiError(
        'range_not_satisfiable',
        `The file has ${size} bytes; the requested range starts past its end.`,
        {
          headers: { 'Content-Range': `bytes */${size}` },
        },
      );
    }
    if (decision.kind === 'partial') {
      const { start, end } = decision.range;
      return new FileReply(206, file.contentType, { handle, start, length: end - start + 1 }, [
        ...headers,
        ['Content-Range', contentRange(decision.range, size)],
      ]);
    }
    return new FileReply(200, file.contentType, { handle, start: 0, length: size }, headers);
  } catch (err) {
    await handle.close().catch(() => undefined);
    throw err;
  }
}
