// The contract between the request chain, the route table and the socket layer.
import type { FileHandle } from 'node:fs/promises';
import type { z } from 'zod';
import type { ErrorCode } from '../core/errors.ts';
import type { AuthenticatedKey } from '../accounts/auth.ts';
import type { CursorValue } from './cursor.ts';
import type { HeaderList, HeaderRun, MeterUnit } from './headers.ts';
import type { Plan } from '../accounts/plans.ts';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** A request as the socket layer hands it over (or as a test builds it). */
export interface ApiRequest {
  /** as sent; the request chain upper-cases it */
  method: string;
  /** raw path, still percent-encoded, without the query */
  path: string;
  /** raw query string without the leading `?` */
  query: string;
  /** lower-case names */
  headers: Readonly<Record<string, string>>;
  body?: Uint8Array;
}

export interface ApiResponse {
  status: number;
  headers: HeaderList;
  /** `headers` starts with this run's (HeaderRun.start()): the socket layer writes them in one call */
  run?: HeaderRun;
  body: string | Uint8Array;
  /** HEAD: headers as for GET, no body */
  omitBody?: boolean;
  /** set for event streams: the socket layer writes the headers, then calls start */
  stream?: StreamReply;
  /** set for file downloads: the socket layer streams it (or, for HEAD, only closes it) */
  file?: FileBody;
  /** set for a body read from elsewhere (an answer forwarded from the ingest node) */
  piped?: PipedBody;
}

/**
 * A body of known length produced elsewhere, pulled a chunk at a time as the socket takes them.
 * Whoever receives it in an ApiResponse either reads it to the end or calls cancel().
 */
export interface PipedBody {
  /** the Content-Length */
  readonly length: number;
  /** the next chunk; null at the end */
  next(): Promise<Uint8Array | null>;
  cancel(): void;
}

/** A byte range of an open file; whoever receives it in an ApiResponse closes the handle. */
export interface FileBody {
  readonly handle: FileHandle;
  /** first byte sent */
  readonly start: number;
  /** bytes sent; the Content-Length */
  readonly length: number;
}

export type StreamWriteResult =
  /** accepted; nothing known to be queued beyond this chunk */
  | 'ok'
  /** accepted but queued in user space; bufferedBytes() says how much */
  | 'backpressure'
  /** the connection is gone; the chunk was dropped */
  | 'closed';

/**
 * One subscriber's connection, implemented by the socket layer (and by inject for tests). The
 * shape is stream/sse-sink.ts's SseSink plus close notification, so the hub writes to it as is.
 */
export interface StreamSink {
  /**
   * Queues whole SSE blocks. The same Buffer is written to many sinks: the sink must not modify
   * it. Never throws; returns 'closed' once the connection is gone.
   */
  write(chunk: Buffer): StreamWriteResult;
  /** bytes accepted by write() and not yet handed to the kernel (an upper bound) */
  bufferedBytes(): number;
  readonly closed: boolean;
  /** 'end': finish after what is queued; 'abort': drop the connection and its queue now */
  close(mode: 'end' | 'abort'): void;
  /** Runs once when the connection ends for any reason (at once if it already has). */
  onClose(listener: () => void): void;
}

/** What an event-stream endpoint answers: headers now, bytes through the sink later. */
export class StreamReply {
  constructor(
    readonly start: (sink: StreamSink) => void,
    readonly headers: HeaderList = [],
    /**
     * Called instead of start when the response will never be written (the client left while
     * the request was processed): what was reserved for the stream (an allowance slot) is freed.
     */
    readonly abandon?: () => void,
  ) {}
}

/** A non-JSON answer (HTML, YAML, text) or a JSON answer with a status other than the route's. */
export class Reply {
  constructor(
    readonly status: number,
    readonly contentType: string,
    readonly body: string | Uint8Array,
    readonly headers: HeaderList = [],
  ) {}
}

/**
 * A file answer (200, or 206 for a byte range). The body is streamed from disk with backpressure,
 * so a multi-gigabyte export costs one chunk of memory, not its size.
 */
