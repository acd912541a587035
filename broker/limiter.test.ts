// The leased, batched shared window (broker/limiter.ts) on a real redis-server, with the nodes'
// and the broker's clocks driven by the test: exactness under interleavings of edges, a dead
// edge's lease, leases given back, the headers' figures, and the broker away or slow.
import type { Redis } from 'ioredis';
import t, { type Test } from 'tap';
import { SlidingWindowLimiter, type RateDecision } from '../accounts/limiter.ts';
import { PLAN_LIMITS, WINDOW_MS, type Plan } from '../accounts/plans.ts';
import { brokerMissing, startBroker, type BrokerServer } from '../test/support/broker-servers.ts';
import { captureLogs } from '../test/support/logs.ts';
import { until } from '../test/support/wait.ts';
import { BrokerRateLimiter, type BrokerLimiterOptions } from './limiter.ts';
import { Broker } from './redis.ts';
import { REDIS_LEASES_LUA } from './redis-scripts.ts';

const missing = brokerMissing('redis');
const logs = captureLogs('warn');
const START = 1_800_000_000_000;
const LEASE_MS = 1000;

/** One clock for the broker; each node reads it shifted by its own offset. */
class Clocks {
  now = START;
  node(offsetMs = 0): () => number {
    return () => this.now + offsetMs;
  }
  advance(ms: number): void {
    this.now += ms;
  }
}

async function nodes(
  t: Test,
  server: BrokerServer,
  prefix: string,
  clocks: Clocks,
  offsets: number[],
  options: BrokerLimiterOptions = {},
): Promise<Array<{ broker: Broker; limiter: BrokerRateLimiter }>> {
  const out: Array<{ broker: Broker; limiter: BrokerRateLimiter }> = [];
  for (const offset of offsets) {
    const broker = await new Broker({ url: server.url, prefix, log: logs.logger }).ready();
    const limiter = new BrokerRateLimiter(broker, {
      leaseMs: LEASE_MS,
      clock: clocks.node(offset),
      brokerClock: () => clocks.now,
      ...options,
    });
    out.push({ broker, limiter });
  }
  t.teardown(async () => {
    for (const n of out) {
      await n.limiter.close();
      await n.broker.close();
    }
  });
  return out;
}

const settle = (limiters: BrokerRateLimiter[]) => Promise.all(limiters.map((l) => l.flush()));

/** Takes `n` requests at once on one node, as one event-loop turn of requests would. */
async function burst(limiter: BrokerRateLimiter, key: string, plan: Plan, nowMs: number, n: number) {
  return Promise.all(Array.from({ length: n }, () => limiter.take(key, plan, nowMs)));
}

/** A tiny seeded generator, so a failing interleaving can be replayed. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let x = s;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

/** The most requests inside any window (t − 5 min, t] over the given instants. */
function busiestWindow(instants: number[]): number {
  const sorted = [...instants].sort((a, b) => a - b);
  let most = 0;
  let from = 0;
  for (let to = 0; to < sorted.length; to++) {
    while (sorted[from]! <= sorted[to]! - WINDOW_MS) from++;
    most = Math.max(most, to - from + 1);
  }
  return most;
}

