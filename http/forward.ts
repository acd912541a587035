// An edge node's answer for the paths it does not serve itself (history: reliability, webhooks,
// exports, account and usage, the status page and dashboard): the request goes on to the ingest
// node, which holds the DuckDB file, and its answer comes back as it is. The ingest node
// authenticates and counts the request (its rate windows are the broker's, shared with every
// edge, so a forwarded request counts once, and it meters into its own database), so the edge
// passes the request through untouched rather than admitting it twice.
//
// Bodies are streamed both ways with backpressure (an export download is pulled a chunk at a
// time as the client's socket takes it). A refused connection or no answer within the timeout
// is 503 ingest_unavailable with Retry-After; the edge's own paths keep answering meanwhile.
import { Agent, request as httpRequest, type IncomingMessage } from 'node:http';
import { ApiError } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import { baseHeaders, type HeaderList } from './headers.ts';
import { renderProblem } from './problem.ts';
import type { Handler } from './server.ts';
import type { ApiRequest, ApiResponse, PipedBody } from './types.ts';

/** Hop-by-hop headers (RFC 9110 7.6.1) and what the edge sets itself: never passed on. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'proxy-authenticate',
  'proxy-authorization',
  'host',
  'content-length',
]);

export interface ForwardOptions {
  /** the ingest node's base URL (http://host:port), asked for on every forward: it may move */
  target: () => Promise<string | null> | string | null;
  /** the edge's own table: a path it serves is never forwarded */
  servesLocally: (method: string, path: string) => boolean;
  /** no response head within this: 503 (default 10 s) */
  timeoutMs?: number;
  /** Retry-After of a 503, seconds (default 5) */
  retryAfterS?: number;
  log?: Logger;
}

/** Wraps the edge's application: its own paths as before, the rest forwarded to the ingest node. */
export class ForwardingHandler implements Handler {
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 64 });
  private sequence = 0;
  forwarded = 0;
  failed = 0;

  constructor(
    private readonly local: Handler,
    private readonly options: ForwardOptions,
  ) {}

  handle(req: ApiRequest): Promise<ApiResponse> {
    if (this.options.servesLocally(req.method, req.path)) return this.local.handle(req);
    return this.forward(req);
  }

  handleNow(req: ApiRequest): ApiResponse | Promise<ApiResponse> {
    if (this.options.servesLocally(req.method, req.path)) {
      return this.local.handleNow ? this.local.handleNow(req) : this.local.handle(req);
    }
    return this.forward(req);
  }

  async close(): Promise<void> {
    await this.local.close();
    this.agent.destroy();
  }

  private async forward(req: ApiRequest): Promise<ApiResponse> {
    const requestId = `req_fwd_${(++this.sequence).toString(36)}`;
    let base: string | null;
    try {
      base = await this.options.target();
    } catch (err) {
      this.options.log?.warn({ err }, 'the ingest node address could not be read');
      base = null;
    }
    if (!base) return this.unavailable(req, requestId, 'The ingest node has not announced its address; retry shortly.');
    const url = new URL(`${req.path}${req.query ? `?${req.query}` : ''}`, base);
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) if (!HOP_BY_HOP.has(name)) headers[name] = value;
    if (req.body) headers['content-length'] = String(req.body.byteLength);
    try {
      const upstream = await this.send(url, req.method, headers, req.body);
      this.forwarded++;
      return this.relay(req, upstream);
    } catch (err) {
      this.failed++;
      this.options.log?.warn({ err, path: req.path }, 'forwarding to the ingest node failed');
      return this.unavailable(
        req,
        requestId,
        'The ingest node, which serves this path, is not answering; retry shortly.',
      );
    }
  }

  private send(
    url: URL,
    method: string,
    headers: Record<string, string>,
    body: Uint8Array | undefined,
  ): Promise<IncomingMessage> {
    return new Promise((resolve, reject) => {
      const out = httpRequest(
        url,
        { method, headers, agent: this.agent, timeout: this.options.timeoutMs ?? 10_000 },
        resolve,
      );
      out.on('timeout', () => out.destroy(new Error(`no answer within ${this.options.timeoutMs ?? 10_000} ms`)));
      out.on('error', reject);
      out.end(body);
    });
  }

  private relay(req: ApiRequest, upstream: IncomingMessage): ApiResponse | Promise<ApiResponse> {
    const headers: HeaderList = [];
    for (let i = 0; i < upstream.rawHeaders.length; i += 2) {
      const name = upstream.rawHeaders[i]!;
      if (!HOP_BY_HOP.has(name.toLowerCase())) headers.push([name, upstream.rawHeaders[i + 1]!]);
    }
    headers.push(['Via', '1.1 transit-api-edge']);
    const declared = upstream.headers['content-length'];
    const length = declared === undefined ? null : Number(declared);
    const status = upstream.statusCode ?? 502;
    if (req.method === 'HEAD' || status === 204 || status === 304) {
      upstream.resume();
      // HEAD: the length a GET would send (the socket layer writes it from the piped body's length)
      if (req.method === 'HEAD' && length !== null && Number.isSafeInteger(length)) {
        return {
          status,
          headers,
          body: '',
          omitBody: true,
          piped: { length, next: async () => null, cancel: () => undefined },
        };
      }
      return { status, headers, body: '', omitBody: req.method === 'HEAD' };
    }
    if (length === null || !Number.isSafeInteger(length)) {
      // our own server always sends a length; anything else is read whole
      return this.buffered(upstream, headers);
    }
    return { status, headers, body: '', piped: pipedBody(upstream, length) };
  }

  private async buffered(upstream: IncomingMessage, headers: HeaderList): Promise<ApiResponse> {
    const chunks: Buffer[] = [];
    for await (const chunk of upstream) chunks.push(chunk as Buffer);
    return { status: upstream.statusCode ?? 502, headers, body: Buffer.concat(chunks) };
  }

  private unavailable(req: ApiRequest, requestId: string, detail: string): ApiResponse {
    const retryAfter = String(this.options.retryAfterS ?? 5);
    const problem = renderProblem(new ApiError('ingest_unavailable', detail), requestId, req.path);
    return {
      status: 503,
      headers: [...baseHeaders(requestId, null), ...problem.headers, ['Retry-After', retryAfter]],
      body: req.method === 'HEAD' ? '' : problem.body,
      omitBody: req.method === 'HEAD' || undefined,
    };
  }
}

/** An upstream answer's body, pulled a chunk at a time (the socket stays paused in between). */
function pipedBody(upstream: IncomingMessage, length: number): PipedBody {
  const chunks = upstream[Symbol.asyncIterator]();
  return {
    length,
    async next() {
      const { value, done } = await chunks.next();
      return done ? null : (value as Buffer);
    },
    cancel() {
      // read whole: the keep-alive socket goes back to the pool; otherwise it is closed
      if (!upstream.complete) upstream.destroy();
    },
  };
}
