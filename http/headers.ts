// The response headers every API response carries, built in one place so errors, 304s and 404s
// get exactly the same set as successes.
import { createHash } from 'node:crypto';
import type { RateDecision } from '../accounts/limiter.ts';
import { headerBlock, headerLine } from './header-block.ts';
import { WINDOW_MS, WINDOW_POLICY_NAME, type MeterUnit } from '../accounts/plans.ts';

export type { MeterUnit };

export const API_VERSION = '1.0.0';

export type HeaderList = Array<[string, string]>;

const WINDOW_S = WINDOW_MS / 1000;

/** Headers a browser app may read from a cross-origin response. */
export const EXPOSED_HEADERS = [
  'X-API-Version',
  'X-Meter-Unit',
  'X-Request-Id',
  'X-RateLimit-Policy',
  'RateLimit-Policy',
  'RateLimit',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'Retry-After',
  'ETag',
  'Last-Event-ID',
].join(', ');

/**
 * A header tuple made once and listed by many responses: frozen, so nothing changes it, and
 * carrying its line encoded for the socket layer (http/header-block.ts).
 */
export function sharedHeader(name: string, value: string): [string, string] {
  // not enumerable: to everything but the socket layer it stays a plain [name, value] pair
  const header = Object.defineProperty([name, value], 'line', { value: headerLine(name, value) });
  return Object.freeze(header) as [string, string];
}

const VERSION = sharedHeader('X-API-Version', API_VERSION);
/** every response: a browser never guesses a type (a JSON body or an error run as HTML or script) */
const NOSNIFF = sharedHeader('X-Content-Type-Options', 'nosniff');
const ALLOW_ORIGIN = sharedHeader('Access-Control-Allow-Origin', '*');
const EXPOSE = sharedHeader('Access-Control-Expose-Headers', EXPOSED_HEADERS);
const UNITS: Record<MeterUnit, [string, string]> = {
  request: sharedHeader('X-Meter-Unit', 'request'),
  'connection-minute': sharedHeader('X-Meter-Unit', 'connection-minute'),
};

export function baseHeaders(requestId: string, unit: MeterUnit | null): HeaderList {
  const headers: HeaderList = [VERSION, ['X-Request-Id', requestId], ALLOW_ORIGIN, EXPOSE, NOSNIFF];
  if (unit) headers.push(UNITS[unit]);
  return headers;
}

/** The headers a window's limit alone decides (one set per plan), built once and shared. */
const POLICY_HEADERS = new Map<number, readonly [string, string][]>();
function policyHeaders(limit: number): readonly [string, string][] {
  let headers = POLICY_HEADERS.get(limit);
  if (!headers) {
    headers = [
      sharedHeader('X-RateLimit-Policy', `${limit};w=${WINDOW_S}`),
      sharedHeader('RateLimit-Policy', `"${WINDOW_POLICY_NAME}";q=${limit};w=${WINDOW_S}`),
      sharedHeader('X-RateLimit-Limit', String(limit)),
    ];
    POLICY_HEADERS.set(limit, headers);
  }
  return headers;
}

/**
 * The IETF RateLimit header and the X- ones older clients read of a window's state now: what
 * remains, when it resets, when to retry (the policy headers are in the response's run).
 */
function pushWindowHeaders(headers: HeaderList, decision: RateDecision, nowMs: number): HeaderList {
  const remaining = String(decision.remaining);
  headers.push(
    ['RateLimit', `"${WINDOW_POLICY_NAME}";r=${remaining};t=${Math.ceil(decision.resetMs / 1000)}`],
    ['X-RateLimit-Remaining', remaining],
    ['X-RateLimit-Reset', String(Math.ceil((nowMs + decision.resetMs) / 1000))],
  );
  if (!decision.allowed) headers.push(['Retry-After', String(Math.max(1, Math.ceil(decision.retryAfterMs / 1000)))]);
  return headers;
}