t.test(
  'the script: leases shrink near the end, never past the quota; finalizing sets',
  { skip: missing },
  async (t) => {
    const server = await startBroker('redis');
    const broker = await new Broker({ url: server.url, prefix: 's:', log: logs.logger }).ready();
    t.teardown(async () => {
      await broker.close();
      await server.close();
    });
    const redis = broker.redis as Redis & { leases(n: number, ...args: Array<string | number>): Promise<number[]> };
    redis.defineCommand('leases', { lua: REDIS_LEASES_LUA });
    const keys = ['s:window:k', 's:window:k:n'];
    const call = (now: number, ...ops: Array<Array<string | number>>) =>
      redis.leases(2, ...keys, now, WINDOW_MS, LEASE_MS, ...ops.flatMap((op) => [1, ...op]));
    const now = START;
    // granted, total, oldest
    t.same(await call(now, ['g', 'a', 600, 60, 0]), [now, 60, 60, now + LEASE_MS], 'a lease counts at its expiry');
    t.same((await call(now, ['m', 'alone', 530, 0, 0])).slice(1), [0, 590, now]);
    t.same((await call(now, ['g', 'b', 600, 60, 0])).slice(1, 3), [2, 592], 'a quarter of the 10 left');
    t.same(
      (await call(now, ['g', 'c', 600, 60, 5])).slice(1, 3),
      [5, 597],
      'the 5 requests waiting, more than a quarter',
    );
    t.same((await call(now, ['g', 'd', 600, 60, 5])).slice(1, 3), [3, 600], 'never past the quota');
    t.same((await call(now, ['g', 'e', 600, 60, 1])).slice(1, 3), [0, 600]);
    const finalize: Array<string | number> = ['f', 'a', 10, now + 200, 0];
    t.same((await call(now, finalize)).slice(1, 3), [0, 550], 'the 50 slots lease a did not spend are free again');
    t.same((await call(now, finalize)).slice(1, 3), [0, 550], 'sent twice, counted once');
    t.same((await call(now, ['f', 'gone', 3, now, 0])).slice(1, 3), [0, 550], 'an unknown grant stays unknown');
    // 5 minutes after the merge (instant `now`): only the grants counted later are left
    t.same((await call(now + WINDOW_MS, ['p', '', 0, 0, 0])).slice(1), [0, 20, now + 200], 'the window trimmed');
    t.same(
      (await call(now + WINDOW_MS + LEASE_MS, ['p', '', 0, 0, 0])).slice(1),
      [0, 0, -1],
      'leases still live count until 5 minutes after their expiry',
    );
  },
);

t.test(
  'batched and leased: one call per turn for every key, then no call per request',
  { skip: missing },
  async (t) => {
    const server = await startBroker('redis');
    t.teardown(() => server.close());
    const clocks = new Clocks();
    const { limiter } = (await nodes(t, server, 'b:', clocks, [0]))[0]!;
    const keys = Array.from({ length: 50 }, (_, i) => `key${i}`);
    const first = await Promise.all(keys.map((k) => limiter.take(k, 'max', clocks.now)));
    t.ok(first.every((d) => d.allowed));
    t.equal(limiter.stats.calls, 1, "50 keys' first requests in one call");
    let sync = 0;
    for (let i = 0; i < 20_000; i++) {
      const d = limiter.take(keys[i % 50]!, 'max', clocks.now);
      if (d instanceof Promise) await d;
      else sync++;
      // requests arrive over time: let the early asks' calls run now and then
      if (i % 200 === 0) await new Promise((r) => setTimeout(r, 12));
    }
    t.ok(sync >= 19_000, `${sync} of 20,000 decided from a lease with no wait`);
    t.ok(limiter.stats.calls < 400, `${limiter.stats.calls} calls for 20,050 requests`);
    t.equal(limiter.stats.fallback, 0);
  },
);

