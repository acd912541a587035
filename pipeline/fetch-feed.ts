// One fetch of a feed body over http(s) or from a file://, with a deadline, a size cap and
// conditional GET; `FeedFetcher` adds the per-feed memory that makes an unchanged feed quiet.
import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { FeedConfig } from '../core/config.ts';
import type { PollStatus, RejectReason } from '../core/types.ts';

export interface FetchRequest {
  url: string;
  timeout_ms: number;
  max_bytes: number;
  headers: Record<string, string>;
  etag: string | null;
  last_modified: string | null;
}

export type FailedStatus = Extract<PollStatus, 'http_error' | 'timeout' | 'network_error' | 'too_large'>;

export type RawFetch =
  | { kind: 'body'; body: Uint8Array; http_status: number | null; etag: string | null; last_modified: string | null }
  | { kind: 'not_modified'; http_status: number | null }
  | {
      kind: 'failed';
      status: FailedStatus;
      reason: RejectReason;
      http_status: number | null;
      bytes: number;
      error: string;
    };

export type FetchFn = (request: FetchRequest) => Promise<RawFetch>;

export async function fetchBody(request: FetchRequest): Promise<RawFetch> {
  return request.url.startsWith('file://') ? fetchFile(request) : fetchHttp(request);
}

const tooLarge = (bytes: number, max: number, http: number | null): RawFetch => ({
  kind: 'failed',
  status: 'too_large',
  reason: 'too_large',
  http_status: http,
  bytes,
  error: `body over max_bytes (${max})`,
});

async function fetchHttp(request: FetchRequest): Promise<RawFetch> {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, request.timeout_ms);
  const headers: Record<string, string> = { ...request.headers };
  if (request.etag) headers['if-none-match'] = request.etag;
  if (request.last_modified) headers['if-modified-since'] = request.last_modified;
  let httpStatus: number | null = null;
  let received = 0;
  let expected: number | null = null;
  try {
    const res = await fetch(request.url, { headers, signal: controller.signal, redirect: 'follow' });
    httpStatus = res.status;
    if (res.status === 304) {
      await res.body?.cancel().catch(() => undefined);
      return { kind: 'not_modified', http_status: 304 };
    }
    if (!res.ok) {
      await res.body?.cancel().catch(() => undefined);
      return {
        kind: 'failed',
        status: 'http_error',
        reason: 'http_error',
        http_status: res.status,
        bytes: 0,
        error: `HTTP ${res.status}`,
      };
    }
    const length = res.headers.get('content-length');
    expected = length !== null && /^\d+$/.test(length) ? Number(length) : null;
    if (expected !== null && expected > request.max_bytes) {
      controller.abort();
      return tooLarge(expected, request.max_bytes, res.status);
    }
    const chunks: Uint8Array[] = [];
    if (res.body) {
      const reader = res.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        received += value.byteLength;
        if (received > request.max_bytes) {
          controller.abort();
          return tooLarge(received, request.max_bytes, res.status);
        }
        chunks.push(value);
      }
    }
    return {
      kind: 'body',
      body: concat(chunks, received),
      http_status: res.status,
      etag: res.headers.get('etag'),
      last_modified: res.headers.get('last-modified'),
    };
  } catch (err) {
    if (timedOut) {
      return {
        kind: 'failed',
        status: 'timeout',
        reason: 'timeout',
        http_status: httpStatus,
        bytes: received,
        error:
          `no complete response within ${request.timeout_ms} ` +
          `ms${httpStatus === null ? '' : ` (${received} bytes of body read)`}`,
      };
    }
    const message = describe(err);
    if (httpStatus !== null) {
      // headers arrived, the body did not: the connection dropped mid-body
      return {
        kind: 'failed',
        status: 'network_error',
        reason: 'truncated_body',
        http_status: httpStatus,
        bytes: received,
        error: `body cut short after ${received}${expected === null ? '' : ` of ${expected}`} bytes: ${message}`,
      };
    }
    return {
      kind: 'failed',
      status: 'network_error',
      reason: 'network_error',
      http_status: null,
      bytes: 0,
      error: message,
    };
  } finally {
    clearTimeout(timer);
  }
}

