// The HTTP application without a socket: the route table, the request chain, inject() for
// tests, and close() for what must be flushed on shutdown. What the table holds (documentation
// routes included) is the composition root's choice (app/api.ts).
import type { KeyAuthenticator } from '../accounts/auth.ts';
import { RequestChain, type RequestChainOptions } from './request-chain.ts';
import type { ApiRequest, ApiResponse, RouteDef, StreamSink, StreamWriteResult } from './types.ts';

export interface RequestHandlerOptions extends Omit<RequestChainOptions, 'routes'> {
  routes: readonly RouteDef[];
  /** run by close() after the meter is flushed (timers, directory reloads, …) */
  onClose?: Array<() => void | Promise<void>>;
}

export interface InjectRequest {
  method?: string;
  /** path and query, e.g. /api/v1/alerts?limit=5 */
  url: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
}

export interface InjectedStream {
  readonly chunks: string[];
  readonly closed: boolean;
  /** the client goes away */
  close(): void;
}

export interface InjectResponse {
  status: number;
  /** lower-case names */
  headers: Record<string, string>;
  body: string;
  /** the body as bytes (file downloads are binary) */
  bytes: Buffer;
  json<T = unknown>(): T;
  stream?: InjectedStream;
}

export class RequestHandler {
  readonly chain: RequestChain;
  readonly routes: readonly RouteDef[];
  private closing: Promise<void> | null = null;

  constructor(private readonly options: RequestHandlerOptions) {
    this.routes = options.routes;
    this.chain = new RequestChain({ ...options, routes: options.routes });
  }

  handle(req: ApiRequest): Promise<ApiResponse> {
    return this.chain.handle(req);
  }

  handleNow(req: ApiRequest): ApiResponse | Promise<ApiResponse> {
    return this.chain.handleNow(req);
  }

  /** A route of this table answers `method path` (a 405 counts: the path is this table's). */
  serves(method: string, path: string): boolean {
    return this.chain.serves(method, path);
  }

  get keys(): KeyAuthenticator {
    return this.options.keys;
  }

  /** The whole request chain without a socket. */
  async inject(request: InjectRequest): Promise<InjectResponse> {
    const q = request.url.indexOf('?');
    const headers: Record<string, string> = Object.create(null) as Record<string, string>;
    for (const [name, value] of Object.entries(request.headers ?? {})) headers[name.toLowerCase()] = value;
    const body = typeof request.body === 'string' ? Buffer.from(request.body, 'utf8') : request.body;
    const response = await this.handle({
      method: request.method ?? 'GET',
      path: q < 0 ? request.url : request.url.slice(0, q),
      query: q < 0 ? '' : request.url.slice(q + 1),
      headers,
      ...(body ? { body } : {}),
    });
    const out: Record<string, string> = {};
    for (const [name, value] of response.headers) {
      const key = name.toLowerCase();
      out[key] = out[key] === undefined ? value : `${out[key]}, ${value}`;
    }
    let bytes: Buffer;
    if (response.file) {
      const { handle, start, length } = response.file;
      try {
        bytes = Buffer.alloc(response.omitBody ? 0 : length);
        if (!response.omitBody) await handle.read(bytes, 0, length, start);
      } finally {
        await handle.close();
      }
    } else {
      bytes = response.omitBody ? Buffer.alloc(0) : Buffer.from(response.body);
    }
    const text = bytes.toString('utf8');
    const result: InjectResponse = {
      status: response.status,
      headers: out,
      body: text,
      bytes,
      json: () => JSON.parse(text),
    };
    if (response.stream) {
      const sink = new MemorySink();
      response.stream.start(sink);
      result.stream = sink;
    }
    return result;
  }

  /** Flushes metering and stops timers; in-flight requests are the socket layer's to wait for. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.options.meter.close();
      await this.options.keys.close();
      for (const fn of this.options.onClose ?? []) await fn();
    })();
    return this.closing;
  }
}

/** A stream subscriber for inject(): keeps what is written (decoded), never backs up. */
class MemorySink implements StreamSink, InjectedStream {
  readonly chunks: string[] = [];
  closed = false;
  private readonly listeners: Array<() => void> = [];

  write(chunk: Buffer): StreamWriteResult {
    if (this.closed) return 'closed';
    this.chunks.push(chunk.toString('utf8'));
    return 'ok';
  }

  bufferedBytes(): number {
    return 0;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const listener of this.listeners.splice(0)) listener();
  }

  onClose(listener: () => void): void {
    if (this.closed) listener();
    else this.listeners.push(listener);
  }
}
