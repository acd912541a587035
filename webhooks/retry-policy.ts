// The retry policy as pure functions: what an attempt's outcome means for its delivery.
import type { AttemptOutcome, DeliveryState } from './schemas.ts';

/** Delay before attempt n+1 (index n-1 = after the n-th attempt failed); attempt 1 is immediate. */
export const RETRY_DELAYS_MS: readonly number[] = [
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3600_000,
  5 * 3600_000,
  10 * 3600_000,
  10 * 3600_000,
];
/** ± share of each delay, so endpoints that failed together do not retry in lockstep */
export const JITTER = 0.2;
/** A Retry-After beyond this is treated as this: one delivery must not stall for days. */
export const MAX_RETRY_AFTER_MS = 24 * 3600_000;
export const FAILING_DISABLE_MS = 5 * 24 * 3600_000;

export interface AttemptResult {
  outcome: Exclude<AttemptOutcome, 'in_flight'>;
  status_code: number | null;
  latency_ms: number | null;
  error: string | null;
  /** from Retry-After on a 429 or 503 */
  retry_after_ms: number | null;
  /** Location of a redirect that was not followed */
  location?: string;
}

export interface NextStep {
  state: DeliveryState;
  next_attempt_ms: number | null;
  /** the endpoint answered 410 Gone: it is disabled */
  disable_endpoint: boolean;
  /** counts toward the endpoint's continuous-failure clock */
  failed: boolean;
}

export function jittered(delayMs: number, random: () => number): number {
  return Math.round(delayMs * (1 - JITTER + 2 * JITTER * random()));
}

/**
 * @param judgedAttempts attempts with a verdict so far, this one included (interrupted ones
 *   do not count: their outcome is unknown, so they do not use up the schedule)
 */
export function nextStep(result: AttemptResult, judgedAttempts: number, nowMs: number, random: () => number): NextStep {
  if (result.outcome === 'succeeded')
    return { state: 'succeeded', next_attempt_ms: null, disable_endpoint: false, failed: false };
  if (result.outcome === 'interrupted') {
    // nothing was learned: try again at once, without using up a retry
    return {
      state: judgedAttempts > 0 ? 'retrying' : 'pending',
      next_attempt_ms: nowMs,
      disable_endpoint: false,
      failed: false,
    };
  }
  if (result.outcome === 'gone')
    return { state: 'failed', next_attempt_ms: null, disable_endpoint: true, failed: true };
  const delay = RETRY_DELAYS_MS[judgedAttempts - 1];
  if (delay === undefined) return { state: 'failed', next_attempt_ms: null, disable_endpoint: false, failed: true };
  const wait = Math.max(jittered(delay, random), Math.min(result.retry_after_ms ?? 0, MAX_RETRY_AFTER_MS));
  return { state: 'retrying', next_attempt_ms: nowMs + wait, disable_endpoint: false, failed: true };
}

/** Retry-After as delta-seconds or an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | null {
  if (!value) return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return null;
  return Math.max(0, at - nowMs);
}
