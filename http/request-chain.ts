// The request chain, the same for sockets and inject(): route → auth → rate limit → plan →
// validate → handler (or event stream) → render → headers → metering. Every failure on the way
// becomes a problem response here, so no input can escape as a crash.
import { randomBytes } from 'node:crypto';
import { ApiError } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import type { RequestObserver } from '../core/telemetry.ts';
import type { AuthenticatedKey, KeyAuthenticator } from '../accounts/auth.ts';
import { compileRoute, type CompiledRoute } from './compile.ts';
import { Context, PageCursor } from './context.ts';
import type { CursorCodec } from './cursor.ts';
import { assertKnownIds, type KnownIds } from './known-ids.ts';
import { negotiateEncoding } from './encoding.ts';
import {
  apiRun,
  NO_STORE,
  PREFLIGHT_HEADERS,
  pushRequestHeaders,
  sharedHeader,
  type HeaderList,
  type HeaderRun,
  type MeterUnit,
} from './headers.ts';
import type { RateDecision, RateLimiter } from '../accounts/limiter.ts';
import type { Meter } from '../accounts/meter.ts';
import { DEFAULT_PAGE_SIZE, PLAN_LIMITS, planIncludes } from '../accounts/plans.ts';
import { renderProblem, toApiError } from './problem.ts';
import {
  compressible,
  etagOf,
  matchesIfNoneMatch,
  representation,
  ResponseCache,
  type CachedBody,
  type Representation,
} from './response-cache.ts';
import { Router, type RouteMatch } from './router.ts';
import {
  FileReply,
  Reply,
  StreamReply,
  type ApiRequest,
  type ApiResponse,
  type PageRequest,
  type RequestContext,
  type RouteDef,
  type StreamProvider,
} from './types.ts';
import { parseJsonBody, validate, type ParsedQuery } from './validate.ts';
import { QueryMemo, scopeQuery, type QueryEntry } from './query-memo.ts';
import { authenticateRequest, rateLimited, wantsEventStream } from './request-auth.ts';

export interface RequestChainOptions {
  routes: readonly RouteDef[];
  keys: KeyAuthenticator;
  limiter: RateLimiter;
  meter: Meter;
  cursors: CursorCodec;
  clock: () => number;
  log: Logger;
  /** per request: route id, status, latency (metrics) */
  observer?: RequestObserver;
  streams?: StreamProvider;
  /** prefix of links in bodies; empty gives root-relative links */
  baseUrl?: string;
  maxBodyBytes: number;
  responseCacheEntries: number;
  /** ids the filters may name; without it, any id is accepted (the documentation app) */
  knownIds?: KnownIds;
}

const UNMATCHED = '(unmatched)';
const QUERY_MEMO_ENTRIES = 5_000;
const JSON_TYPE = 'application/json';
// shared, never modified: allocated (and encoded by the socket layer) once instead of per response
const JSON_CONTENT_TYPE = sharedHeader('Content-Type', JSON_TYPE);
const REVALIDATE = sharedHeader('Cache-Control', 'private, no-cache');
const VARY = sharedHeader('Vary', 'Accept-Encoding');
const CODED: Record<'br' | 'gzip', [string, string]> = {
  br: sharedHeader('Content-Encoding', 'br'),
  gzip: sharedHeader('Content-Encoding', 'gzip'),
};
const NOT_MODIFIED_TAILS = [[REVALIDATE], [REVALIDATE, VARY]] as const;
const STREAM_TAIL = [
  sharedHeader('Content-Type', 'text/event-stream'),
  NO_STORE,
  sharedHeader('X-Accel-Buffering', 'no'),
] as const;
/**
 * The shared headers after the base run of a JSON answer: one constant list per coding, Vary and
 * caching (0: none, 1: revalidated by its ETag, 2: kept by no cache), so an answer picks its run
 * without building a list. Filled coding first, then Vary, then caching: jsonTail's index.
 */
const JSON_TAILS: ReadonlyArray<readonly [string, string][]> = (['identity', 'br', 'gzip'] as const).flatMap((coding) =>
  [false, true].flatMap((vary) =>
    [null, REVALIDATE, NO_STORE].map((caching) => {
      const tail = [JSON_CONTENT_TYPE];
      if (coding !== 'identity') tail.push(CODED[coding]);
      if (vary) tail.push(VARY);
      if (caching) tail.push(caching);
      return tail;
    }),
  ),
);
function jsonTail(coding: 'identity' | 'br' | 'gzip', vary: boolean, caching: 0 | 1 | 2): readonly [string, string][] {
  return JSON_TAILS[(coding === 'identity' ? 0 : coding === 'br' ? 6 : 12) + (vary ? 3 : 0) + caching]!;
}
const API_PREFIX = '/api/';

