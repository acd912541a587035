// The 5-minute windows shared by every node through Redis, without a round trip per request:
// each edge holds leases (Doorman's idea) of a key's window, small slices it spends locally, and
// everything it has to tell Redis in one event-loop turn (leases to grant, leases to finalize,
// peeks, requests counted during an outage) goes in one Lua call over all those keys
// (REDIS_LEASES_LUA).
//
// Why the window stays exact (a Regular key's 601st request in any 5 minutes is refused whichever
// edges served the 600):
// - Redis keeps per key the grants still in the window, each with a count and an instant. A
//   grant is made only while the counts add up to at most the quota with it, on Redis's clock.
// - While an edge may still spend a lease, Redis counts it whole, at the lease's expiry (grant
//   time + leaseMs): the latest instant any of its slots can be spent. The edge stops spending at
//   ask time + leaseMs on its own clock, which is no later (the grant came after the ask; only
//   the clocks' rates matter, not their offsets, and they drift by microseconds in a second).
//   When the edge is done with it (run out, expired, shut down) it finalizes it: the count
//   becomes the requests it served (a 304's refund takes one back) and the instant that of its
//   last one (still never earlier than the truth), and the unspent slots are free again.
// - Take any 5 minutes, and among the grants whose slots were spent in them, the one granted last
//   (at T). Every one of those grants still counted at T, with at least the requests it served in
//   those 5 minutes: its instant is no earlier than one of them, made after T − 5 min. So the
//   requests in those 5 minutes are at most what Redis counted right after granting at T: at most
//   the quota.
// - An edge that dies holding a lease never finalizes it: Redis keeps counting every slot of it
//   (it cannot know how many were spent) until 5 minutes after the lease's expiry. Never one too
//   many; at most that lease's unspent slots refused early.
// The price is on the other side: slots another edge holds unspent count as taken, so a request
// can be refused while the window is not quite full. Leases are sized to what a key spends in one
// lease (doubling while they run out, falling to the rate seen when one expires with slots left),
// at most a tenth of the quota, and Redis never grants more than a quarter of what is left beyond
// the requests waiting, so near the end of a key's allowance leases shrink to one slot per
// waiting request; an unspent slot goes back within leaseMs. A key refused here is refused
// locally for fullRecheckMs (or until its window frees, if sooner) before Redis is asked again.
//
// The headers: `remaining` is the quota less the count in the broker's last reply about the key
// (every edge's live leases whole), plus the slots this edge holds unspent; so one edge serving a
// key counts down exactly as one process does, and with several, other edges' unspent slots read
// as taken and what they spent since that reply is not yet seen. `reset` is when the oldest
// counted request leaves the window, a live lease counting at its expiry (up to leaseMs late).
//
// While the broker is down (or does not answer within waitMs), leases already held are spent to
// their end, then each node counts alone (per-node limits: a key may get up to its quota from each
// node); when the broker is back, the requests each node let through alone are added to the
// shared window, so the 5 minutes after an outage count them. docs/guides/multi-node.md.
import { randomBytes } from 'node:crypto';
import { SlidingWindowLimiter, type RateDecision, type RateLimiter } from '../accounts/limiter.ts';
import { PLAN_LIMITS, WINDOW_MS, type Plan } from '../accounts/plans.ts';
import type { Broker } from './redis.ts';
import { AloneWindows, type Merge } from './window-alone.ts';
import { WindowCalls, type WindowOp } from './window-calls.ts';
import { KeyWindow, Lease, LeaseDecision, type WindowHost } from './window-leases.ts';

/** an idle key's window is forgotten after this long */
const FORGET_MS = 30_000;

export interface BrokerLimiterOptions {
  /** the node's own window while the broker is away */
  fallback?: RateLimiter;
  /** how long a lease may be spent (default 1,000 ms) */
  leaseMs?: number;
  /** a key found full is refused locally this long before Redis is asked again (default 250 ms) */
  fullRecheckMs?: number;
  /** the longest a request waits for Redis before the node's own window answers (default 2,000 ms) */
  waitMs?: number;
  /** finalizes and early asks wait at most this long to share a call (default 10 ms) */
  backgroundMs?: number;
  /** the node's clock (tests) */
  clock?: () => number;
  /** the broker's clock (tests); by default Redis's TIME */
  brokerClock?: () => number;
}

