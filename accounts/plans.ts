// Plans as the specification fixes them (section 8). Every limit the API enforces reads from here.

export const PLANS = ['free', 'regular', 'max'] as const;
export type Plan = (typeof PLANS)[number];

/** What a metered endpoint bills: one request, or each started minute of an open stream. */
export type MeterUnit = 'request' | 'connection-minute';

export interface PlanLimits {
  /** requests allowed in any sliding window of WINDOW_MS */
  readonly requests_per_window: number;
  /** concurrent open event streams */
  readonly sse_streams: number;
  /** largest `limit` a list request may ask for */
  readonly max_page_size: number;
}

export const WINDOW_MS = 5 * 60 * 1000;
/** name of the window in the IETF RateLimit headers (`"5m";q=600;w=300`) */
export const WINDOW_POLICY_NAME = '5m';

/** What counts against the window: the one rule, enforced by http/request-chain.ts, quoted by the docs. */
export const WINDOW_RULE =
  'Every request with a valid key to a metered endpoint takes one request from the window, whatever the answer: ' +
  'refusals and errors (400, 403, 404, …) count, and so does asking for an event stream, opened (then also billed ' +
  'per connection-minute) or refused. Only a 304 (If-None-Match) is free, and past the limit a revalidation that ' +
  'matches still gets its 304 instead of a 429. Account endpoints are not metered and never count; a request without ' +
  'a valid key (401) has no window.';
export const DEFAULT_PAGE_SIZE = 20;

export const PLAN_LIMITS: Readonly<Record<Plan, PlanLimits>> = Object.freeze({
  free: Object.freeze({ requests_per_window: 20, sse_streams: 0, max_page_size: 20 }),
  regular: Object.freeze({ requests_per_window: 600, sse_streams: 2, max_page_size: 100 }),
  max: Object.freeze({ requests_per_window: 6000, sse_streams: 25, max_page_size: 1000 }),
});

const RANK: Record<Plan, number> = { free: 0, regular: 1, max: 2 };

/** Does `plan` include everything `required` does? */
export function planIncludes(plan: Plan, required: Plan): boolean {
  return RANK[plan] >= RANK[required];
}

export function isPlan(value: string): value is Plan {
  return (PLANS as readonly string[]).includes(value);
}
