// The account routes through inject(): the parts the socket test does not reach (open streams
// from the real connection meter, a failing flush, an asynchronous limiter, a key deleted after
// it was cached).
import t, { type Test } from 'tap';
import { Db } from '../../store/db.ts';
import { ConnectionMeter } from '../../stream/connection-meter.ts';
import { RequestHandler } from '../request-handler.ts';
import { KeyStore } from '../../accounts/auth.ts';
import { CursorCodec } from '../cursor.ts';
import { createKey } from '../../accounts/keys.ts';
import { SlidingWindowLimiter, type RateLimiter } from '../../accounts/limiter.ts';
import { DbMeter, type Meter } from '../../accounts/meter.ts';
import type { StreamTag } from '../sse-routes.ts';
import { accountRoutes, connectionStreamsView, type AccountRouteDeps, type OpenStreamsView } from './account.ts';
import { logInto } from '../../test/support/logs.ts';
import { buildOpenApi } from '../../docs/openapi.ts';
import { MemoryMeter } from '../../test/support/meter.ts';
import type { JsonBody } from '../../test/support/json.ts';

const NOW = Date.UTC(2024, 4, 10, 15, 0, 0);

async function setup(t: Test, deps: Partial<Omit<AccountRouteDeps, 'db'>> = {}) {
  const db = await Db.open(':memory:');
  const clock = { now: NOW };
  const limiter = deps.limiter ?? new SlidingWindowLimiter();
  const chainMeter = new MemoryMeter();
  const logged: unknown[] = [];
  const keys = new KeyStore(db, { recheckMs: 60_000, clock: () => clock.now });
  const app = new RequestHandler({
    routes: accountRoutes({ db, log: logInto((message, line) => logged.push([message, line.err])), ...deps, limiter }),
    keys,
    limiter,
    meter: chainMeter,
    cursors: new CursorCodec('account-test-secret'),
    clock: () => clock.now,
    log: logInto((message, line) => logged.push([message, line.err])),
    maxBodyBytes: 1024,
    responseCacheEntries: 10,
  });
  t.teardown(async () => {
    await app.close();
    await db.close();
  });
  return { db, app, clock, logged, chainMeter, limiter };
}

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

t.test('account: key, plan, window and open streams', async (t) => {
  const open = new Map<string, Array<{ endpoint: string; openedAtMs: number }>>();
  const streams: OpenStreamsView = { openFor: (id) => open.get(id) ?? [] };
  const { db, app, chainMeter } = await setup(t, { streams });
  const created = await createKey(db, { plan: 'regular', name: 'dashboard' });
  open.set(created.id, [
    { endpoint: '/api/v1/events/stream', openedAtMs: NOW - 61_000 },
    { endpoint: '/api/v1/alerts', openedAtMs: NOW },
    // a clock that stepped back never gives a stream less than its first minute
    { endpoint: '/api/v1/bus/realtime', openedAtMs: NOW + 5_000 },
  ]);
  open.set('key_someone_else', [{ endpoint: '/api/v1/alerts', openedAtMs: NOW }]);
  const res = await app.inject({ url: '/api/v1/account', headers: bearer(created.key) });
  t.equal(res.status, 200);
  const body = res.json<JsonBody>();
  t.same(body.key, {
    id: created.id,
    prefix: created.prefix,
    name: 'dashboard',
    test: false,
    created_at: created.created_at,
  });
  t.equal(body.plan, 'regular');
  t.same(body.limits, {
    requests_per_window: 600,
    window_seconds: 300,
    sse_streams: 2,
    max_page_size: 100,
    history_exports: false,
    webhook_endpoints: 100,
  });
  t.same(body.window, { limit: 600, remaining: 600, reset_seconds: 0 });
  t.same(body.streams, {
    open: 3,
    allowed: 2,
    connections: [
      { endpoint: '/api/v1/events/stream', opened_at: new Date(NOW - 61_000).toISOString(), minutes: 2 },
      { endpoint: '/api/v1/alerts', opened_at: new Date(NOW).toISOString(), minutes: 1 },
      { endpoint: '/api/v1/bus/realtime', opened_at: new Date(NOW + 5_000).toISOString(), minutes: 1 },
    ],
  });
  t.equal(res.headers['x-meter-unit'], undefined, 'not metered');
  t.equal(res.headers['x-ratelimit-remaining'], '600', 'the window is shown, not taken');
  t.same(chainMeter.records, [], 'nothing recorded');
});