/** Counters for the bench and tests. */
export interface LimiterStats {
  /** Lua calls to Redis */
  calls: number;
  /** operations in them */
  operations: number;
  /** decisions from a lease held when the request came: no wait */
  leased: number;
  /** decisions that waited for a call */
  waited: number;
  /** decisions by the node's own window (broker away or slow) */
  fallback: number;
}

/** An operation with what it is about on this node. */
interface Op extends WindowOp {
  readonly window?: KeyWindow;
  readonly lease?: Lease;
  readonly merge?: Merge;
  readonly peek?: Peek;
}

interface Peek {
  readonly keyId: string;
  readonly plan: Plan;
  readonly nowMs: number;
  resolve(decision: RateDecision): void;
  done: boolean;
}

export class BrokerRateLimiter implements RateLimiter {
  readonly stats: LimiterStats = { calls: 0, operations: 0, leased: 0, waited: 0, fallback: 0 };
  private readonly calls: WindowCalls;
  private readonly alone: AloneWindows;
  private readonly keys = new Map<string, KeyWindow>();
  /** keys with a lease to ask for in the next call */
  private readonly asks = new Set<KeyWindow>();
  private finalizing: Lease[] = [];
  private peeks: Peek[] = [];
  private immediate: NodeJS.Immediate | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly sweeper: NodeJS.Timeout;
  private readonly unsubscribe: () => void;
  private readonly nodeId = randomBytes(6).toString('base64url');
  private seq = 0;
  private warned = false;
  private readonly leaseMs: number;
  private readonly fullRecheckMs: number;
  private readonly waitMs: number;
  private readonly backgroundMs: number;
  private readonly clock: () => number;
  /** what a key's window asks of this limiter */
  private readonly host: WindowHost;

  constructor(
    private readonly broker: Broker,
    options: BrokerLimiterOptions = {},
  ) {
    this.leaseMs = options.leaseMs ?? 1000;
    this.fullRecheckMs = options.fullRecheckMs ?? 250;
    this.waitMs = options.waitMs ?? 2000;
    this.backgroundMs = options.backgroundMs ?? 10;
    this.clock = options.clock ?? Date.now;
    this.host = {
      leaseMs: this.leaseMs,
      clock: this.clock,
      finalize: (lease) => this.queueFinalize(lease),
      askEarly: (k) => this.ask(k, false),
    };
    this.calls = new WindowCalls(broker, this.leaseMs, options.brokerClock ?? null);
    // what a node lets through alone is sent when the broker answers again (a call that was only
    // slow), else when it is back
    this.alone = new AloneWindows(
      options.fallback ?? new SlidingWindowLimiter(),
      () => `${this.grantId()}a`,
      this.clock,
      () => {
        if (broker.state === 'up') this.schedule(false);
      },
    );
    this.sweeper = setInterval(() => this.sweep(), Math.max(50, this.leaseMs >> 1));
    this.sweeper.unref();
    this.unsubscribe = broker.onState((state) => {
      if (state === 'down') {
        // nobody waits for a broker that is gone: the node's own window answers them
        for (const k of this.keys.values()) {
          k.asking = null;
          this.answerAlone(k);
        }
      } else this.schedule(false);
    });
  }

  /** decisions taken by the node's own window since start (the broker was away or slow) */
  get fallbackDecisions(): number {
    return this.stats.fallback;
  }

  /** What this node holds of a key's window: unspent slots, and the live leases' full sizes. */
  holding(keyId: string): { held: number; leased: number } {
    const k = this.keys.get(keyId);
    return { held: k?.held ?? 0, leased: (k?.current?.size ?? 0) + (k?.next?.size ?? 0) };
  }