/** Per-request facts the final metering and header steps need, whatever happened before. */
interface RequestState {
  readonly requestId: string;
  readonly startedMs: number;
  /** monotonic, sub-millisecond: latencies of fast requests are fractions of a millisecond */
  readonly startedPerf: number;
  readonly method: string;
  endpoint: string;
  /** the matched route's id, for metrics */
  route: string;
  unit: MeterUnit | null;
  /** the route's answers carry signed links: Cache-Control no-store, never private, no-cache */
  noStore: boolean;
  key: AuthenticatedKey | null;
  decision: RateDecision | null;
  /** over the limit, let through only to see whether it is a 304 */
  limited?: boolean;
}

export class RequestChain {
  private readonly router = new Router<CompiledRoute>();
  private readonly cache: ResponseCache;
  private readonly queries = new QueryMemo(QUERY_MEMO_ENTRIES);
  private readonly idPrefix = randomBytes(4).toString('hex');
  private nextId = 0;
  private readonly log: Logger;
  readonly routes: readonly CompiledRoute[];

  constructor(private readonly options: RequestChainOptions) {
    this.log = options.log.child({ component: 'http' });
    const ids = new Set<string>();
    this.routes = options.routes.map((def) => {
      if (ids.has(def.id)) throw new Error(`duplicate route id ${def.id}`);
      ids.add(def.id);
      const compiled = compileRoute(def);
      this.router.add(def.method, def.path, compiled);
      return compiled;
    });
    this.cache = new ResponseCache(options.responseCacheEntries);
  }

  get cacheStats(): { hits: number; misses: number; size: number } {
    return { hits: this.cache.hits, misses: this.cache.misses, size: this.cache.size };
  }

  async handle(req: ApiRequest): Promise<ApiResponse> {
    return this.handleNow(req);
  }

  /**
   * As handle(), but answers at once (no Promise, no microtask hop) when every step on the way is
   * synchronous: a cached body for a known key, the common case. The socket layer then writes
   * the answer from inside uWS's request handler.
   */
  handleNow(req: ApiRequest): ApiResponse | Promise<ApiResponse> {
    const startedMs = this.options.clock();
    const state: RequestState = {
      requestId: `req_${this.idPrefix}${(this.nextId++).toString(36)}`,
      startedMs,
      startedPerf: performance.now(),
      method: typeof req.method === 'string' ? req.method.toUpperCase() : 'GET',
      endpoint: UNMATCHED,
      route: UNMATCHED,
      unit: null,
      noStore: false,
      key: null,
      decision: null,
    };
    let pending: ApiResponse | Promise<ApiResponse>;
    try {
      pending = this.process(req, state);
    } catch (err) {
      return this.finish(req, state, null, err);
    }
    if (pending instanceof Promise)
      return pending.then(
        (r) => this.finish(req, state, r, null),
        (err: unknown) => this.finish(req, state, null, err),
      );
    return this.finish(req, state, pending, null);
  }

  /** The last steps of every request, answered or failed: problems, metering, metrics, log. */
  private finish(req: ApiRequest, state: RequestState, answered: ApiResponse | null, failed: unknown): ApiResponse {
    let response: ApiResponse;
    if (answered && !(state.limited && answered.status !== 304)) {
      response = answered;
    } else {
      const failure = answered ? null : toApiError(failed, this.log, state.requestId);
      const error = state.limited ? rateLimited(state.key!, state.decision!) : failure!;
      response = this.problem(error, req, state);
    }
    const latencyMs = performance.now() - state.startedPerf;
    this.record(state, response, latencyMs);
    this.options.observer?.request(state.route, response.status, latencyMs / 1000);
    this.logRequest(state, req, response, latencyMs);
    return response;
  }

  /** A route answers `method path` (or refuses it with 405: the path is ours). */
  serves(method: string, path: string): boolean {
    if (method === 'OPTIONS') return true;
    return this.router.match(method === 'HEAD' ? 'GET' : method, path).kind !== 'not_found';
  }

