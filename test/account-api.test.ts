// The account API end to end on the real server: plans and limits, the window read without
// being used, usage per day from the DuckDB meter (flushed by the usage call itself), key and
// test-key isolation, parameter checks; and, composed like `serve`, a real event stream listed
// among the key's open streams and billed in connection-minutes.
// Every response is checked against the OpenAPI document the server generates.
import t, { type Test } from 'tap';
import { until } from './support/wait.ts';
import { openStreaming } from '../app/fanout.ts';
import { parseConfig } from '../core/config.ts';
import { InMemoryEventBus } from '../core/events.ts';
import { createApi } from '../app/api.ts';
import { createKey } from '../accounts/keys.ts';
import { SlidingWindowLimiter } from '../accounts/limiter.ts';
import { DbMeter, type Meter } from '../accounts/meter.ts';
import type { Plan } from '../accounts/plans.ts';
import { accountRoutes, connectionStreamsView } from '../http/routes/account.ts';
import { startServer } from '../http/server.ts';
import { Db } from '../store/db.ts';
import { checker, expectProblem, loadValidator } from './support/client.ts';
import { bearer, startHarness, type Harness } from './support/harness.ts';
import { demoDirectory, demoLive, NOW } from './support/network.ts';
import type { OpenApiValidator } from './support/openapi-validator.ts';
import { openSse } from './support/sse-client.ts';
import { logInto } from './support/logs.ts';
import type { JsonBody } from './support/json.ts';

const ACCOUNT = '/api/v1/account';
const USAGE = '/api/v1/account/usage';
const DAY_MS = 86_400_000;
const today = new Date(NOW).toISOString().slice(0, 10);
const dayBefore = (n: number) => new Date(NOW - n * DAY_MS).toISOString().slice(0, 10);

interface Server {
  h: Harness;
  validator: OpenApiValidator;
}

async function accountServer(t: Test): Promise<Server> {
  const limiter = new SlidingWindowLimiter();
  // the DuckDB meter needs the harness's database, which exists once the routes are made; it is
  // never started, so only the usage call's flush writes what the pipeline recorded
  const made: { meter?: DbMeter } = {};
  const meter: Meter = {
    record: (usage) => made.meter!.record(usage),
    flush: () => made.meter!.flush(),
    close: () => made.meter!.close(),
  };
  const h = await startHarness({
    limiter,
    meter,
    routes: ({ db }) => {
      made.meter = new DbMeter(db, { flushMs: 3_600_000, batchRows: 10_000 });
      return accountRoutes({ db, limiter, meter });
    },
  });
  t.teardown(() => h.close());
  return { h, validator: await loadValidator(h) };
}

// the specification's plans, written out rather than read from the code under test
const PLANS: Array<{ plan: Plan; test: boolean; limits: Record<string, number | boolean> }> = [
  {
    plan: 'free',
    test: false,
    limits: { requests_per_window: 20, sse_streams: 0, max_page_size: 20, history_exports: false },
  },
  {
    plan: 'regular',
    test: false,
    limits: { requests_per_window: 600, sse_streams: 2, max_page_size: 100, history_exports: false },
  },
  {
    plan: 'max',
    test: false,
    limits: { requests_per_window: 6000, sse_streams: 25, max_page_size: 1000, history_exports: true },
  },
  {
    plan: 'max',
    test: true,
    limits: { requests_per_window: 6000, sse_streams: 25, max_page_size: 1000, history_exports: false },
  },
];

