// The request chain through inject(): the cases the core routes do not exercise (plans, bodies,
// streams, failures inside handlers, asynchronous limiters).
import t from 'tap';
import { z } from 'zod';
import { ApiError } from '../core/errors.ts';
import { RequestHandler } from './request-handler.ts';
import type { AuthenticatedKey, KeyAuthenticator } from '../accounts/auth.ts';
import { CursorCodec } from './cursor.ts';
import { SlidingWindowLimiter, type RateLimiter } from '../accounts/limiter.ts';
import { defineRoute } from './route.ts';
import { Reply, StreamReply, type StreamOpenRequest, type StreamProvider } from './types.ts';
import { logInto } from '../test/support/logs.ts';
import { MemoryMeter } from '../test/support/meter.ts';

const KEYS: Record<string, AuthenticatedKey> = {
  free: { id: 'k_free', plan: 'free', test: false, prefix: 'tk_live_free' },
  regular: { id: 'k_regular', plan: 'regular', test: false, prefix: 'tk_live_regu' },
  max: { id: 'k_max', plan: 'max', test: false, prefix: 'tk_live_maxx' },
  maxTest: { id: 'k_max_test', plan: 'max', test: true, prefix: 'tk_test_maxx' },
};
const auth = (name: keyof typeof KEYS) => ({ authorization: `Bearer ${name}` });

let version = 1;
let renders = 0;
const routes = [
  defineRoute({
    id: 'maxOnly',
    method: 'GET',
    path: '/api/v1/history/exports',
    summary: 'Max only',
    tags: ['T'],
    auth: 'key',
    meter: 'request',
    plan: 'max',
    testKeys: false,
    response: z.object({ ok: z.boolean() }),
    handler: () => ({ ok: true }),
  }),
  defineRoute({
    id: 'create',
    method: 'POST',
    path: '/api/v1/things',
    summary: 'Create',
    tags: ['T'],
    auth: 'key',
    meter: 'request',
    successStatus: 201,
    body: z.object({ name: z.string().min(1) }).strict(),
    response: z.object({ name: z.string() }),
    handler: (ctx) => ({ name: ctx.body.name }),
  }),
  defineRoute({
    id: 'cached',
    method: 'GET',
    path: '/api/v1/cached',
    summary: 'Cached',
    tags: ['T'],
    auth: 'key',
    meter: 'request',
    sse: true,
    cache: { version: () => version },
    response: z.object({ version: z.number(), renders: z.number() }),
    handler: () => ({ version, renders: ++renders }),
  }),
  defineRoute({
    id: 'events',
    method: 'GET',
    path: '/api/v1/events/stream',
    summary: 'Stream',
    tags: ['T'],
    auth: 'key',
    meter: 'connection-minute',
    stream: true,
    response: z.string(),
    handler: () =>
      new StreamReply(
        (sink) => {
          sink.write(Buffer.from('retry: 3000\n\n'));
          sink.onClose(() => sink.write(Buffer.from('never')));
        },
        [['X-Stream', 'yes']],
      ),
  }),
  defineRoute({
    id: 'broken',
    method: 'GET',
    path: '/api/v1/broken',
    summary: 'Throws',
    tags: ['T'],
    auth: 'key',
    meter: 'request',
    response: z.object({}),
    handler: () => {
      throw new Error('database password is hunter2');
    },
  }),
  defineRoute({
    id: 'confused',
    method: 'GET',
    path: '/api/v1/confused',
    summary: 'Wrong reply',
    tags: ['T'],
    auth: 'key',
    meter: 'request',
    response: z.object({}),
    handler: () => new StreamReply(() => {}),
  }),
  defineRoute({
    id: 'teapot',
    method: 'GET',
    path: '/teapot',
    summary: 'Public',
    tags: ['T'],
    auth: 'none',
    meter: null,
    response: z.string(),
    contentType: 'text/plain',
    handler: () => new Reply(418, 'text/plain', 'short and stout'),
  }),
];

