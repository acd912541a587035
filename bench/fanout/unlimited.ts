// One key opens every connection of a fan-out run: the bench measures the fan-out, not the
// plans. Its allowance admits any number of streams and its window any number of stream opens
// (every open counts against the window since the refusal rule of issue 15: a Max key's 6,001st
// open in five minutes would be a 429, and a 10,000-stream run stopped at 6,000).
import { SlidingWindowLimiter, type RateDecision } from '../../accounts/limiter.ts';
import type { Plan } from '../../accounts/plans.ts';
import { StreamAllowance } from '../../stream/allowance.ts';

export class BenchAllowance extends StreamAllowance {
  override acquire(keyId: string, _limit: number, planName?: string) {
    return super.acquire(keyId, Number.MAX_SAFE_INTEGER, planName);
  }
}

/** The real sliding window (its cost stays in the figures), never refusing: a full window admits. */
export class BenchLimiter extends SlidingWindowLimiter {
  override take(keyId: string, plan: Plan, nowMs: number): RateDecision {
    const decision = super.take(keyId, plan, nowMs);
    return decision.allowed ? decision : { ...decision, allowed: true, retryAfterMs: 0 };
  }
}