/**
 * Shared headers that responses of one kind list first, their section joined once: the socket
 * layer writes a run in one call and the response's own headers in a second (http/server.ts).
 * Joining the whole section per response cost more than the calls it saved (a string of ~1 kB
 * made and flattened each time); a run is a constant.
 */
export class HeaderRun {
  /** what the socket layer writes under list[0]'s name (http/header-block.ts) */
  readonly block: string;
  private readonly longer = new Map<readonly [string, string][], HeaderRun>();

  constructor(readonly list: readonly [string, string][]) {
    if (!list.every((header) => Object.isFrozen(header))) throw new Error('a header run lists shared headers only');
    this.block = list.length > 0 ? headerBlock(list) : '';
  }

  /** This run, then the shared headers of `more`: made once per `more`, a constant known by its identity. */
  followedBy(more: readonly [string, string][]): HeaderRun {
    let run = this.longer.get(more);
    if (!run) {
      run = new HeaderRun([...this.list, ...more]);
      this.longer.set(more, run);
    }
    return run;
  }

  /** A response's headers: this run's, for the caller to add the response's own after. */
  start(): HeaderList {
    return this.list.slice();
  }
}

const UNIT_INDEX = { none: 0, request: 1, 'connection-minute': 2 } as const;
/** by unit (none, request, connection-minute), then by the window's limit (-1: no window) */
const API_RUNS = [new Map<number, HeaderRun>(), new Map<number, HeaderRun>(), new Map<number, HeaderRun>()];

/**
 * The run every API response of a meter unit and window limit starts with: the base headers
 * (version, CORS, nosniff), the meter unit, the window's policy. The response's own follow:
 * pushRequestHeaders.
 */
export function apiRun(unit: MeterUnit | null, limit: number | null): HeaderRun {
  const byLimit = API_RUNS[UNIT_INDEX[unit ?? 'none']]!;
  const key = limit ?? -1;
  let run = byLimit.get(key);
  if (!run) {
    const list = [VERSION, ALLOW_ORIGIN, EXPOSE, NOSNIFF];
    if (unit) list.push(UNITS[unit]);
    if (limit !== null) list.push(...policyHeaders(limit));
    run = new HeaderRun(list);
    byLimit.set(key, run);
  }
  return run;
}

/** What an API response says of its own request after its run: its id and its window's state. */
export function pushRequestHeaders(
  headers: HeaderList,
  requestId: string,
  decision: RateDecision | null,
  nowMs: number,
): HeaderList {
  headers.push(['X-Request-Id', requestId]);
  return decision ? pushWindowHeaders(headers, decision, nowMs) : headers;
}

export const PREFLIGHT_HEADERS: HeaderList = [
  sharedHeader('Access-Control-Allow-Methods', 'GET, POST, PATCH, PUT, DELETE, OPTIONS'),
  sharedHeader('Access-Control-Allow-Headers', 'Authorization, Content-Type, If-None-Match, Last-Event-ID, Accept'),
  sharedHeader('Access-Control-Max-Age', '86400'),
];

/** A CSP source allowing exactly this inline script or style: `'sha256-<base64>'`. */
export function cspHash(text: string): string {
  return `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
}

/**
 * What every HTML page adds to the base headers: its Content-Security-Policy (which must say
 * `frame-ancestors 'none'`: no page of ours is framed), no Referer to other sites,
 * X-Frame-Options for browsers without CSP level 2, and no window opened from elsewhere keeps a
 * handle on ours.
 */
export function htmlPageHeaders(csp: string): HeaderList {
  if (!/(^|;)\s*frame-ancestors 'none'\s*(;|$)/.test(csp)) throw new Error(`a page's CSP must deny framing: ${csp}`);
  return [
    ['Content-Security-Policy', csp],
    ['Referrer-Policy', 'no-referrer'],
    ['X-Frame-Options', 'DENY'],
    ['Cross-Origin-Opener-Policy', 'same-origin'],
  ];
}

/** For answers that carry signed links (capabilities that work without a key): kept by no cache. */
export const NO_STORE = sharedHeader('Cache-Control', 'no-store');