t.test('without a streams view nothing is open', async (t) => {
  const { db, app } = await setup(t);
  const created = await createKey(db, { plan: 'max', test: true });
  const body = (await app.inject({ url: '/api/v1/account', headers: bearer(created.key) })).json<JsonBody>();
  t.same(body.streams, { open: 0, allowed: 25, connections: [] });
  t.equal(body.key.name, null);
  t.equal(body.limits.history_exports, false, 'test keys get no bulk history');
});

t.test("connectionStreamsView lists the key's open streams from the meter", async (t) => {
  let now = NOW;
  const minutes: Array<[string, number]> = [];
  const meter = new ConnectionMeter<StreamTag>({
    sink: { record: (tag, n) => minutes.push([tag.requestId, n]) },
    now: () => now,
  });
  const tag = (keyId: string, endpoint: string, requestId: string): StreamTag => ({
    keyId,
    plan: 'max',
    test: false,
    endpoint,
    requestId,
  });
  const first = meter.openStream(tag('k1', '/api/v1/events/stream', 'r1'));
  now += 1_000;
  meter.openStream(tag('k2', '/api/v1/events/stream', 'r2'));
  now += 1_000;
  meter.openStream(tag('k1', '/api/v1/alerts', 'r3'));
  const view = connectionStreamsView(meter);
  t.same(view.openFor('k1'), [
    { endpoint: '/api/v1/events/stream', openedAtMs: NOW },
    { endpoint: '/api/v1/alerts', openedAtMs: NOW + 2_000 },
  ]);
  first.close();
  t.same(view.openFor('k1'), [{ endpoint: '/api/v1/alerts', openedAtMs: NOW + 2_000 }], 'a closed stream is gone');
  t.same(view.openFor('k3'), []);
  t.same(
    meter.openWhere(() => true).map((o) => o.tag.requestId),
    ['r2', 'r3'],
    'openWhere reads, oldest first',
  );
  t.same(
    minutes,
    [
      ['r1', 1],
      ['r2', 1],
      ['r3', 1],
    ],
    'reading records nothing; a close within the first minute adds none',
  );
});

t.test('usage: the meter is flushed first; a failing flush still answers', async (t) => {
  let flushes = 0;
  let failing = false;
  const holder: { meter?: DbMeter } = {};
  const meter: Meter = {
    record: (u) => holder.meter!.record(u),
    flush: () => {
      flushes++;
      return failing ? Promise.reject(new Error('disk full')) : holder.meter!.flush();
    },
    close: () => holder.meter!.close(),
  };
  const { db, app, logged } = await setup(t, { meter });
  // never started: only the route's flush writes what was recorded
  holder.meter = new DbMeter(db, { flushMs: 3_600_000, batchRows: 10_000 });
  const created = await createKey(db, { plan: 'free' });
  const usage = (n: number, status = 200) => {
    for (let i = 0; i < n; i++) {
      meter.record({
        keyId: created.id,
        plan: 'free',
        test: false,
        unit: 'request',
        quantity: 1,
        method: 'GET',
        endpoint: '/api/v1/alerts',
        status,
        latencyMs: 1,
        atMs: NOW - 1000,
        requestId: `req_${i}`,
      });
    }
  };
  usage(3);
  usage(1, 404);
  const res = await app.inject({ url: '/api/v1/account/usage?days=2', headers: bearer(created.key) });
  t.equal(res.status, 200);
  t.same(res.json(), {
    from: '2024-05-09',
    to: '2024-05-10',
    unit_timezone: 'UTC',
    days: [
      { date: '2024-05-09', requests: 0, connection_minutes: 0, errors: 0 },
      { date: '2024-05-10', requests: 4, connection_minutes: 0, errors: 1 },
    ],
    totals: { requests: 4, connection_minutes: 0, errors: 1 },
  });
  t.equal(flushes, 1);

  failing = true;
  usage(5);
  const stale = await app.inject({ url: '/api/v1/account/usage', headers: bearer(created.key) });
  t.equal(stale.status, 200, 'answered without the pending rows');
  t.equal(stale.json<{ days: unknown[]; totals: { requests: number } }>().totals.requests, 4);
  t.equal(stale.json<{ days: unknown[] }>().days.length, 14, 'default 14 days');
  t.match(logged, [[/flush before the account usage read failed/, { message: 'disk full' }]]);
  // before the database closes
  await holder.meter.close();
});