t.test('account API', async (t) => {
  const s = await accountServer(t);
  const { h } = s;

  await t.test('each plan: the key, its limits, the window and streams', async (t) => {
    const call = checker(t, h, s.validator);
    for (const { plan, test, limits } of PLANS) {
      const created = await createKey(h.db, { plan, test, name: `${plan} dashboard` });
      const got = await call(ACCOUNT, bearer(created.key));
      t.equal(got.status, 200);
      t.same(got.json.key, {
        id: created.id,
        prefix: created.key.slice(0, 12),
        name: `${plan} dashboard`,
        test,
        created_at: created.created_at,
      });
      t.ok(!JSON.stringify(got.json).includes(created.key), 'the key itself is never shown');
      t.equal(got.json.plan, plan);
      t.same(
        got.json.limits,
        { ...limits, window_seconds: 300, webhook_endpoints: 100 },
        `${plan}${test ? ' test' : ''} limits`,
      );
      const quota = limits.requests_per_window as number;
      t.same(got.json.window, { limit: quota, remaining: quota, reset_seconds: 0 });
      t.same(got.json.streams, { open: 0, allowed: limits.sse_streams, connections: [] });
      t.equal(got.headers.get('x-meter-unit'), null, 'not metered');
      t.equal(got.headers.get('x-ratelimit-limit'), String(quota));
    }
  });

  await t.test('account calls are free; metered calls show in usage at once', async (t) => {
    const call = checker(t, h, s.validator);
    const created = await createKey(h.db, { plan: 'free' });
    const key = bearer(created.key);
    const first = await call('/api/v1/alerts', key);
    t.equal(first.status, 200);
    t.equal(first.headers.get('x-ratelimit-remaining'), '19');

    // more account calls than the plan's whole window holds
    for (let i = 0; i < 25; i++) {
      const got = await call(ACCOUNT, key);
      t.equal(got.status, 200);
      t.equal(got.json.window.remaining, 19);
      t.equal(got.headers.get('x-ratelimit-remaining'), '19', 'the headers show the window too');
    }
    let usage = await call(USAGE, key);
    t.equal(usage.status, 200);
    t.equal(usage.headers.get('x-meter-unit'), null);
    t.match(usage.json, {
      from: dayBefore(13),
      to: today,
      unit_timezone: 'UTC',
      totals: { requests: 1, connection_minutes: 0, errors: 0 },
    });
    t.equal(usage.json.days.length, 14);
    t.same(
      usage.json.days.at(-1),
      { date: today, requests: 1, connection_minutes: 0, errors: 0 },
      'the alerts call, and only it',
    );
    t.ok(
      usage.json.days.slice(0, -1).every((d: { requests: number }) => d.requests === 0),
      'earlier days are zeros',
    );

    expectProblem(t, await call('/api/v1/alerts?colour=red', key), 400, 'invalid_parameter', 'colour');
    usage = await call(USAGE, key);
    t.same(usage.json.totals, { requests: 2, connection_minutes: 0, errors: 1 }, 'a 400 is a request and an error');

    // use up the window: the account still answers, with nothing left
    for (let i = 0; i < 18; i++) t.equal((await fetch(`${h.url}/api/v1/alerts`, { headers: key })).status, 200);
    expectProblem(t, await call('/api/v1/alerts', key), 429, 'rate_limited');
    const exhausted = await call(ACCOUNT, key);
    t.equal(exhausted.status, 200);
    t.equal(exhausted.json.window.remaining, 0);
    t.ok(
      exhausted.json.window.reset_seconds > 0 && exhausted.json.window.reset_seconds <= 300,
      'resets within the window',
    );
    usage = await call(USAGE, key);
    t.equal(usage.status, 200);
    t.same(usage.json.totals, { requests: 21, connection_minutes: 0, errors: 2 }, '20 allowed, one 429');

    const rows = await h.db.all<{ n: bigint }>(
      `SELECT count(*) AS n FROM api_usage WHERE endpoint LIKE '/api/v1/account%'`,
    );
    t.equal(Number(rows[0]!.n), 0, 'no account call was metered');
  });

  await t.test('usage is per key; test keys are kept apart', async (t) => {
    const call = checker(t, h, s.validator);
    const a = bearer((await createKey(h.db, { plan: 'regular' })).key);
    const b = bearer((await createKey(h.db, { plan: 'regular' })).key);
    const test = await createKey(h.db, { plan: 'regular', test: true });
    for (let i = 0; i < 3; i++) t.equal((await call('/api/v1/alerts', a)).status, 200);
    for (let i = 0; i < 2; i++) t.equal((await call('/api/v1/bus', bearer(test.key))).status, 200);
    t.same((await call(USAGE, a)).json.totals, { requests: 3, connection_minutes: 0, errors: 0 });
    t.same(
      (await call(USAGE, b)).json.totals,
      { requests: 0, connection_minutes: 0, errors: 0 },
      "another key's calls never show",
    );
    t.equal((await call(ACCOUNT, b)).json.window.remaining, 600, 'nor use its window');
    t.same((await call(USAGE, bearer(test.key))).json.totals, { requests: 2, connection_minutes: 0, errors: 0 });
    const kept = await h.db.all<{ n: bigint }>('SELECT sum(calls) AS n FROM api_usage_test WHERE key_id = $1', [
      test.id,
    ]);
    t.equal(Number(kept[0]!.n), 2, "the test key's calls are in the test table");
    t.same((await call(USAGE, a)).json.totals.requests, 3, "and not in the live key's figures");
  });

  await t.test('days: 1 to 90, today included; anything else is 400', async (t) => {
    const call = checker(t, h, s.validator);
    const key = bearer(await h.key('regular'));
    const one = await call(`${USAGE}?days=1`, key);
    t.match(one.json, { from: today, to: today });
    t.equal(one.json.days.length, 1);
    const longest = await call(`${USAGE}?days=90`, key);
    t.match(longest.json, { from: dayBefore(89), to: today });
    t.equal(longest.json.days.length, 90);
    t.same(
      longest.json.days.map((d: { date: string }) => d.date),
      [...longest.json.days.map((d: { date: string }) => d.date)].sort(),
      'oldest first',
    );
    for (const days of ['0', '91', 'x', '1.5', '-1', '', '1e1', '%2014']) {
      expectProblem(t, await call(`${USAGE}?days=${days}`, key), 400, 'invalid_parameter', 'days');
    }
    expectProblem(t, await call(`${USAGE}?day=3`, key), 400, 'invalid_parameter', 'day');
    expectProblem(t, await call(`${ACCOUNT}?verbose=1`, key), 400, 'invalid_parameter', 'verbose');
    t.equal((await call(ACCOUNT, key)).json.window.remaining, 600, 'refused account calls cost nothing either');
  });

  await t.test('a key is required', async (t) => {
    const call = checker(t, h, s.validator);
    for (const path of [ACCOUNT, USAGE]) {
      const none = await call(path);
      expectProblem(t, none, 401, 'unauthorized');
      t.match(none.headers.get('www-authenticate') ?? '', /^Bearer/);
      expectProblem(t, await call(path, bearer(`tk_live_${'A'.repeat(32)}`)), 401, 'unauthorized');
      expectProblem(t, await call(path, { authorization: 'Basic dXNlcjpwdw==' }), 401, 'unauthorized');
    }
    const revoked = await createKey(h.db, { plan: 'max' });
    await h.db.run('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [revoked.id]);
    expectProblem(t, await call(ACCOUNT, bearer(revoked.key)), 401, 'unauthorized');
  });

  await t.test('days are UTC calendar days: the next day shifts the range', async (t) => {
    const call = checker(t, h, s.validator);
    const key = bearer(await h.key('max'));
    t.equal((await call('/api/v1/alerts', key)).status, 200);
    h.clock.now = NOW + DAY_MS;
    try {
      t.equal((await call('/api/v1/alerts', key)).status, 200);
      t.equal((await call('/api/v1/alerts', key)).status, 200);
      const usage = await call(`${USAGE}?days=3`, key);
      t.same(usage.json.days, [
        { date: dayBefore(1), requests: 0, connection_minutes: 0, errors: 0 },
        { date: today, requests: 1, connection_minutes: 0, errors: 0 },
        { date: dayBefore(-1), requests: 2, connection_minutes: 0, errors: 0 },
      ]);
    } finally {
      h.clock.now = NOW;
    }
  });

  t.same(h.errors, [], 'nothing was logged as an internal error');
});

t.test('open event streams, composed as serve does', async (t) => {
  const db = await Db.open(':memory:');
  const config = parseConfig({ signing_secret: 'test-secret-0123456789abcdef' });
  const clock = { now: NOW };
  const errors: unknown[] = [];
  const log = logInto((message, line) => errors.push([message, line.err]));
  const streaming = await openStreaming({
    db,
    bus: new InMemoryEventBus(),
    live: demoLive(),
    config,
    clock: () => clock.now,
    log,
  });
  // the lead's wiring: one limiter and one meter shared by the API, the streams and the account routes
  const limiter = new SlidingWindowLimiter();
  const meter = new DbMeter(db, { flushMs: 3_600_000, batchRows: 10_000, log });
  streaming.useMeter(meter);
  const api = await createApi({
    db,
    live: demoLive(),
    config,
    clock: () => clock.now,
    directory: demoDirectory(),
    log,
    limiter,
    meter,
    streams: streaming.provider,
    routes: [
      ...streaming.routes,
      ...accountRoutes({ db, limiter, meter, streams: connectionStreamsView(streaming.connections), log }),
    ],
  });
  const server = await startServer({ handler: api.handler, host: '127.0.0.1', port: 0, log });
  t.teardown(async () => {
    streaming.endStreams();
    await server.close();
    await streaming.close();
    await db.close();
  });
  const url = `http://127.0.0.1:${server.port}`;
  const created = await createKey(db, { plan: 'regular' });
  const key = bearer(created.key);
  const account = async () => (await (await fetch(`${url}${ACCOUNT}`, { headers: key })).json()) as JsonBody;

  const stream = await openSse(`${url}/api/v1/events/stream`, key);
  t.equal(stream.status, 200);
  await until('the stream to be metered', async () => (await account()).streams.open === 1);
  let body = await account();
  t.same(body.streams, {
    open: 1,
    allowed: 2,
    connections: [{ endpoint: '/api/v1/events/stream', opened_at: new Date(NOW).toISOString(), minutes: 1 }],
  });
  const other = await createKey(db, { plan: 'regular' });
  t.same(
    (await (await fetch(`${url}${ACCOUNT}`, { headers: bearer(other.key) })).json()).streams.open,
    0,
    'another key sees none of it',
  );

  clock.now = NOW + 90_000;
  body = await account();
  t.equal(body.streams.connections[0].minutes, 2, 'a started minute counts');
  const usage = (await (await fetch(`${url}${USAGE}?days=1`, { headers: key })).json()) as JsonBody;
  t.ok(usage.totals.connection_minutes >= 1, `connection-minutes billed (${usage.totals.connection_minutes})`);
  t.equal(usage.totals.requests, 0, 'opening a stream is not a request');

  await stream.close();
  await until('the stream to close', async () => (await account()).streams.open === 0);
  t.same((await account()).streams.connections, []);
  t.same(errors, [], 'nothing logged');
});