function makeApp(options: { streams?: StreamProvider; limiter?: RateLimiter } = {}) {
  const logged: unknown[] = [];
  const keys: KeyAuthenticator = {
    authenticate: (token) => KEYS[token] ?? null,
    close: () => {},
  };
  const meter = new MemoryMeter();
  const app = new RequestHandler({
    routes,
    keys,
    meter,
    limiter: options.limiter ?? new SlidingWindowLimiter(),
    cursors: new CursorCodec('x'.repeat(32)),
    clock: () => 1_000_000,
    log: logInto((_m, line) => logged.push(line.err), 'error'),
    maxBodyBytes: 100,
    responseCacheEntries: 10,
    streams: options.streams,
  });
  return { app, logged, meter };
}

t.test('plans and test keys', async (t) => {
  const { app } = makeApp();
  t.equal((await app.inject({ url: '/api/v1/history/exports', headers: auth('max') })).status, 200);
  const regular = await app.inject({ url: '/api/v1/history/exports', headers: auth('regular') });
  t.equal(regular.status, 403);
  t.match(regular.json(), { code: 'forbidden_plan', detail: /needs the max plan/ });
  t.match((await app.inject({ url: '/api/v1/history/exports', headers: auth('maxTest') })).json(), {
    code: 'forbidden_plan',
    detail: /test keys/,
  });
  t.equal(
    (await app.inject({ url: '/openapi.yaml' })).status,
    404,
    "the documentation is the composition root's to add",
  );
});

t.test('JSON bodies', async (t) => {
  const { app } = makeApp();
  const json = { ...auth('regular'), 'content-type': 'application/json; charset=utf-8' };
  const created = await app.inject({ method: 'POST', url: '/api/v1/things', headers: json, body: '{"name":"a"}' });
  t.equal(created.status, 201);
  t.same(created.json(), { name: 'a' });
  t.notOk(created.headers.etag, 'no ETag on a creation');
  t.equal(
    (
      await app.inject({
        method: 'POST',
        url: '/api/v1/things',
        headers: { ...auth('regular'), 'content-type': 'text/plain' },
        body: '{}',
      })
    ).json<{ code: string }>().code,
    'unsupported_media_type',
  );
  t.equal(
    (await app.inject({ method: 'POST', url: '/api/v1/things', headers: json, body: '{' })).json<{ code: string }>()
      .code,
    'invalid_body',
  );
  t.equal(
    (await app.inject({ method: 'POST', url: '/api/v1/things', headers: json })).json<{ code: string }>().code,
    'invalid_body',
  );
  t.equal(
    (await app.inject({ method: 'POST', url: '/api/v1/things', headers: json, body: `{"name":"${'x'.repeat(200)}"}` }))
      .status,
    413,
  );
  t.match(
    (
      await app.inject({ method: 'POST', url: '/api/v1/things', headers: json, body: '{"name":"a","admin":true}' })
    ).json(),
    {
      code: 'invalid_body',
      errors: [{ parameter: 'admin' }],
    },
  );
});

t.test('cached bodies, ETags and HEAD', async (t) => {
  const { app } = makeApp();
  const first = await app.inject({ url: '/api/v1/cached', headers: auth('max') });
  const second = await app.inject({ url: '/api/v1/cached', headers: auth('max') });
  t.equal(first.body, second.body, 'rendered once');
  t.equal(first.headers.etag, second.headers.etag);
  const head = await app.inject({ method: 'HEAD', url: '/api/v1/cached', headers: auth('max') });
  t.equal(head.status, 200);
  t.equal(head.body, '');
  version++;
  const third = await app.inject({
    url: '/api/v1/cached',
    headers: { ...auth('max'), 'if-none-match': first.headers.etag! },
  });
  t.equal(third.status, 200, 'a new version has a new tag');
  t.not(third.headers.etag, first.headers.etag);
  t.same(app.chain.cacheStats.size, 1);
});