/** Files get the same contract; size and mtime stand in for an ETag so an untouched file is not read. */
async function fetchFile(request: FetchRequest): Promise<RawFetch> {
  let path: string;
  try {
    path = fileURLToPath(request.url);
    const info = await stat(path);
    const etag = `"${info.size}-${Math.trunc(info.mtimeMs)}"`;
    if (request.etag === etag) return { kind: 'not_modified', http_status: null };
    if (info.size > request.max_bytes) return tooLarge(info.size, request.max_bytes, null);
    const body = await readFile(path);
    // the file may have grown between stat and read
    if (body.byteLength > request.max_bytes) return tooLarge(body.byteLength, request.max_bytes, null);
    return { kind: 'body', body, http_status: null, etag, last_modified: info.mtime.toUTCString() };
  } catch (err) {
    return {
      kind: 'failed',
      status: 'network_error',
      reason: 'network_error',
      http_status: null,
      bytes: 0,
      error: describe(err),
    };
  }
}

function concat(chunks: Uint8Array[], total: number): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(total);
  let offset = 0;
  for (const c of chunks) {
    out.set(c, offset);
    offset += c.byteLength;
  }
  return out;
}

function describe(err: unknown): string {
  const e = err as Error & { cause?: Error & { code?: string } };
  const cause = e?.cause ? `: ${e.cause.code ?? e.cause.message}` : '';
  return `${e?.message ?? String(err)}${cause}`;
}

/** The body hash that identifies a snapshot, here and in the store (feed_snapshots). */
export function sha256(body: Uint8Array): string {
  return createHash('sha256').update(body).digest('hex');
}

export type FetchOutcome =
  | { kind: 'body'; body: Uint8Array; http_status: number | null /** SHA-256, hex */; hash: string; commit(): void }
  | { kind: 'unchanged'; http_status: number | null; bytes: number }
  | Extract<RawFetch, { kind: 'failed' }>;

/**
 * A feed's conditional-GET validators and the hash of the last body that was processed. The
 * caller commits a body once it was processed, so a body that failed to decode is tried again
 * rather than reported unchanged.
 */
export class FeedFetcher {
  private etag: string | null = null;
  private lastModified: string | null = null;
  private hash: string | null = null;
  private lastBytes = 0;

  constructor(
    private readonly feed: FeedConfig,
    private readonly fetchImpl: FetchFn = fetchBody,
  ) {}

  async fetch(): Promise<FetchOutcome> {
    const raw = await this.fetchImpl({
      url: this.feed.url,
      timeout_ms: this.feed.timeout_s * 1000,
      max_bytes: this.feed.max_bytes,
      headers: this.feed.headers,
      etag: this.hash === null ? null : this.etag,
      last_modified: this.hash === null ? null : this.lastModified,
    });
    if (raw.kind === 'failed') return raw;
    if (raw.kind === 'not_modified') return { kind: 'unchanged', http_status: raw.http_status, bytes: 0 };
    const hash = sha256(raw.body);
    if (hash === this.hash) {
      this.etag = raw.etag;
      this.lastModified = raw.last_modified;
      return { kind: 'unchanged', http_status: raw.http_status, bytes: raw.body.byteLength };
    }
    return {
      kind: 'body',
      body: raw.body,
      http_status: raw.http_status,
      hash,
      commit: () => {
        this.hash = hash;
        this.etag = raw.etag;
        this.lastModified = raw.last_modified;
        this.lastBytes = raw.body.byteLength;
      },
    };
  }

  /** Size of the last processed body, reported for unchanged polls. */
  get committedBytes(): number {
    return this.lastBytes;
  }
}