// With backgroundMs huge, a call only goes out while the test awaits it, so no call spans a step of
// the clocks and the counts can be compared to the requests served to the lease's length; with
// backgroundMs 1, calls land between steps at random, and only the safety checks hold.
for (const [seed, backgroundMs] of [
  [1, 1e9],
  [2, 1e9],
  [3, 1],
  [4, 1],
] as const) {
  t.test(
    `exact under interleavings: 3 edges, skewed clocks, refunds, expiries (seed ${seed}, background ` +
      `${backgroundMs} ms)`,
    { skip: missing },
    async (t) => {
      const server = await startBroker('redis');
      t.teardown(() => server.close());
      const clocks = new Clocks();
      const offsets = [0, -7_000, 12_000];
      const edges = (await nodes(t, server, 'i:', clocks, offsets, { backgroundMs })).map((n) => n.limiter);
      const random = rng(seed);
      const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)]!;
      const plans: Array<[string, Plan]> = [
        ['free', 'free'],
        ['regular', 'regular'],
      ];
      // each allowed request, on the broker's clock, until refunded
      const accepted = new Map<
        string,
        Array<{ at: number; decision: RateDecision; edge: number; refunded: boolean }>
      >();
      for (const [key] of plans) accepted.set(key, []);
      for (let step = 0; step < 400; step++) {
        clocks.advance(pick([0, 0, 3, 40, 300, 900, 2_500, 20_000]));
        const e = Math.floor(random() * edges.length);
        const edge = edges[e]!;
        const [key, plan] = pick(plans);
        const action = random();
        if (action < 0.6) {
          const n = 1 + Math.floor(random() * (plan === 'free' ? 6 : 60));
          const decisions = await burst(edge, key, plan, clocks.now + offsets[e]!, n);
          for (const decision of decisions) {
            if (decision.allowed) accepted.get(key)!.push({ at: clocks.now, decision, edge: e, refunded: false });
          }
        } else if (action < 0.72) {
          // a 304 gives back a request it counted a moment ago, on the node that counted it
          const recent = accepted.get(key)!.filter((x) => x.edge === e && !x.refunded && x.at === clocks.now);
          if (recent.length) {
            const x = pick(recent);
            x.refunded = true;
            await edge.refund(key, x.decision);
          }
        } else if (action < 0.86) edge.sweep();
        else if (action < 0.93) await edge.flush();
        else await new Promise((r) => setTimeout(r, 15));
      }
      for (const [key, plan] of plans) {
        const quota = PLAN_LIMITS[plan].requests_per_window;
        const instants = accepted
          .get(key)!
          .filter((x) => !x.refunded)
          .map((x) => x.at);
        const most = busiestWindow(instants);
        t.ok(most <= quota, `${key}: at most ${quota} in any 5 minutes (${most}; ${instants.length} in all)`);
        t.equal(most, quota, `${key}: the window was filled at some point`);
      }
      // every lease ended and finalized: what is counted is what was served, give or take a lease's time
      clocks.advance(LEASE_MS);
      for (const edge of edges) edge.sweep();
      // twice: a reply may end a lease it grants (its key forgotten meanwhile)
      for (const edge of [...edges, ...edges]) await edge.flush();
      const observer = (await nodes(t, server, 'i:', clocks, [0]))[0]!.limiter;
      for (const [key, plan] of plans) {
        const quota = PLAN_LIMITS[plan].requests_per_window;
        const served = (from: number) =>
          accepted.get(key)!.filter((x) => !x.refunded && x.at > clocks.now - WINDOW_MS - from).length;
        const remaining = (await observer.peek(key, plan, clocks.now)).remaining;
        t.ok(
          remaining <= quota - served(0),
          `${key}: ${remaining} left as the broker counts, ${quota - served(0)} by the requests served`,
        );
        // slots the edges still hold (asked for early) count as taken
        const held = edges.reduce((n, l) => n + l.holding(key).held, 0);
        if (backgroundMs > 1) t.ok(remaining + held >= quota - served(LEASE_MS), 'counted late by less than a lease');
      }
      clocks.advance(WINDOW_MS + 60_000);
      for (const [key, plan] of plans) {
        t.equal(
          (await edges[1]!.peek(key, plan, clocks.now + offsets[1]!)).remaining,
          PLAN_LIMITS[plan].requests_per_window,
          `${key}: nothing is lost for good`,
        );
      }
      t.equal(
        edges.reduce((n, l) => n + l.stats.fallback, 0),
        0,
        'the broker answered every time',
      );
    },
  );
}

/** Spends a few leases on `limiter` so its next one is large, and leaves it holding some. */
async function warmUp(limiter: BrokerRateLimiter, key: string, plan: Plan, nowMs: number): Promise<number> {
  let served = 0;
  for (let i = 0; i < 40; i++) {
    if ((await limiter.take(key, plan, nowMs)).allowed) served++;
    await limiter.flush();
    if (limiter.holding(key).held >= 8) break;
  }
  return served;
}

t.test("a dead edge's lease counts whole until 5 minutes after its expiry", { skip: missing }, async (t) => {
  const server = await startBroker('redis');
  t.teardown(() => server.close());
  const clocks = new Clocks();
  const [a, b] = (await nodes(t, server, 'd:', clocks, [0, 500])) as [
    { broker: Broker; limiter: BrokerRateLimiter },
    { broker: Broker; limiter: BrokerRateLimiter },
  ];
  const quota = PLAN_LIMITS.regular.requests_per_window;
  const servedByA = await warmUp(a.limiter, 'k', 'regular', clocks.now);
  const { held, leased } = a.limiter.holding('k');
  t.ok(held > 0, `edge A holds ${held} unspent slots of ${leased}`);
  // edge A dies: no finalize, no return
  a.broker.redis.disconnect();
  const count = async (nowMs: number) => {
    const n = (await burst(b.limiter, 'k', 'regular', nowMs, quota)).filter((d) => d.allowed).length;
    // B's spent leases finalized (counted at their last request, not their expiry)
    await b.limiter.flush();
    return n;
  };
  t.equal(await count(clocks.now + 500), quota - servedByA - held, "A's unspent slots count as taken");
  // 5 minutes later, everything but A's live leases left the window
  clocks.advance(WINDOW_MS + 1);
  t.equal(await count(clocks.now + 500), quota - leased, 'counted at its expiry: still in the window');
  clocks.advance(LEASE_MS);
  const freed = await count(clocks.now + 500);
  t.equal(freed, leased, "5 minutes after the lease's expiry its slots are free again");
});

