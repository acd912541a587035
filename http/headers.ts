// The response headers every API response carries, built in one place so errors, 304s and 404s
// get exactly the same set as successes.
import { createHash } from 'node:crypto';
import type { RateDecision } from '../accounts/limiter.ts';
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

// shared tuples: every response lists them, none is ever modified
const VERSION: [string, string] = ['X-API-Version', API_VERSION];
/** every response: a browser never guesses a type (a JSON body or an error run as HTML or script) */
const NOSNIFF: [string, string] = ['X-Content-Type-Options', 'nosniff'];
const ALLOW_ORIGIN: [string, string] = ['Access-Control-Allow-Origin', '*'];
const EXPOSE: [string, string] = ['Access-Control-Expose-Headers', EXPOSED_HEADERS];
const UNITS: Record<MeterUnit, [string, string]> = {
  request: ['X-Meter-Unit', 'request'],
  'connection-minute': ['X-Meter-Unit', 'connection-minute'],
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
      ['X-RateLimit-Policy', `${limit};w=${WINDOW_S}`],
      ['RateLimit-Policy', `"${WINDOW_POLICY_NAME}";q=${limit};w=${WINDOW_S}`],
      ['X-RateLimit-Limit', String(limit)],
    ];
    POLICY_HEADERS.set(limit, headers);
  }
  return headers;
}

/** Appends the IETF RateLimit pair plus the X- headers older clients read to `headers`. */
export function pushRateLimitHeaders(headers: HeaderList, decision: RateDecision, nowMs: number): HeaderList {
  const [policy, ietfPolicy, limit] = policyHeaders(decision.limit);
  const remaining = String(decision.remaining);
  headers.push(
    policy!,
    ietfPolicy!,
    ['RateLimit', `"${WINDOW_POLICY_NAME}";r=${remaining};t=${Math.ceil(decision.resetMs / 1000)}`],
    limit!,
    ['X-RateLimit-Remaining', remaining],
    ['X-RateLimit-Reset', String(Math.ceil((nowMs + decision.resetMs) / 1000))],
  );
  if (!decision.allowed) headers.push(['Retry-After', String(Math.max(1, Math.ceil(decision.retryAfterMs / 1000)))]);
  return headers;
}

export const PREFLIGHT_HEADERS: HeaderList = [
  ['Access-Control-Allow-Methods', 'GET, POST, PATCH, PUT, DELETE, OPTIONS'],
  ['Access-Control-Allow-Headers', 'Authorization, Content-Type, If-None-Match, Last-Event-ID, Accept'],
  ['Access-Control-Max-Age', '86400'],
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
export const NO_STORE: [string, string] = ['Cache-Control', 'no-store'];