export class FileReply {
  constructor(
    readonly status: 200 | 206,
    readonly contentType: string,
    readonly file: FileBody,
    readonly headers: HeaderList = [],
  ) {}
}

export interface PageRequest {
  limit: number;
  /** sort key of the last row of the previous page */
  after: CursorValue[] | null;
  /** encodes the cursor for the page after a row with this key */
  cursorFor(key: readonly CursorValue[]): string;
}

export interface RequestContext<Q = Record<string, unknown>, P = Record<string, string>, B = unknown> {
  readonly requestId: string;
  readonly nowMs: number;
  readonly method: string;
  readonly path: string;
  readonly query: Q;
  readonly params: P;
  readonly body: B;
  /** null on public routes */
  readonly key: AuthenticatedKey | null;
  readonly headers: Readonly<Record<string, string>>;
  /** set on paginated routes */
  readonly page: PageRequest | null;
  /** this request's URL (normalized query) with some parameters replaced or removed */
  url(overrides?: Record<string, string | null>): string;
}

export type HandlerResult = unknown;

export interface RouteDef {
  /** operationId; unique */
  readonly id: string;
  readonly method: HttpMethod;
  /** OpenAPI template: /api/v1/bus/{route_id}/realtime */
  readonly path: string;
  readonly summary: string;
  readonly description?: string;
  readonly tags: readonly string[];
  /** 'none' for public pages (docs, status) */
  readonly auth: 'key' | 'none';
  /** lowest plan that may call it */
  readonly plan?: Plan;
  /** false when test keys are refused (403 forbidden_plan) */
  readonly testKeys?: boolean;
  /** null: not metered (public pages) */
  readonly meter: MeterUnit | null;
  readonly params?: z.ZodObject;
  readonly query?: z.ZodObject;
  readonly body?: z.ZodType;
  /** JSON body schema of the success response; documentation-only for non-JSON routes */
  readonly response: z.ZodType;
  /** default application/json; other types are answered with a Reply */
  readonly contentType?: string;
  readonly successStatus?: number;
  /** errors this route can produce beyond the ones every route can (documented in OpenAPI) */
  readonly errors?: readonly ErrorCode[];
  /** adds limit and cursor; the handler reads ctx.page */
  readonly paginated?: boolean;
  /** also answers as an event stream (Accept: text/event-stream or format=sse) */
  readonly sse?: boolean;
  /** always an event stream: the handler returns a StreamReply */
  readonly stream?: boolean;
  /**
   * For an event stream: each SSE event name and the JSON schema of its `data:` (schemas with a
   * meta id, documented as components and listed in the operation's `x-sse-events`).
   */
  readonly streamEvents?: Readonly<Record<string, z.ZodType>>;
  /** a file download (FileReply): documented as binary in these media types, with 206 and 304 */
  readonly download?: { readonly contentTypes: readonly string[] };
  /**
   * Its answers carry signed links (capabilities that work without a key, e.g. export downloads):
   * `Cache-Control: no-store` instead of `private, no-cache`, so no browser or proxy keeps them.
   */
  readonly noStore?: boolean;
  /** enables the serialized-body cache and ETags keyed by this version */
  readonly cache?: {
    /** read before the request is checked further (a cursor is checked only on a miss): no request context */
    version(): string | number;
    /** for bodies that also depend on the clock (ages, freshness) */
    ttlMs?: number;
  };
  handler(ctx: RequestContext<unknown, unknown, unknown>): HandlerResult | Promise<HandlerResult>;
}

/** The SSE form of routes (http/sse-routes.ts), opened after the request chain's auth, plan and validation. */
export interface StreamProvider {
  open(request: StreamOpenRequest): StreamReply | Promise<StreamReply>;
}

export interface StreamOpenRequest {
  readonly route: RouteDef;
  readonly key: AuthenticatedKey;
  readonly ctx: RequestContext;
  /** route + path + normalized filters, key excluded: one shared stream per distinct query */
  readonly scope: string;
  /** Last-Event-ID header or last_event_id parameter */
  readonly lastEventId: string | null;
  /** the JSON body the endpoint returns for this query right now */
  render(): Promise<unknown>;
}