  /** Synchronous as far as the steps are; the first one that waits continues in a Promise. */
  private process(req: ApiRequest, state: RequestState): ApiResponse | Promise<ApiResponse> {
    if (state.method === 'OPTIONS') {
      const run = apiRun(null, null).followedBy(PREFLIGHT_HEADERS);
      return { status: 204, headers: pushRequestHeaders(run.start(), state.requestId, null, 0), run, body: '' };
    }
    const head = state.method === 'HEAD';
    const match = this.router.match(head ? 'GET' : state.method, req.path);
    const compiled = match.kind === 'found' ? match.route : null;
    const def = compiled?.def;
    const isApi = def ? def.auth === 'key' : req.path.startsWith(API_PREFIX);
    if (def) {
      state.endpoint = def.path;
      state.route = def.id;
      state.noStore = def.noStore === true;
    }
    state.unit = def ? def.meter : isApi ? 'request' : null;

    // HEAD never opens a stream: it gets the JSON headers, or 406 on a stream-only endpoint
    const wantsStream = !!def && !head && (def.stream === true || (def.sse === true && wantsEventStream(req)));
    // a public stream (the status page) is not metered: no unit, no X-Meter-Unit header
    if (wantsStream && def.meter !== null) state.unit = 'connection-minute';

    if (!isApi) return this.routed(req, state, match, head, wantsStream);
    const authenticated = authenticateRequest(
      this.options.keys,
      req,
      wantsStream,
      !!def && (def.sse === true || def.stream === true),
      state.startedMs,
    );
    if (authenticated instanceof Promise) {
      return authenticated.then((key) => this.limited(req, state, match, head, wantsStream, key));
    }
    return this.limited(req, state, match, head, wantsStream, authenticated);
  }

  /**
   * One rule (docs/guides/api.md): every request with a valid key to a metered endpoint
   * takes one request from the window, whatever its answer (a refusal too, a stream opened or
   * refused too); only a 304 gives it back. Past the limit, a revalidation that would be a 304
   * still gets its 304: it would not have counted.
   */
  private limited(
    req: ApiRequest,
    state: RequestState,
    match: RouteMatch<CompiledRoute>,
    head: boolean,
    wantsStream: boolean,
    key: AuthenticatedKey,
  ): ApiResponse | Promise<ApiResponse> {
    state.key = key;
    if (state.unit !== null) {
      const taken = this.options.limiter.take(key.id, key.plan, state.startedMs);
      if (taken instanceof Promise) {
        return taken.then((decision) => this.taken(req, state, match, head, wantsStream, decision));
      }
      return this.taken(req, state, match, head, wantsStream, taken);
    }
    const peeked = this.options.limiter.peek(key.id, key.plan, state.startedMs);
    if (peeked instanceof Promise) {
      return peeked.then((decision) => {
        state.decision = decision;
        return this.routed(req, state, match, head, wantsStream);
      });
    }
    state.decision = peeked;
    return this.routed(req, state, match, head, wantsStream);
  }

  /** The window's decision on a metered request (a method, not a closure made per request). */
  private taken(
    req: ApiRequest,
    state: RequestState,
    match: RouteMatch<CompiledRoute>,
    head: boolean,
    wantsStream: boolean,
    decision: RateDecision,
  ): ApiResponse | Promise<ApiResponse> {
    state.decision = decision;
    if (!decision.allowed) {
      const def = match.kind === 'found' ? match.route.def : undefined;
      const revalidation = !wantsStream && !!def?.cache && req.headers['if-none-match'] !== undefined;
      if (!revalidation) throw rateLimited(state.key!, decision);
      state.limited = true;
    }
    return this.routed(req, state, match, head, wantsStream);
  }