t.test('an asynchronous limiter is awaited', async (t) => {
  const inner = new SlidingWindowLimiter();
  const limiter: RateLimiter = {
    take: async (...args) => inner.take(...args),
    peek: async (...args) => inner.peek(...args),
    refund: async (...args) => inner.refund(...args),
  };
  const { db, app } = await setup(t, { limiter });
  const created = await createKey(db, { plan: 'free' });
  inner.take(created.id, 'free', NOW - 60_000);
  inner.take(created.id, 'free', NOW - 30_000);
  const body = (await app.inject({ url: '/api/v1/account', headers: bearer(created.key) })).json<JsonBody>();
  t.same(body.window, { limit: 20, remaining: 18, reset_seconds: 240 });
});

t.test('a key deleted after authentication is refused', async (t) => {
  const { db, app } = await setup(t);
  const created = await createKey(db, { plan: 'regular' });
  t.equal((await app.inject({ url: '/api/v1/account', headers: bearer(created.key) })).status, 200);
  await db.run('DELETE FROM api_keys WHERE id = $1', [created.id]);
  const res = await app.inject({ url: '/api/v1/account', headers: bearer(created.key) });
  t.equal(res.status, 401);
  t.equal(res.json<{ code: string }>().code, 'unauthorized');
});

t.test('the OpenAPI document describes both routes as unmetered key routes', async (t) => {
  const { app } = await setup(t);
  const paths = buildOpenApi(app.routes).paths as Record<string, Record<string, Record<string, unknown>>>;
  for (const [path, id] of [
    ['/api/v1/account', 'getAccount'],
    ['/api/v1/account/usage', 'getAccountUsage'],
  ] as const) {
    const op = paths[path]?.get;
    t.equal(op?.operationId, id);
    t.same(op?.security, [{ bearerAuth: [] }]);
    t.equal(op?.['x-meter-unit'], undefined);
    t.same(op?.tags, ['Account']);
    t.match(op?.description, /Needs a key; not metered, and not counted against the rate limit window/);
  }
});

t.test('usage: a key looping on the free call reuses one read until it makes a metered call', async (t) => {
  let flushes = 0;
  const meter: Meter = {
    record: () => undefined,
    flush: async () => {
      flushes++;
    },
    close: async () => undefined,
  };
  const { db, app, clock, limiter } = await setup(t, { meter });
  const created = await createKey(db, { plan: 'regular' });
  const usage = () => app.inject({ url: '/api/v1/account/usage?days=3', headers: bearer(created.key) });
  t.equal((await usage()).status, 200);
  for (let i = 0; i < 5; i++) await usage();
  t.equal(flushes, 1, 'six calls within seconds: one flush and one read');
  await limiter.take(created.id, 'regular', clock.now);
  await usage();
  t.equal(flushes, 2, 'a metered call since: read again');
  clock.now += 5_000;
  await usage();
  t.equal(flushes, 3, 'and again once the reuse window passed');
  t.equal((await app.inject({ url: '/api/v1/account/usage?days=4', headers: bearer(created.key) })).status, 200);
  t.equal(flushes, 4, 'other days: another read');
});
