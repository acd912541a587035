// Range requests (RFC 9110 §14) for file downloads: one byte range, so an interrupted download of
// a large export resumes where it stopped. Several ranges in one request (multipart/byteranges)
// are answered with the whole file, which RFC 9110 allows a server to do.

export interface ByteRange {
  /** first byte, inclusive */
  start: number;
  /** last byte, inclusive */
  end: number;
}

export type RangeDecision = { kind: 'full' } | { kind: 'partial'; range: ByteRange } | { kind: 'unsatisfiable' };

const SINGLE_RANGE = /^bytes[ \t]*=[ \t]*(\d*)[ \t]*-[ \t]*(\d*)[ \t]*$/i;
// 16 digits stay below 2^53: no byte position is rounded
const MAX_DIGITS = 16;

/**
 * What to send for a Range header against a representation of `size` bytes whose strong ETag is
 * `etag`. A syntactically invalid header is ignored (the whole file), as RFC 9110 requires; an
 * If-Range that does not match the current ETag also gives the whole file, so a client never
 * splices bytes of two different files.
 */
export function decideRange(header: string | undefined, size: number, etag: string, ifRange?: string): RangeDecision {
  if (header === undefined) return { kind: 'full' };
  if (ifRange !== undefined && ifRange.trim() !== etag) return { kind: 'full' };
  const m = SINGLE_RANGE.exec(header);
  if (!m) return { kind: 'full' };
  const [, first = '', last = ''] = m;
  if (first.length > MAX_DIGITS || last.length > MAX_DIGITS) return { kind: 'full' };
  if (first === '') {
    // suffix range: the last N bytes
    if (last === '') return { kind: 'full' };
    const suffix = Number(last);
    if (suffix === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'partial', range: { start: Math.max(0, size - suffix), end: size - 1 } };
  }
  const start = Number(first);
  const end = last === '' ? size - 1 : Number(last);
  if (last !== '' && end < start) return { kind: 'full' };
  if (start >= size) return { kind: 'unsatisfiable' };
  return { kind: 'partial', range: { start, end: Math.min(end, size - 1) } };
}

export function contentRange(range: ByteRange, size: number): string {
  return `bytes ${range.start}-${range.end}/${size}`;
}
