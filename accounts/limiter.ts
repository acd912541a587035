import { PLAN_LIMITS, WINDOW_MS, type Plan } from './plans.ts';

export interface RateDecision {
  readonly allowed: boolean;
  readonly limit: number;
  readonly remaining: number;
  /** ms from now until the oldest counted request leaves the window (0 when none is counted) */
  readonly resetMs: number;
  /** when refused: ms until a request would be allowed */
  readonly retryAfterMs: number;
  /** the instant this decision consumed, for refund(); null when nothing was consumed */
  readonly takenAtMs: number | null;
}

/**
 * The seam for a shared limiter: this process keeps the window in memory; a multi-node deploy
 * swaps in one backed by Redis or NATS KV with the same contract (hence the optional Promise).
 */
export interface RateLimiter {
  /** Counts one request when the window allows it. */
  take(keyId: string, plan: Plan, nowMs: number): RateDecision | Promise<RateDecision>;
  /** The window's state without counting anything. */
  peek(keyId: string, plan: Plan, nowMs: number): RateDecision | Promise<RateDecision>;
  /** Gives back a request that turned out not to count (a 304). */
  refund(keyId: string, decision: RateDecision): void | Promise<void>;
}

/** One key's accepted requests, oldest first, in a ring of `quota` slots. */
class WindowLog {
  private readonly stamps: Float64Array;
  private head = 0;
  count = 0;
  newest = 0;

  constructor(readonly quota: number) {
    this.stamps = new Float64Array(quota);
  }

  expire(nowMs: number): void {
    const horizon = nowMs - WINDOW_MS;
    while (this.count > 0 && this.stamps[this.head]! <= horizon) {
      this.head = (this.head + 1) % this.quota;
      this.count--;
    }
  }

  oldest(): number {
    return this.stamps[this.head]!;
  }

  push(stampMs: number): void {
    this.stamps[(this.head + this.count) % this.quota] = stampMs;
    this.count++;
    this.newest = stampMs;
  }

  /** Removes the newest entry equal to `stampMs`, keeping order. */
  remove(stampMs: number): boolean {
    for (let i = this.count - 1; i >= 0; i--) {
      if (this.stamps[(this.head + i) % this.quota] !== stampMs) continue;
      for (let j = i; j < this.count - 1; j++) {
        this.stamps[(this.head + j) % this.quota] = this.stamps[(this.head + j + 1) % this.quota]!;
      }
      this.count--;
      return true;
    }
    return false;
  }
}

/**
 * Exact sliding window: every accepted request's time is kept (at most the quota per key), so
 * request N+1 inside any 5-minute span is refused. JavaScript runs take() to completion, which
 * makes it exact under any number of concurrent connections in this process.
 */
export class SlidingWindowLimiter implements RateLimiter {
  private readonly logs = new Map<string, WindowLog>();
  private takesSinceSweep = 0;

  take(keyId: string, plan: Plan, nowMs: number): RateDecision {
    if (++this.takesSinceSweep >= 10_000) this.sweep(nowMs);
    const log = this.log(keyId, plan, nowMs);
    // a clock stepping back must not break the ordering the ring relies on
    const stamp = Math.max(nowMs, log.newest);
    if (log.count < log.quota) {
      log.push(stamp);
      return this.decision(log, nowMs, true, stamp);
    }
    return this.decision(log, nowMs, false, null);
  }

  peek(keyId: string, plan: Plan, nowMs: number): RateDecision {
    return this.decision(this.log(keyId, plan, nowMs), nowMs, true, null);
  }

  refund(keyId: string, decision: RateDecision): void {
    if (decision.takenAtMs === null) return;
    this.logs.get(keyId)?.remove(decision.takenAtMs);
  }

  /** keys currently tracked (for tests and the status page) */
  get size(): number {
    return this.logs.size;
  }

  private log(keyId: string, plan: Plan, nowMs: number): WindowLog {
    const quota = PLAN_LIMITS[plan].requests_per_window;
    let log = this.logs.get(keyId);
    if (!log || log.quota !== quota) {
      // a plan change starts a fresh window at the new quota
      log = new WindowLog(quota);
      this.logs.set(keyId, log);
    }
    log.expire(nowMs);
    return log;
  }

  private decision(log: WindowLog, nowMs: number, allowed: boolean, takenAtMs: number | null): RateDecision {
    const resetMs = log.count > 0 ? Math.max(0, log.oldest() + WINDOW_MS - nowMs) : 0;
    return {
      allowed,
      limit: log.quota,
      remaining: log.quota - log.count,
      resetMs,
      retryAfterMs: allowed ? 0 : Math.max(1, resetMs),
      takenAtMs,
    };
  }

  /** Forgets keys with nothing left in their window, so idle keys cost no memory. */
  private sweep(nowMs: number): void {
    this.takesSinceSweep = 0;
    for (const [keyId, log] of this.logs) {
      log.expire(nowMs);
      if (log.count === 0) this.logs.delete(keyId);
    }
  }
}
