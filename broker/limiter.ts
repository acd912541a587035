// The 5-minute windows kept in Redis, exact across nodes: each decision is one Lua call
// (REDIS_WINDOW_LUA) on the broker's clock, so a Regular key's 601st request in a window is
// refused whichever nodes served the 600. While the broker is down each node falls back to its
// own in-memory window (per-node limits, docs/guides/multi-node.md), and returns to the
// shared one when it is back.
import type { Redis } from 'ioredis';
import { SlidingWindowLimiter, type RateDecision, type RateLimiter } from '../accounts/limiter.ts';
import { PLAN_LIMITS, WINDOW_MS, type Plan } from '../accounts/plans.ts';
import type { Broker } from './redis.ts';
import { REDIS_REFUND_LUA, REDIS_WINDOW_LUA } from './redis-scripts.ts';

type WindowReply = [taken: number, count: number, oldest: number, now: number];
type Scripts = Redis & {
  transitWindow(
    key: string,
    nowMs: number,
    windowMs: number,
    quota: number,
    mode: 'take' | 'peek',
  ): Promise<WindowReply>;
  transitRefund(key: string, stamp: number): Promise<number>;
};

export class BrokerRateLimiter implements RateLimiter {
  private readonly scripts: Scripts;
  private readonly local: RateLimiter;
  /** decisions the per-node fallback made: refunded there */
  private readonly localDecisions = new WeakSet<RateDecision>();
  /** decisions taken by the fallback since start (the broker was down) */
  fallbackDecisions = 0;

  constructor(
    private readonly broker: Broker,
    options: { fallback?: RateLimiter } = {},
  ) {
    this.local = options.fallback ?? new SlidingWindowLimiter();
    this.scripts = broker.redis as Scripts;
    broker.redis.defineCommand('transitWindow', { numberOfKeys: 1, lua: REDIS_WINDOW_LUA });
    broker.redis.defineCommand('transitRefund', { numberOfKeys: 1, lua: REDIS_REFUND_LUA });
  }

  take(keyId: string, plan: Plan, nowMs: number): Promise<RateDecision> {
    return this.decide(keyId, plan, nowMs, 'take');
  }

  peek(keyId: string, plan: Plan, nowMs: number): Promise<RateDecision> {
    return this.decide(keyId, plan, nowMs, 'peek');
  }

  async refund(keyId: string, decision: RateDecision): Promise<void> {
    if (decision.takenAtMs === null) return;
    if (this.localDecisions.has(decision)) {
      await this.local.refund(keyId, decision);
      return;
    }
    await this.scripts.transitRefund(this.windowKey(keyId), decision.takenAtMs).catch(() => undefined);
  }

  private windowKey(keyId: string): string {
    return this.broker.key(`window:${keyId}`);
  }

  private async decide(keyId: string, plan: Plan, nowMs: number, mode: 'take' | 'peek'): Promise<RateDecision> {
    const quota = PLAN_LIMITS[plan].requests_per_window;
    // a request never waits for a broker that is away: the node's own window answers
    if (this.broker.state === 'up') {
      try {
        const [taken, count, oldest, now] = await this.scripts.transitWindow(
          this.windowKey(keyId),
          0,
          WINDOW_MS,
          quota,
          mode,
        );
        const allowed = mode === 'peek' || taken >= 0;
        const resetMs = count > 0 && oldest >= 0 ? Math.max(0, oldest + WINDOW_MS - now) : 0;
        return {
          allowed,
          limit: quota,
          remaining: Math.max(0, quota - count),
          resetMs,
          retryAfterMs: allowed ? 0 : Math.max(1, resetMs),
          takenAtMs: taken >= 0 ? taken : null,
        };
      } catch (err) {
        this.broker.log.warn({ err }, 'shared rate window unavailable; this node counts alone');
      }
    }
    const decision = await (mode === 'take'
      ? this.local.take(keyId, plan, nowMs)
      : this.local.peek(keyId, plan, nowMs));
    this.localDecisions.add(decision);
    this.fallbackDecisions++;
    return decision;
  }
}