t.test('an idle edge gives its unspent lease back when it expires', { skip: missing }, async (t) => {
  const server = await startBroker('redis');
  t.teardown(() => server.close());
  const clocks = new Clocks();
  const [a, b] = (await nodes(t, server, 'r:', clocks, [0, -300])).map((n) => n.limiter) as [
    BrokerRateLimiter,
    BrokerRateLimiter,
  ];
  const quota = PLAN_LIMITS.regular.requests_per_window;
  const servedByA = await warmUp(a, 'k', 'regular', clocks.now);
  const { held } = a.holding('k');
  const taken = (await burst(b, 'k', 'regular', clocks.now - 300, quota)).filter((d) => d.allowed).length;
  t.equal(taken, quota - servedByA - held, 'refused while A holds slots');
  const refused = await b.take('k', 'regular', clocks.now - 300);
  t.notOk(refused.allowed);
  t.equal(refused.remaining, 0);
  t.ok(refused.retryAfterMs > 0 && refused.retryAfterMs <= WINDOW_MS + LEASE_MS);
  clocks.advance(LEASE_MS);
  a.sweep();
  await a.flush();
  t.same(a.holding('k'), { held: 0, leased: 0 });
  const later = (await burst(b, 'k', 'regular', clocks.now - 300, quota)).filter((d) => d.allowed).length;
  t.equal(later, held, "A's unspent slots, given back, are taken on B: the window filled exactly");
});

t.test('a node shutting down gives its unspent leases back', { skip: missing }, async (t) => {
  const server = await startBroker('redis');
  t.teardown(() => server.close());
  const clocks = new Clocks();
  const [a, b] = (await nodes(t, server, 'c:', clocks, [0, 0])).map((n) => n.limiter) as [
    BrokerRateLimiter,
    BrokerRateLimiter,
  ];
  const quota = PLAN_LIMITS.regular.requests_per_window;
  const servedByA = await warmUp(a, 'k', 'regular', clocks.now);
  t.ok(a.holding('k').held > 0);
  await a.close();
  const taken = (await burst(b, 'k', 'regular', clocks.now, quota)).filter((d) => d.allowed).length;
  t.equal(taken, quota - servedByA, 'every slot A did not spend is taken on B');
});

t.test('the headers: remaining and reset as one node sees the shared window', { skip: missing }, async (t) => {
  const server = await startBroker('redis');
  t.teardown(() => server.close());
  const clocks = new Clocks();
  const [a, b] = (await nodes(t, server, 'h:', clocks, [0, 0])).map((n) => n.limiter) as [
    BrokerRateLimiter,
    BrokerRateLimiter,
  ];
  const memory = new SlidingWindowLimiter();
  const decisions: RateDecision[] = [];
  for (let i = 0; i < 120; i++) {
    const shared = await a.take('k', 'regular', clocks.now);
    const local = memory.take('k', 'regular', clocks.now);
    t.equal(shared.remaining, local.remaining, `request ${i + 1}: the same remaining as one process`);
    decisions.push(shared);
    if (i % 7 === 0) await new Promise((r) => setTimeout(r, 12));
  }
  t.equal(decisions[0]!.resetMs, WINDOW_MS + LEASE_MS, 'a live lease counts at its expiry');
  await a.refund('k', decisions.at(-1)!);
  await a.flush();
  t.equal((await a.take('k', 'regular', clocks.now)).remaining, 480, 'a refund gives the slot back to its lease');
  // another edge spends 30: this one sees them at its next reply, and the other's unspent slots as taken
  const onB = (await burst(b, 'k', 'regular', clocks.now, 30)).filter((d) => d.allowed).length;
  t.equal(onB, 30);
  clocks.advance(LEASE_MS);
  a.sweep();
  b.sweep();
  await b.flush();
  await a.flush();
  // what B asked for early and holds unspent counts as taken, as any other edge's lease would
  t.equal(
    (await a.peek('k', 'regular', clocks.now)).remaining,
    600 - 120 - 30 - b.holding('k').held,
    'every spent lease finalized: exact',
  );
  const reset = (await a.peek('k', 'regular', clocks.now)).resetMs;
  t.equal(reset, WINDOW_MS - LEASE_MS, 'the oldest counted request leaves 5 minutes after it was made');
});