  /** After the key and the window: the route's own checks, then the cache, the handler or the stream. */
  private routed(
    req: ApiRequest,
    state: RequestState,
    match: RouteMatch<CompiledRoute>,
    head: boolean,
    wantsStream: boolean,
  ): ApiResponse | Promise<ApiResponse> {
    if (match.kind === 'method_not_allowed') {
      throw new ApiError('method_not_allowed', `${state.method} is not allowed on ${req.path}`, {
        headers: { Allow: match.allow.join(', ') },
      });
    }
    if (match.kind !== 'found') throw new ApiError('not_found', `No endpoint at ${safePath(req.path)}`);
    const compiled = match.route;
    const def = compiled.def;

    const key = state.key;
    if (key && def.plan && !planIncludes(key.plan, def.plan)) {
      throw new ApiError('forbidden_plan', `${def.path} needs the ${def.plan} plan; this key is on ${key.plan}.`);
    }
    if (key?.test && def.testKeys === false) {
      throw new ApiError('forbidden_plan', `${def.path} is not available to test keys.`);
    }
    if (key && wantsStream && PLAN_LIMITS[key.plan].sse_streams === 0) {
      throw new ApiError('forbidden_plan', `The ${key.plan} plan has no event-stream allowance; use JSON or upgrade.`);
    }

    const params = (def.params ? validate(def.params, match.params) : {}) as Record<string, string>;
    const entry = this.queries.get(compiled, req.query);
    const { parsed } = entry;
    if (!wantsStream && parsed.values.api_key !== undefined) {
      throw new ApiError('invalid_parameter', 'api_key: accepted only on event streams', {
        errors: [
          {
            parameter: 'api_key',
            detail: compiled.hints.api_key ?? 'accepted only on event streams; use Authorization: Bearer',
          },
        ],
      });
    }
    // the directory changes, so ids are checked each time; which ones the query names, once
    const known = this.options.knownIds;
    if (known) for (const { name, kind, ids } of entry.ids) assertKnownIds(known, name, kind, ids);
    if (compiled.def.body) {
      return this.parseBody(req, compiled).then((body) =>
        this.answer(req, state, compiled, entry, params, body, head, wantsStream),
      );
    }
    return this.answer(req, state, compiled, entry, params, undefined, head, wantsStream);
  }

  private answer(
    req: ApiRequest,
    state: RequestState,
    compiled: CompiledRoute,
    entry: QueryEntry,
    params: Record<string, string>,
    body: unknown,
    head: boolean,
    wantsStream: boolean,
  ): ApiResponse | Promise<ApiResponse> {
    const def = compiled.def;
    const { parsed, query } = entry;
    // the plan's page size is checked first: a cached page does not tell who may read it
    const limit = def.paginated ? this.pageLimit(query, state) : 0;

    if (wantsStream)
      return this.openStream(
        compiled,
        this.context(req, state, compiled, parsed, query, params, body, limit),
        state,
        req,
        parsed,
      );
    if (def.stream) throw new ApiError('not_acceptable', 'This endpoint is an event stream.');

    const cacheSpec = def.cache;
    let cacheKey = '';
    let token: string | number = '';
    if (cacheSpec) {
      // a path without parameters is the route's own: its key is made once per query
      if (def.params) cacheKey = `${def.id}\n${req.path}\n${parsed.normalized}`;
      else {
        entry.cacheKey ??= `${def.id}\n${def.path}\n${parsed.normalized}`;
        cacheKey = entry.cacheKey;
      }
      token = cacheSpec.version();
      // a cursor is checked (and its signature computed) only on a miss: a cached page was made
      // from the same cursor, checked then, and a cursor's check never changes
      const hit = this.cache.get(cacheKey, token, state.startedMs);
      if (hit) return this.cachedResponse(state, req, hit, head);
    }
    return this.render(
      req,
      state,
      compiled,
      this.context(req, state, compiled, parsed, query, params, body, limit),
      head,
      cacheKey,
      token,
    );
  }

  /** A cache miss or an uncached route: the handler's result, serialized (and cached when it may be). */
  private async render(
    req: ApiRequest,
    state: RequestState,
    compiled: CompiledRoute,
    ctx: RequestContext,
    head: boolean,
    cacheKey: string,
    token: string | number,
  ): Promise<ApiResponse> {
    const def = compiled.def;
    const cacheSpec = def.cache;
    const result = await def.handler(ctx);
    if (result instanceof Reply) {
      const { run, headers } = this.head(state);
      headers.push(['Content-Type', result.contentType], ...result.headers);
      return { status: result.status, headers, run, body: result.body, omitBody: head };
    }
    if (result instanceof FileReply) {
      const { run, headers } = this.head(state);
      headers.push(['Content-Type', result.contentType], ...result.headers);
      return { status: result.status, headers, run, body: '', file: result.file, omitBody: head };
    }
    if (result instanceof StreamReply) throw new Error(`${def.id} returned a stream to a JSON request`);
    const bytes = Buffer.from(JSON.stringify(result), 'utf8');
    const status = def.successStatus ?? 200;
    if (cacheSpec && status === 200) {
      const cached = this.cache.set(
        cacheKey,
        token,
        bytes,
        cacheSpec.ttlMs ?? Number.POSITIVE_INFINITY,
        state.startedMs,
      );
      return this.cachedResponse(state, req, cached, head);
    }
    return this.jsonResponse(state, req, bytes, status === 200 ? etagOf(bytes) : null, head, status);
  }

