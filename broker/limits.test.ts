import t from 'tap';
import { until } from '../test/support/wait.ts';
import { ApiError } from '../core/errors.ts';
import { captureLogs } from '../test/support/logs.ts';
import { brokerMissing, startBroker } from '../test/support/broker-servers.ts';
import { BrokerStreamAllowance } from './allowance.ts';
import { BrokerRateLimiter } from './limiter.ts';
import { Broker } from './redis.ts';
import { revocationNotices } from './revocations.ts';

const missing = brokerMissing('redis');
const logs = captureLogs('warn');

t.test('limits shared by two nodes', { skip: missing }, async (t) => {
  const server = await startBroker('redis');
  const a = await new Broker({ url: server.url, prefix: 'l:', log: logs.logger }).ready();
  const b = await new Broker({ url: server.url, prefix: 'l:', log: logs.logger }).ready();
  t.teardown(async () => {
    await a.close();
    await b.close();
    await server.close();
  });

  await t.test('700 requests of one Regular key over two nodes: exactly 600 allowed', async (t) => {
    const la = new BrokerRateLimiter(a);
    const lb = new BrokerRateLimiter(b);
    t.teardown(async () => {
      await la.close();
      await lb.close();
    });
    const now = Date.now();
    const decisions = await Promise.all(
      Array.from({ length: 700 }, (_, i) => (i % 2 ? la : lb).take('key_r', 'regular', now)),
    );
    t.equal(decisions.filter((d) => d.allowed).length, 600);
    // one call per node asks for the turn's requests; a node whose reply came first may also have
    // sent its background finalize of the lease it spent (10 ms on) before the other's reply came
    // (CI, loaded, once)
    const calls = la.stats.calls + lb.stats.calls;
    t.ok(
      calls >= 2 && calls <= 4,
      `one call per node for the requests of one turn, plus its finalize at most (${calls})`,
    );
    const refused = decisions.find((d) => !d.allowed)!;
    t.equal(refused.remaining, 0);
    // a live lease counts at its expiry (1 s after its grant) until its node says when it was spent
    // (measured from the request's instant, `now`)
    t.ok(refused.retryAfterMs > 0 && refused.retryAfterMs <= 301_000 + (Date.now() - now));
    // a 304 gives its request back to the node that counted it; the other node sees it once it
    // reached the broker and that node's memo of the full window (250 ms) is over
    const onB = decisions.find((d, i) => d.allowed && i % 2 === 0)!;
    await lb.refund('key_r', onB);
    await lb.flush();
    await new Promise((r) => setTimeout(r, 300));
    t.ok((await la.take('key_r', 'regular', now)).allowed, 'the refunded slot is taken on the other node');
    t.notOk((await lb.take('key_r', 'regular', now)).allowed);
    t.equal((await lb.peek('key_r', 'regular', now)).remaining, 0, 'peek counts nothing');
    t.equal(la.fallbackDecisions + lb.fallbackDecisions, 0);
  });

  await t.test('a third stream of a Regular key is refused across nodes; leases free on release', async (t) => {
    const sa = new BrokerStreamAllowance(a, { leaseTtlMs: 2000 }).start();
    const sb = new BrokerStreamAllowance(b, { leaseTtlMs: 2000 }).start();
    t.teardown(async () => {
      await sa.close();
      await sb.close();
    });
    const one = await sa.acquire('key_s', 2, 'regular');
    await sb.acquire('key_s', 2, 'regular');
    const third = await sa.acquire('key_s', 2, 'regular').catch((e: unknown) => e);
    t.ok(third instanceof ApiError && third.code === 'sse_allowance_exceeded');
    const free = await sb.acquire('key_f', 0, 'free').catch((e: unknown) => e);
    t.ok(free instanceof ApiError && free.code === 'forbidden_plan');
    one.release();
    one.release();
    await new Promise((r) => setTimeout(r, 50));
    const again = await sb.acquire('key_s', 2, 'regular');
    t.ok(again, 'the released slot is free on the other node');
    // leases stay while renewed past their ttl
    await new Promise((r) => setTimeout(r, 2500));
    t.ok(
      (await sa.acquire('key_s', 2, 'regular').catch((e: unknown) => e)) instanceof ApiError,
      'renewed leases still count',
    );
    // a node that dies stops renewing: its leases expire
    await sb.close();
    await new Promise((r) => setTimeout(r, 2300));
    t.ok(await sa.acquire('key_s', 2, 'regular'), "a dead node's leases expired");
  });

  await t.test('a revocation reaches every node', async (t) => {
    const seenA: string[] = [];
    const seenB: string[] = [];
    const na = await revocationNotices(a, { revoked: (k) => seenA.push(k), resync: () => seenA.push('*') });
    const nb = await revocationNotices(b, { revoked: (k) => seenB.push(k), resync: () => seenB.push('*') });
    t.teardown(async () => {
      await na.close();
      await nb.close();
    });
    // pushed to each node's subscription (pub/sub latency: bench/broker.ts), not polled
    await na.publish('key_x');
    await until('both nodes', () => seenA.includes('key_x') && seenB.includes('key_x'));
    t.same([seenA, seenB], [['key_x'], ['key_x']], 'once on each node, no resync');
  });
});

t.test(
  'the broker down: each node counts alone, and the shared window returns with it',
  { skip: missing },
  async (t) => {
    const server = await startBroker('redis');
    const a = await new Broker({ url: server.url, prefix: 'f:', log: logs.logger }).ready();
    t.teardown(async () => {
      await a.close();
      await server.close();
    });
    // leases of 50 ms: the test waits them out rather than spend them
    const limiter = new BrokerRateLimiter(a, { leaseMs: 50 });
    t.teardown(() => limiter.close());
    const seen: string[] = [];
    const notices = await revocationNotices(a, { revoked: (k) => seen.push(k), resync: () => seen.push('*') });
    t.teardown(() => notices.close());
    const now = Date.now();
    for (let i = 0; i < 10; i++) await limiter.take('key_f', 'free', now);
    await limiter.flush();
    await server.stop();
    await until('the lost connection', () => a.state === 'down');
    await new Promise((r) => setTimeout(r, 60));
    const local = await limiter.take('key_f', 'free', now);
    t.ok(local.allowed, 'per-node window while the broker is away');
    t.equal(limiter.fallbackDecisions, 1);
    await limiter.refund('key_f', local);
    const streams = new BrokerStreamAllowance(a);
    const lease = await streams.acquire('key_f2', 2, 'regular');
    t.equal(streams.openStreams('key_f2'), 1, 'a stream slot counted on this node while the broker is away');
    lease.release();
    t.equal(streams.openStreams('key_f2'), 0);
    const kept = await limiter.take('key_f', 'free', now);
    t.ok(kept.allowed && limiter.fallbackDecisions === 2);
    await server.restart();
    await until('the reconnect', () => a.state === 'up');
    await limiter.flush();
    await new Promise((r) => setTimeout(r, 60));
    const shared = await limiter.take('key_f', 'free', now);
    t.equal(
      shared.remaining,
      shared.limit - 12,
      'the shared window again, with what it counted before and the request let through alone',
    );
    await until('the resync after missed notices', () => seen.includes('*'));
  },
);

t.test('a broker that does not answer at start fails the start and leaves no reconnect loop', async (t) => {
  const broker = new Broker({ url: 'redis://127.0.0.1:1', prefix: 'x:', log: logs.logger });
  await t.rejects(broker.ready(300), /did not answer within 300 ms/);
  // a reconnect loop left running would keep this file from ending (tap's timeout fails it)
  t.equal(broker.state, 'down');
});
