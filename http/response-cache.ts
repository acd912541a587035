// Serialized bodies per route + normalized query + data version, so a repeated request costs a
// map lookup instead of filtering and JSON.stringify (see performance-anchors: 69k vs 22k req/s).
import { hash } from 'node:crypto';
import { codedEtag, compress, MIN_COMPRESSED_BYTES, type Coding, type ContentCoding } from './encoding.ts';

/** One representation of a body: its bytes in one content coding and the ETag naming them. */
export interface Representation {
  readonly body: Buffer;
  readonly etag: string;
  readonly coding: ContentCoding;
}

export interface CachedBody extends Representation {
  /** the coded representations made so far, each made once (the first request asking waits for it) */
  coded?: Partial<Record<Coding, Representation | Promise<Representation>>>;
}

/** Bodies this small are only ever sent uncoded, so their answers do not vary with Accept-Encoding. */
export function compressible(body: Buffer): boolean {
  return body.byteLength >= MIN_COMPRESSED_BYTES;
}

/**
 * The body in `coding`, compressed on first use and kept with the body. A Promise only while the
 * first compression runs.
 */
export function representation(entry: CachedBody, coding: ContentCoding): Representation | Promise<Representation> {
  if (coding === 'identity' || !compressible(entry.body)) return entry;
  entry.coded ??= {};
  const coded = entry.coded;
  const made = coded[coding];
  if (made) return made;
  const pending = compress(entry.body, coding).then(
    (body): Representation => {
      const rep: Representation = { body, etag: codedEtag(entry.etag, coding), coding };
      coded[coding] = rep;
      return rep;
    },
    (err: unknown) => {
      // a failed compression is tried again by the next request
      delete coded[coding];
      throw err;
    },
  );
  coded[coding] = pending;
  return pending;
}

interface Entry extends CachedBody {
  /** the route's data version the body was made from (CacheSpec.version()) */
  token: string | number;
  expiresAtMs: number;
  /** `inserts` when the entry last moved to the young end of the map */
  movedAt: number;
}

export function etagOf(body: Buffer | string): string {
  return `"${hash('sha1', body, 'base64url').slice(0, 22)}"`;
}

/** RFC 9110 If-None-Match with weak comparison: `*` or any listed tag. */
export function matchesIfNoneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  const opaque = etag.startsWith('W/') ? etag.slice(2) : etag;
  for (const part of header.split(',')) {
    const tag = part.trim();
    if ((tag.startsWith('W/') ? tag.slice(2) : tag) === opaque) return true;
  }
  return false;
}

export class ResponseCache {
  private readonly entries = new Map<string, Entry>();
  /** entries put at the young end so far (new or moved) */
  private inserts = 0;
  hits = 0;
  misses = 0;

  constructor(private readonly maxEntries: number) {}

  get(key: string, token: string | number, nowMs: number): CachedBody | undefined {
    const entry = this.entries.get(key);
    if (!entry || entry.token !== token || entry.expiresAtMs <= nowMs) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    // Map keeps insertion order, so the first key is the least recently used. An entry moves to
    // the young end only once it has aged by half the cache: a hot body is never evicted, and a
    // hit does not pay a delete and an insert every time.
    if (this.inserts - entry.movedAt >= this.maxEntries >> 1) {
      this.entries.delete(key);
      this.entries.set(key, entry);
      entry.movedAt = ++this.inserts;
    }
    return entry;
  }

  set(key: string, token: string | number, body: Buffer, ttlMs: number, nowMs: number): CachedBody {
    const entry: Entry = {
      body,
      etag: etagOf(body),
      coding: 'identity',
      token,
      expiresAtMs: nowMs + ttlMs,
      movedAt: ++this.inserts,
    };
    this.entries.delete(key);
    this.entries.set(key, entry);
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
    return entry;
  }

  get size(): number {
    return this.entries.size;
  }
}
