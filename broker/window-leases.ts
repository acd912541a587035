// One rate-limit key's shared window as one edge holds it (broker/limiter.ts): the leases the
// broker granted it (slots of the window, spent here with no round trip), the shared count the
// broker last reported, and the requests waiting for a lease. No I/O here: the limiter asks, this
// keeps the books.
import type { RateDecision } from '../accounts/limiter.ts';
import type { Plan } from '../accounts/plans.ts';

/** What a key's window needs from the limiter that holds it. */
export interface WindowHost {
  readonly leaseMs: number;
  clock(): number;
  /** the broker must learn what `lease` served (at the next call) */
  finalize(lease: Lease): void;
  /** the next lease can be asked for early (at the next call) */
  askEarly(window: KeyWindow): void;
}

export interface Waiter {
  /** the request's own instant (its headers are relative to it) */
  readonly nowMs: number;
  resolve(decision: RateDecision): void;
}

/** Slots of one key's shared window granted to this edge, spendable until `expiresMs` (local clock). */
export class Lease {
  /** slots not yet spent */
  left: number;
  /** requests it served (a refund takes one back) */
  used = 0;
  /** local clock: the latest instant one of its slots was spent, never before it was asked for */
  lastSpendMs: number;
  /** no longer spent here; the broker learns `used` and `lastSpendMs` from its finalize */
  ended = false;
  /** a finalize with the current `used` is waiting for the next call */
  queued = false;
  /** local clock: when it became the lease spent (an early one waits behind the current one) */
  activeFromMs: number;

  constructor(
    readonly window: KeyWindow,
    readonly id: string,
    readonly size: number,
    /** local clock when the call that granted it was sent: before the broker granted it */
    readonly sentMs: number,
    readonly expiresMs: number,
    /** broker clock when it was granted */
    readonly grantedAtMs: number,
  ) {
    this.left = size;
    this.lastSpendMs = sentMs;
    this.activeFromMs = sentMs;
  }

  /**
   * The instant (broker clock) its requests count as made: the grant's instant plus how long
   * after asking the last slot was spent locally. The grant came after the ask, so this is never
   * earlier than the true instant (it is later by at most the round trip).
   */
  lastSpendBrokerMs(leaseMs: number): number {
    return this.grantedAtMs + Math.min(leaseMs, Math.max(0, this.lastSpendMs - this.sentMs));
  }
}

/** A request counted from a lease: refund() gives the slot back to that lease. */
export class LeaseDecision implements RateDecision {
  constructor(
    readonly allowed: boolean,
    readonly limit: number,
    readonly remaining: number,
    readonly resetMs: number,
    readonly retryAfterMs: number,
    readonly takenAtMs: number | null,
    readonly lease: Lease | null,
  ) {}
}

export class KeyWindow {
  current: Lease | null = null;
  /** asked for before `current` ran out, so a steady key never waits */
  next: Lease | null = null;
  readonly waiters: Waiter[] = [];
  /** the grant in flight for this key, if any */
  asking: object | null = null;
  /** the shared count in the broker's last reply: every edge's live leases at their full size */
  total = 0;
  /** unspent slots of this edge's live leases (all inside `total`) */
  held = 0;
  /** local clock: when the oldest counted request leaves the window (0: nothing counted) */
  resetAtMs = 0;
  /** local clock of the last reply about this key */
  syncedMs = Number.NEGATIVE_INFINITY;
  /** refused here without asking the broker until then: the window was full */
  fullUntilMs = 0;
  /** the next lease's size: doubles while leases run out, falls to the demand seen when one expires */
  size = 1;
  /** no early ask before then (local clock): the last one got nothing */
  earlyAskAfterMs = 0;
  /** local clock of the last request */
  lastUseMs = 0;

  constructor(
    readonly keyId: string,
    readonly plan: Plan,
    readonly quota: number,
    private readonly host: WindowHost,
  ) {}

  /** the largest lease asked for: a tenth of the quota (a Regular key: 60 of 600) */
  get maxLease(): number {
    return Math.max(1, Math.floor(this.quota / 10));
  }

  /**
   * What is left of the shared window as this edge knows it: the quota less the broker's count,
   * plus the slots this edge holds unspent (the count has them as taken). Other edges' unspent
   * slots still count as taken here, and what they spent since the last reply is not yet seen.
   */
  remaining(): number {
    const left = this.quota - this.total + this.held;
    return left <= 0 ? 0 : Math.min(left, this.quota);
  }

  resetMs(nowMs: number): number {
    return this.resetAtMs > nowMs ? this.resetAtMs - nowMs : 0;
  }

  /** A lease ran out while requests kept coming: ask for twice as much next time. */
  grew(): void {
    this.size = Math.min(this.maxLease, this.size * 2);
  }

  /** A lease expired with slots left after serving `served` requests in `activeMs`: size for that rate. */
  shrank(served: number, activeMs: number, leaseMs: number): void {
    const demand = Math.ceil((served * leaseMs) / Math.max(1, activeMs));
    this.size = Math.max(1, Math.min(this.maxLease, this.size, demand));
  }

  /** The lease to spend at `at` (local clock), ending the ones that expired. */
  usable(at: number): Lease | null {
    while (this.current !== null) {
      if (this.current.left > 0 && at < this.current.expiresMs) return this.current;
      this.end(this.current);
    }
    return null;
  }

  /** Counts one request from `lease` at `at`; the decision's figures are relative to the request's `nowMs`. */
  spend(lease: Lease, nowMs: number, at: number): LeaseDecision {
    lease.left--;
    lease.used++;
    this.held--;
    if (at > lease.lastSpendMs) lease.lastSpendMs = at;
    const decision = this.allowed(nowMs, nowMs, lease);
    if (lease.left === 0) {
      this.grew();
      this.end(lease);
    }
    // an eighth left, or of its time: the next lease is asked for now, so a steady key never
    // waits for one (a key's first lease, of one slot, is no sign of a steady key)
    const current = this.current;
    if (
      this.next === null &&
      this.asking === null &&
      (current === null
        ? lease.size > 1
        : current.left * 8 <= current.size || (at - current.sentMs) * 8 >= this.host.leaseMs * 7) &&
      at >= this.earlyAskAfterMs
    ) {
      this.host.askEarly(this);
    }
    return decision;
  }

  /** No longer spent here: its unspent slots leave `held`, and the broker learns what it served. */
  end(lease: Lease): void {
    if (lease.ended) return;
    lease.ended = true;
    if (lease.left > 0) {
      // expired with slots left: what it served while it was the one spent is the demand of one lease
      if (this.host.clock() >= lease.expiresMs) {
        this.shrank(lease.used, lease.expiresMs - lease.activeFromMs, this.host.leaseMs);
      }
    }
    this.held -= lease.left;
    lease.left = 0;
    if (this.current === lease) {
      this.current = this.next;
      this.next = null;
      if (this.current) this.current.activeFromMs = this.host.clock();
    } else if (this.next === lease) this.next = null;
    this.host.finalize(lease);
  }

  allowed(nowMs: number, takenAtMs: number, lease: Lease): LeaseDecision {
    return new LeaseDecision(true, this.quota, this.remaining(), this.resetMs(nowMs), 0, takenAtMs, lease);
  }

  refusal(nowMs: number): LeaseDecision {
    const resetMs = this.resetMs(nowMs);
    return new LeaseDecision(false, this.quota, 0, resetMs, Math.max(1, resetMs), null, null);
  }

  peek(nowMs: number): LeaseDecision {
    return new LeaseDecision(true, this.quota, this.remaining(), this.resetMs(nowMs), 0, null, null);
  }
}
