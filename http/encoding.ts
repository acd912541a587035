// Content coding of JSON bodies (RFC 9110 §8.4, §12.5.3): which coding a request accepts, by
// Accept-Encoding and its q-values, and the body compressed once per coding. Each coding is its
// own representation with its own ETag, so If-None-Match keeps working whichever one a client holds.
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';

export type Coding = 'br' | 'gzip';
export type ContentCoding = Coding | 'identity';

/** Smaller bodies go out as they are: a packet or two either way, and compressing costs CPU. */
export const MIN_COMPRESSED_BYTES = 1024;

/** Preference among codings a client accepts equally: smaller first. */
const CODINGS: readonly ContentCoding[] = ['br', 'gzip', 'identity'];

const negotiated = new Map<string, ContentCoding>();
/** distinct Accept-Encoding values remembered (clients send a handful) */
const NEGOTIATED_ENTRIES = 256;

/**
 * The coding to answer with: the accepted one with the highest q-value, br before gzip before
 * identity on a tie. `*` stands for any coding not listed; identity is acceptable unless refused
 * (`identity;q=0`, or `*;q=0` without identity listed), and comes after the codings listed when
 * not listed itself. When nothing listed is acceptable the
 * body goes out uncoded anyway (RFC 9110 allows it, and an error helps nobody).
 */
export function negotiateEncoding(header: string | undefined): ContentCoding {
  if (header === undefined || header === '') return 'identity';
  let coding = negotiated.get(header);
  if (coding === undefined) {
    coding = parse(header);
    if (negotiated.size >= NEGOTIATED_ENTRIES) negotiated.clear();
    negotiated.set(header, coding);
  }
  return coding;
}

function parse(header: string): ContentCoding {
  const q = new Map<string, number>();
  for (const part of header.split(',')) {
    const [rawName, ...params] = part.split(';');
    const name = rawName!.trim().toLowerCase();
    if (name === '') continue;
    let weight = 1;
    for (const param of params) {
      const [k, v] = param.split('=');
      if (k?.trim().toLowerCase() !== 'q') continue;
      const n = Number(v?.trim());
      weight = Number.isFinite(n) ? Math.min(1, Math.max(0, n)) : 0;
    }
    // a coding listed twice keeps its best weight
    q.set(name, Math.max(weight, q.get(name) ?? 0));
  }
  // x-gzip is gzip (RFC 9110 §8.4.1.3)
  if (q.has('x-gzip')) q.set('gzip', Math.max(q.get('gzip') ?? 0, q.get('x-gzip')!));
  const star = q.get('*');
  // identity not listed: acceptable (unless `*;q=0`), but after any coding the client listed
  const weight = (c: ContentCoding): number => q.get(c) ?? (c === 'identity' ? (star ?? 0.001) : (star ?? 0));
  let best: ContentCoding = 'identity';
  let bestWeight = 0;
  for (const c of CODINGS) {
    const w = weight(c);
    if (w > bestWeight) {
      best = c;
      bestWeight = w;
    }
  }
  return best;
}

const gzipAsync = promisify(gzip);
const brotliAsync = promisify(brotliCompress);

/**
 * The body in a coding, on the thread pool. Brotli at quality 5 and gzip at level 6: a good
 * ratio for JSON at a few milliseconds per megabyte; the result is cached with the body.
 */
export function compress(body: Buffer, coding: Coding): Promise<Buffer> {
  if (coding === 'gzip') return gzipAsync(body, { level: 6 });
  return brotliAsync(body, {
    params: {
      [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
      [constants.BROTLI_PARAM_QUALITY]: 5,
      [constants.BROTLI_PARAM_SIZE_HINT]: body.byteLength,
    },
  });
}

/** The ETag of a coded representation: the identity ETag's opaque part with the coding after it. */
export function codedEtag(etag: string, coding: Coding): string {
  return `${etag.slice(0, -1)}-${coding}"`;
}