  take(keyId: string, plan: Plan, nowMs: number): RateDecision | Promise<RateDecision> {
    const k = this.keys.get(keyId);
    if (k !== undefined) {
      const lease = k.current;
      // the request's nowMs may be older (it waited for its key): leases go by the clock now
      const at = this.clock();
      if (
        lease !== null &&
        lease.left > 0 &&
        at < lease.expiresMs &&
        k.quota === PLAN_LIMITS[plan].requests_per_window
      ) {
        this.stats.leased++;
        return k.spend(lease, nowMs, at);
      }
    }
    return this.takeSlow(keyId, plan, nowMs);
  }

  peek(keyId: string, plan: Plan, nowMs: number): RateDecision | Promise<RateDecision> {
    const k = this.keys.get(keyId);
    if (k !== undefined && k.quota === PLAN_LIMITS[plan].requests_per_window) {
      const at = this.clock();
      k.usable(at);
      if (at - k.syncedMs < this.leaseMs) return k.peek(nowMs);
    }
    if (this.broker.state !== 'up') return this.alone.peek(keyId, plan, nowMs);
    return new Promise((resolve) => {
      this.peeks.push({ keyId, plan, nowMs, resolve, done: false });
      this.schedule(true);
    });
  }

  refund(keyId: string, decision: RateDecision): void | Promise<void> {
    if (decision.takenAtMs === null) return;
    const lease = (decision as Partial<LeaseDecision>).lease;
    if (lease instanceof Lease) {
      if (lease.used === 0) return;
      lease.used--;
      lease.window.fullUntilMs = 0;
      if (!lease.ended) {
        lease.left++;
        lease.window.held++;
      } else this.queueFinalize(lease);
      return;
    }
    const alone = this.alone.refund(keyId, decision);
    if (alone !== false) return alone;
  }

  /** Sends whatever waits for a call now (tests; close). */
  async flush(): Promise<void> {
    if (this.immediate) clearImmediate(this.immediate);
    if (this.timer) clearTimeout(this.timer);
    this.immediate = null;
    this.timer = null;
    if (this.broker.state !== 'up') {
      for (const k of this.asks) this.answerAlone(k);
      this.asks.clear();
      for (const p of this.peeks.splice(0)) this.peekAlone(p);
      return;
    }
    const ops = this.collect();
    if (ops.length) await this.exchange(ops);
  }

  /** Ends every lease this node holds: their unspent slots go back to the shared window. */
  async close(): Promise<void> {
    clearInterval(this.sweeper);
    this.unsubscribe();
    for (const k of this.keys.values()) {
      if (k.current) k.end(k.current);
      if (k.next) k.end(k.next);
    }
    await Promise.race([this.flush(), new Promise((r) => setTimeout(r, this.waitMs).unref())]);
    this.keys.clear();
  }

  /** Leases expired with nobody spending them are finalized; idle keys forgotten (tests call it). */
  sweep(): void {
    const now = this.clock();
    for (const [keyId, k] of this.keys) {
      while (k.current !== null && now >= k.current.expiresMs) k.end(k.current);
      if (k.next !== null && now >= k.next.expiresMs) k.end(k.next);
      // kept a while after its last request, so a key back after a pause starts at its lease size
      if (k.current === null && k.asking === null && k.waiters.length === 0 && now - k.lastUseMs > FORGET_MS) {
        this.keys.delete(keyId);
        this.asks.delete(k);
      }
    }
  }

  private takeSlow(keyId: string, plan: Plan, nowMs: number): RateDecision | Promise<RateDecision> {
    const quota = PLAN_LIMITS[plan].requests_per_window;
    let k = this.keys.get(keyId);
    if (k === undefined || k.quota !== quota) {
      // a plan change: the same shared window, asked for at the new quota
      if (k) {
        if (k.current) k.end(k.current);
        if (k.next) k.end(k.next);
      }
      k = new KeyWindow(keyId, plan, quota, this.host);
      this.keys.set(keyId, k);
    }
    const at = this.clock();
    k.lastUseMs = at;
    const lease = k.usable(at);
    if (lease !== null) {
      this.stats.leased++;
      return k.spend(lease, nowMs, at);
    }
    if (k.waiters.length === 0 && k.fullUntilMs > at) return k.refusal(nowMs);
    if (this.broker.state !== 'up') return this.takeAlone(k, nowMs);
    return new Promise((resolve) => {
      k.waiters.push({ nowMs, resolve });
      this.ask(k, true);
    });
  }

