// The node's own windows while the broker is away (or too slow to wait for): per-node limits, as
// one process has them. What they let through is kept per key and added to the shared window
// when the broker answers again (a merge: REDIS_LEASES_LUA's `m`), so the 5 minutes after an
// outage count it.
import type { RateDecision, RateLimiter } from '../accounts/limiter.ts';
import type { Plan } from '../accounts/plans.ts';

/** Requests of one key let through alone, to add to the shared window. */
export interface Merge {
  /** its grant id in the shared window: sending it again sets, never adds */
  readonly id: string;
  readonly keyId: string;
  count: number;
  /** local clock of the last one */
  lastMs: number;
  /** changed since it was last sent */
  dirty: boolean;
}

export class AloneWindows {
  /** decisions made here since start */
  decisions = 0;
  private readonly made = new WeakSet<RateDecision>();
  private readonly merges = new Map<string, Merge>();

  constructor(
    private readonly local: RateLimiter,
    private readonly mergeId: () => string,
    private readonly clock: () => number,
    /** a merge has something new to send */
    private readonly changed: () => void,
  ) {}

  take(keyId: string, plan: Plan, nowMs: number): RateDecision | Promise<RateDecision> {
    const counted = (decision: RateDecision) => {
      this.made.add(decision);
      this.decisions++;
      if (decision.allowed) {
        let merge = this.merges.get(keyId);
        if (!merge) {
          merge = { id: this.mergeId(), keyId, count: 0, lastMs: 0, dirty: true };
          this.merges.set(keyId, merge);
        }
        merge.count++;
        merge.lastMs = Math.max(merge.lastMs, this.clock());
        merge.dirty = true;
        this.changed();
      }
      return decision;
    };
    const decision = this.local.take(keyId, plan, nowMs);
    return decision instanceof Promise ? decision.then(counted) : counted(decision);
  }

  peek(keyId: string, plan: Plan, nowMs: number): RateDecision | Promise<RateDecision> {
    return this.local.peek(keyId, plan, nowMs);
  }

  /** Gives back a request this node let through alone; false when the decision is not one of those. */
  refund(keyId: string, decision: RateDecision): false | void | Promise<void> {
    if (!this.made.has(decision)) return false;
    const merge = this.merges.get(keyId);
    if (merge && merge.count > 0) {
      merge.count--;
      merge.dirty = true;
    }
    return this.local.refund(keyId, decision);
  }

  /** The merges to send now (marked sent). */
  toSend(): Merge[] {
    const out: Merge[] = [];
    for (const merge of this.merges.values()) {
      if (!merge.dirty) continue;
      merge.dirty = false;
      out.push(merge);
    }
    return out;
  }

  /** The broker has it: forgotten unless it changed since it was sent. */
  sent(merge: Merge): void {
    if (!merge.dirty && this.merges.get(merge.keyId) === merge) this.merges.delete(merge.keyId);
  }

  unsent(merge: Merge): void {
    merge.dirty = true;
  }
}