t.test('event streams', async (t) => {
  const opened: StreamOpenRequest[] = [];
  const streams: StreamProvider = {
    async open(request) {
      opened.push(request);
      if (request.key.plan === 'regular' && opened.length > 2)
        throw new ApiError('sse_allowance_exceeded', 'two streams at most');
      const body = await request.render();
      return new StreamReply((sink) => sink.write(Buffer.from(`event: reset\ndata: ${JSON.stringify(body)}\n\n`)));
    },
  };
  const { app, meter } = makeApp({ streams });
  const s = await app.inject({
    url: '/api/v1/cached?format=sse',
    headers: { ...auth('regular'), 'last-event-id': '42' },
  });
  t.equal(s.status, 200);
  t.equal(s.headers['content-type'], 'text/event-stream');
  t.equal(s.headers['x-meter-unit'], 'connection-minute');
  t.ok(s.headers.ratelimit, 'rate-limit state is shown, not consumed');
  t.match(s.stream!.chunks[0], /^event: reset\ndata: \{"version"/);
  t.equal(opened[0]!.lastEventId, '42');
  t.equal(opened[0]!.scope, 'cached\n/api/v1/cached\n', 'the key and format are not part of the stream identity');
  await app.inject({
    url: '/api/v1/cached?last_event_id=7',
    headers: { ...auth('regular'), accept: 'text/event-stream' },
  });
  t.equal(opened[1]!.lastEventId, '7');
  const third = await app.inject({ url: '/api/v1/cached?format=sse', headers: auth('regular') });
  t.equal(third.status, 429);
  t.match(third.json(), { code: 'sse_allowance_exceeded' });
  t.equal(third.headers['x-meter-unit'], 'connection-minute');
  const usage = meter.records.filter((r) => r.endpoint === '/api/v1/cached' && r.unit === 'connection-minute');
  t.same(
    usage.map((r) => [r.status, r.quantity]),
    [
      [200, 0],
      [200, 0],
      [429, 0],
    ],
    "opening is recorded; minutes are the stream's to meter",
  );

  const events = await app.inject({ url: '/api/v1/events/stream', headers: auth('max') });
  t.equal(events.headers['x-stream'], 'yes');
  t.same(events.stream!.chunks, ['retry: 3000\n\n']);
  events.stream!.close();
  t.ok(events.stream!.closed);
  t.same(events.stream!.chunks, ['retry: 3000\n\n'], 'nothing is written after close');
  t.equal(
    (await app.inject({ url: '/api/v1/events/stream', headers: auth('free') })).status,
    403,
    'Free has no streams',
  );
});

t.test('failures inside handlers are 500 internal, logged, without details', async (t) => {
  const { app, logged } = makeApp();
  const broken = await app.inject({ url: '/api/v1/broken', headers: auth('max') });
  t.equal(broken.status, 500);
  t.match(broken.json(), { code: 'internal', request_id: /^req_/ });
  t.notMatch(broken.body, /hunter2/);
  t.equal(broken.headers['content-type'], 'application/problem+json');
  t.equal((await app.inject({ url: '/api/v1/confused', headers: auth('max') })).status, 500);
  t.equal(logged.length, 2);
});

t.test('public replies and asynchronous limiters', async (t) => {
  const inner = new SlidingWindowLimiter();
  const limiter: RateLimiter = {
    take: async (...args) => inner.take(...args),
    peek: async (...args) => inner.peek(...args),
    refund: async (key, d) => inner.refund(key, d),
  };
  const { app, meter } = makeApp({ limiter });
  const tea = await app.inject({ url: '/teapot' });
  t.equal(tea.status, 418);
  t.equal(tea.body, 'short and stout');
  t.notOk(tea.headers['x-meter-unit'], 'public pages are not metered');
  const first = await app.inject({ url: '/api/v1/cached', headers: auth('free') });
  const again = await app.inject({
    url: '/api/v1/cached',
    headers: { ...auth('free'), 'if-none-match': first.headers.etag! },
  });
  t.equal(again.status, 304);
  t.equal(again.headers['x-ratelimit-remaining'], first.headers['x-ratelimit-remaining']);
  t.equal(meter.records.filter((r) => r.endpoint === '/teapot').length, 0);
});