  private queueFinalize(lease: Lease): void {
    if (lease.queued) return;
    lease.queued = true;
    this.finalizing.push(lease);
    this.schedule(false);
  }

  private ask(k: KeyWindow, urgent: boolean): void {
    if (k.asking === null) this.asks.add(k);
    this.schedule(urgent);
  }

  /** Urgent work (a request waits) goes at the end of this event-loop turn; the rest within backgroundMs. */
  private schedule(urgent: boolean): void {
    if (urgent) {
      if (this.timer) clearTimeout(this.timer);
      this.timer = null;
      this.immediate ??= setImmediate(() => void this.flush());
    } else if (this.immediate === null && this.timer === null) {
      this.timer = setTimeout(() => void this.flush(), this.backgroundMs);
      this.timer.unref();
    }
  }

  private collect(): Op[] {
    const ops: Op[] = [];
    for (const k of this.asks) {
      if (k.asking !== null) continue;
      const need = k.waiters.length;
      // asked for early but already served by a lease that came meanwhile, or forgotten since
      if (need === 0 && (k.next !== null || this.keys.get(k.keyId) !== k)) continue;
      const want = Math.max(need, k.size);
      const op: Op = { kind: 'g', keyId: k.keyId, id: this.grantId(), a: k.quota, b: want, c: need, window: k };
      k.asking = op;
      ops.push(op);
    }
    this.asks.clear();
    for (const lease of this.finalizing) {
      lease.queued = false;
      const at = lease.lastSpendBrokerMs(this.leaseMs);
      ops.push({ kind: 'f', keyId: lease.window.keyId, id: lease.id, a: lease.used, b: at, c: 0, lease });
    }
    this.finalizing = [];
    const now = this.clock();
    for (const merge of this.alone.toSend()) {
      const ago = Math.max(0, now - merge.lastMs);
      ops.push({ kind: 'm', keyId: merge.keyId, id: merge.id, a: merge.count, b: ago, c: 0, merge });
    }
    for (const peek of this.peeks) ops.push({ kind: 'p', keyId: peek.keyId, id: '', a: 0, b: 0, c: 0, peek });
    this.peeks = [];
    return ops;
  }

  private grantId(): string {
    return `${this.nodeId}.${(++this.seq).toString(36)}`;
  }

  private async exchange(ops: Op[]): Promise<void> {
    this.stats.calls++;
    this.stats.operations += ops.length;
    const sentMs = this.clock();
    let settled = false;
    const timeout = setTimeout(() => {
      // the requests waiting are answered by this node's window; a late reply still counts
      settled = true;
      this.giveUp(ops);
    }, this.waitMs);
    timeout.unref();
    try {
      const reply = await this.calls.send(ops);
      clearTimeout(timeout);
      this.warned = false;
      this.apply(ops, reply.values, reply.nowMs, sentMs);
    } catch (err) {
      clearTimeout(timeout);
      if (!this.warned) this.broker.log.warn({ err }, 'shared rate windows unavailable; this node counts alone');
      this.warned = true;
      if (!settled) this.giveUp(ops);
    }
  }

  /** A call that failed or took too long: waiting requests are answered here, the rest is sent again. */
  private giveUp(ops: Op[]): void {
    for (const op of ops) {
      if (op.kind === 'g') {
        const k = op.window!;
        if (k.asking !== op) continue;
        k.asking = null;
        this.answerAlone(k);
      } else if (op.kind === 'f') this.queueFinalize(op.lease!);
      else if (op.kind === 'm') this.alone.unsent(op.merge!);
      else this.peekAlone(op.peek!);
    }
  }