t.test(
  'the broker away: leases run out, then each node counts alone; afterwards it all counts',
  { skip: missing },
  async (t) => {
    const server = await startBroker('redis');
    t.teardown(() => server.close());
    const clocks = new Clocks();
    const [a, b] = (await nodes(t, server, 'o:', clocks, [0, 0])) as Array<{
      broker: Broker;
      limiter: BrokerRateLimiter;
    }> as [{ broker: Broker; limiter: BrokerRateLimiter }, { broker: Broker; limiter: BrokerRateLimiter }];
    const servedByA = await warmUp(a.limiter, 'k', 'regular', clocks.now);
    const { held } = a.limiter.holding('k');
    await server.stop();
    await until('both nodes see the broker gone', () => a.broker.state === 'down' && b.broker.state === 'down');
    const onLease = await burst(a.limiter, 'k', 'regular', clocks.now, held);
    t.ok(
      onLease.every((d) => d.allowed),
      'the lease held is spent to its end',
    );
    t.equal(a.limiter.stats.fallback, 0, 'without the node counting alone');
    const alone = await burst(a.limiter, 'k', 'regular', clocks.now, 700);
    t.equal(alone.filter((d) => d.allowed).length, 600, 'then the node counts alone: its own 600');
    t.equal((await burst(b.limiter, 'k', 'regular', clocks.now, 700)).filter((d) => d.allowed).length, 600, 'per node');
    await a.limiter.refund('k', alone[0]!);
    await server.restart();
    await until('both nodes reconnected', () => a.broker.state === 'up' && b.broker.state === 'up');
    await settle([a.limiter, b.limiter]);
    const c = (await nodes(t, server, 'o:', clocks, [0]))[0]!.limiter;
    const after = await c.take('k', 'regular', clocks.now);
    t.notOk(after.allowed, 'what the nodes let through alone is in the shared window now');
    const counted = 599 + 600 + servedByA + held;
    t.ok(counted > 600, `${counted} counted`);
    clocks.advance(WINDOW_MS + LEASE_MS + 1);
    t.equal((await c.peek('k', 'regular', clocks.now)).remaining, 600, 'and leave it 5 minutes later');
  },
);

t.test(
  'a broker that does not answer in time: the node answers alone, the late lease still counts',
  { skip: missing },
  async (t) => {
    const server = await startBroker('redis');
    t.teardown(() => server.close());
    const clocks = new Clocks();
    const [a] = (await nodes(t, server, 'p:', clocks, [0], { waitMs: 200 })) as [
      { broker: Broker; limiter: BrokerRateLimiter },
    ];
    const admin = await new Broker({ url: server.url, prefix: 'p:', log: logs.logger }).ready();
    t.teardown(() => admin.close());
    await admin.redis.call('CLIENT', 'PAUSE', '700', 'ALL');
    const started = Date.now();
    const decision = await a.limiter.take('k', 'regular', clocks.now);
    t.ok(decision.allowed);
    t.ok(Date.now() - started < 650, 'answered by the node alone before the broker did');
    t.equal(a.limiter.stats.fallback, 1);
    await until('the late lease', () => a.limiter.holding('k').leased > 0);
    const next = a.limiter.take('k', 'regular', clocks.now);
    t.notOk(next instanceof Promise, 'spent from the lease that came late');
    await a.limiter.flush();
    t.equal(
      (await a.limiter.peek('k', 'regular', clocks.now)).remaining,
      600 - 2,
      'both requests counted: the one decided alone merged',
    );
  },
);