  /**
   * A cached body in the coding the request accepts (compressed once per body and coding), with
   * `Vary: Accept-Encoding` wherever the answer depends on it.
   */
  private cachedResponse(
    state: RequestState,
    req: ApiRequest,
    cached: CachedBody,
    head: boolean,
  ): ApiResponse | Promise<ApiResponse> {
    const coding = negotiateEncoding(req.headers['accept-encoding']);
    const rep = representation(cached, coding);
    const vary = compressible(cached.body);
    if (rep instanceof Promise) {
      return rep.then(
        (made) => this.jsonResponse(state, req, made.body, made.etag, head, 200, vary, made),
        // compression failing is no reason to fail the request
        (err: unknown) => {
          this.log.error({ err, request_id: state.requestId }, 'compressing a response failed');
          return this.jsonResponse(state, req, cached.body, cached.etag, head, 200, vary);
        },
      );
    }
    return this.jsonResponse(state, req, rep.body, rep.etag, head, 200, vary, rep);
  }

  private jsonResponse(
    state: RequestState,
    req: ApiRequest,
    body: Buffer,
    etag: string | null,
    head: boolean,
    status = 200,
    vary = false,
    rep?: Representation,
  ): ApiResponse {
    // nothing keeps such a body (no-store), so there is nothing to revalidate either
    if (state.noStore) etag = null;
    if (etag && matchesIfNoneMatch(req.headers['if-none-match'], etag)) {
      if (state.limited) {
        // past the limit and nothing was taken: the 304 carries the window, without Retry-After
        state.limited = false;
        state.decision = { ...state.decision!, allowed: true };
      }
      // a revalidation costs the client nothing: give the request back to the window
      if (state.key && state.decision?.takenAtMs != null) {
        const decision = state.decision;
        void Promise.resolve(this.options.limiter.refund(state.key.id, decision)).catch((err) =>
          this.log.error({ err, request_id: state.requestId }, 'refund failed'),
        );
        state.decision = { ...decision, remaining: decision.remaining + 1, takenAtMs: null };
      }
      const { run, headers } = this.head(state, NOT_MODIFIED_TAILS[vary ? 1 : 0]);
      headers.push(['ETag', etag]);
      return { status: 304, headers, run, body: '' };
    }
    const { run, headers } = this.head(
      state,
      jsonTail(rep?.coding ?? 'identity', vary, etag ? 1 : state.noStore ? 2 : 0),
    );
    if (etag) headers.push(['ETag', etag]);
    return { status, headers, run, body, omitBody: head };
  }