  private apply(ops: Op[], values: readonly number[], brokerNow: number, sentMs: number): void {
    const localNow = this.clock();
    for (let i = 0; i < ops.length; i++) {
      const op = ops[i]!;
      const granted = values[i * 3]!;
      const total = values[i * 3 + 1]!;
      const oldest = values[i * 3 + 2]!;
      const k = op.window ?? op.lease?.window ?? this.keys.get(op.keyId);
      if (k !== undefined) {
        // a lease the reply may no longer count (trimmed) must not count as held either
        k.usable(localNow);
        k.total = total;
        // the broker's instant on this clock, taken at the reply: late by at most the round trip
        k.resetAtMs = oldest >= 0 ? oldest + WINDOW_MS - brokerNow + localNow : 0;
        k.syncedMs = localNow;
      }
      if (op.kind === 'g') this.granted(op, granted, sentMs, brokerNow, localNow);
      else if (op.kind === 'm') this.alone.sent(op.merge!);
      else if (op.kind === 'p') {
        const peek = op.peek!;
        if (peek.done) continue;
        peek.done = true;
        const quota = PLAN_LIMITS[peek.plan].requests_per_window;
        const resetMs = oldest >= 0 ? Math.max(0, oldest + WINDOW_MS - brokerNow) : 0;
        peek.resolve(
          k !== undefined && k.quota === quota
            ? k.peek(peek.nowMs)
            : new LeaseDecision(true, quota, Math.max(0, quota - total), resetMs, 0, null, null),
        );
      }
    }
  }

  private granted(op: Op, granted: number, sentMs: number, brokerNow: number, localNow: number): void {
    const k = op.window!;
    if (k.asking === op) k.asking = null;
    if (granted > 0) {
      const lease = new Lease(k, op.id, granted, sentMs, sentMs + this.leaseMs, brokerNow);
      k.held += granted;
      k.fullUntilMs = 0;
      if (k.current === null) {
        k.current = lease;
        lease.activeFromMs = localNow;
      } else if (k.next === null) k.next = lease;
      else k.end(lease);
    } else if (op.c === 0) {
      // nothing to spare for an early ask (the window is nearly full): not again for a while
      k.earlyAskAfterMs = localNow + this.fullRecheckMs;
    }
    while (k.waiters.length > 0) {
      const lease = k.usable(localNow);
      if (lease === null) break;
      const waiter = k.waiters.shift()!;
      this.stats.waited++;
      waiter.resolve(k.spend(lease, waiter.nowMs, localNow));
    }
    if (this.keys.get(k.keyId) !== k) {
      // the key changed plan meanwhile: this window only serves the requests it already had
      if (k.current) k.end(k.current);
      if (k.next) k.end(k.next);
    }
    if (k.waiters.length === 0) return;
    if (k.total < k.quota) {
      // requests that came after the ask: room is left, ask again
      this.ask(k, true);
      return;
    }
    k.fullUntilMs = Math.min(localNow + this.fullRecheckMs, Math.max(k.resetAtMs, localNow + 1));
    for (const waiter of k.waiters.splice(0)) waiter.resolve(k.refusal(waiter.nowMs));
  }

  /** The node's own window answers the requests waiting on `k`. */
  private answerAlone(k: KeyWindow): void {
    for (const waiter of k.waiters.splice(0)) {
      const decision = this.takeAlone(k, waiter.nowMs);
      if (decision instanceof Promise) void decision.then(waiter.resolve);
      else waiter.resolve(decision);
    }
  }

  private takeAlone(k: KeyWindow, nowMs: number): RateDecision | Promise<RateDecision> {
    this.stats.fallback++;
    return this.alone.take(k.keyId, k.plan, nowMs);
  }

  private peekAlone(peek: Peek): void {
    if (peek.done) return;
    peek.done = true;
    void Promise.resolve(this.alone.peek(peek.keyId, peek.plan, peek.nowMs)).then(peek.resolve);
  }
}