  private async parseBody(req: ApiRequest, compiled: CompiledRoute): Promise<unknown> {
    const schema = compiled.def.body;
    if (!schema) return undefined;
    const bytes = req.body ?? new Uint8Array();
    if (bytes.byteLength > this.options.maxBodyBytes) {
      throw new ApiError('payload_too_large', `The body is larger than ${this.options.maxBodyBytes} bytes.`);
    }
    const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== JSON_TYPE) {
      throw new ApiError('unsupported_media_type', 'Send the body as application/json.');
    }
    return parseJsonBody(schema, bytes);
  }

  /** The page size asked for; 400 limit_exceeds_plan above the plan's maximum. */
  private pageLimit(query: Record<string, unknown>, state: RequestState): number {
    const limit = (query.limit as number | undefined) ?? DEFAULT_PAGE_SIZE;
    const max = state.key ? PLAN_LIMITS[state.key.plan].max_page_size : DEFAULT_PAGE_SIZE;
    if (limit > max) {
      throw new ApiError('limit_exceeds_plan', `limit ${limit} is above this plan's maximum of ${max}.`, {
        errors: [{ parameter: 'limit', detail: `at most ${max} on the ${state.key?.plan ?? 'anonymous'} plan` }],
      });
    }
    return limit;
  }

  private context(
    req: ApiRequest,
    state: RequestState,
    compiled: CompiledRoute,
    parsed: ParsedQuery & { scope: string },
    query: Record<string, unknown>,
    params: Record<string, string>,
    body: unknown,
    limit: number,
  ): RequestContext {
    let page: PageRequest | null = null;
    if (compiled.def.paginated) {
      const scope = `${compiled.def.id}\n${req.path}\n${parsed.scope}`;
      const cursor = query.cursor as string | undefined;
      const after = cursor === undefined ? null : this.options.cursors.decode(scope, cursor);
      page = new PageCursor(limit, after, this.options.cursors, scope);
    }
    return new Context(
      state.requestId,
      state.startedMs,
      state.method,
      req.path,
      query,
      params,
      body,
      state.key,
      req.headers,
      page,
      parsed.values,
      `${this.options.baseUrl ?? ''}${req.path}`,
      compiled.streamNames,
    );
  }

  private async openStream(
    compiled: CompiledRoute,
    ctx: RequestContext,
    state: RequestState,
    req: ApiRequest,
    parsed: ParsedQuery,
  ): Promise<ApiResponse> {
    const def = compiled.def;
    const lastEventId = req.headers['last-event-id'] ?? (ctx.query.last_event_id as string | undefined) ?? null;
    let reply: unknown;
    if (def.stream) {
      reply = await def.handler(ctx);
    } else if (this.options.streams) {
      reply = await this.options.streams.open({
        route: def,
        key: state.key!,
        ctx,
        scope: `${def.id}\n${req.path}\n${scopeQuery(parsed, compiled.streamNames)}`,
        lastEventId,
        render: async () => def.handler(ctx),
      });
    } else {
      throw new ApiError('not_acceptable', 'Event-stream output is not enabled on this server; request JSON instead.');
    }
    if (!(reply instanceof StreamReply)) throw new Error(`${def.id} did not answer with a StreamReply`);
    const { run, headers } = this.head(state, STREAM_TAIL);
    headers.push(...reply.headers);
    return { status: 200, headers, run, body: '', stream: reply };
  }

  /**
   * A response's headers: the shared run of its kind (the base run, then `tail`), then the
   * request's own (its id, its window's state), for the caller to add the response's own after.
   */
  private head(state: RequestState, tail?: readonly [string, string][]): { run: HeaderRun; headers: HeaderList } {
    let run = apiRun(state.unit, state.decision ? state.decision.limit : null);
    if (tail) run = run.followedBy(tail);
    return { run, headers: pushRequestHeaders(run.start(), state.requestId, state.decision, state.startedMs) };
  }

  private problem(err: ApiError, req: ApiRequest, state: RequestState): ApiResponse {
    const rendered = renderProblem(err, state.requestId, safePath(req.path));
    const { run, headers } = this.head(state);
    headers.push(...rendered.headers);
    return { status: rendered.status, headers, run, body: rendered.body, omitBody: state.method === 'HEAD' };
  }

  private record(state: RequestState, response: ApiResponse, latencyMs: number): void {
    if (state.unit === null) return;
    try {
      this.options.meter.record({
        keyId: state.key?.id ?? null,
        plan: state.key?.plan ?? null,
        test: state.key?.test ?? false,
        unit: state.unit,
        // an opened stream is billed per minute by the stream itself, not here
        quantity: state.unit === 'request' ? 1 : 0,
        method: state.method,
        endpoint: state.endpoint,
        status: response.status,
        latencyMs,
        atMs: state.startedMs,
        requestId: state.requestId,
      });
    } catch (err) {
      this.log.error({ err, request_id: state.requestId }, 'metering failed');
    }
  }

  /** Every request at debug (off by default: nothing is built), 5xx answers at warn. */
  private logRequest(state: RequestState, req: ApiRequest, response: ApiResponse, latencyMs: number): void {
    const status = response.status;
    if (status < 500 && !this.log.isLevelEnabled('debug')) return;
    const line = {
      request_id: state.requestId,
      method: state.method,
      path: safePath(req.path),
      route: state.endpoint,
      status,
      ms: Math.round(latencyMs * 100) / 100,
      key_id: state.key?.id,
    };
    if (status >= 500) this.log.warn(line, 'request answered with a server error');
    else this.log.debug(line, 'request');
  }
}

/** The path for `instance`: bounded, and never with the query (it may hold api_key). */
function safePath(path: string): string {
  return path.length > 512 ? `${path.slice(0, 512)}…` : path;
}
