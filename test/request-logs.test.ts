// Request logs on the real server: every line is JSON, carries the request id the response
// returned (X-Request-Id, the problem body's request_id), and a failure keeps its stack.
import t from 'tap';
import { z } from 'zod';
import { defineRoute } from '../http/route.ts';
import { captureLogs, LEVELS, type LogLine } from './support/logs.ts';
import { startHarness } from './support/harness.ts';

function failingLookup(): never {
  throw new Error('lookup table is corrupt');
}

const broken = defineRoute({
  id: 'brokenForLogs',
  method: 'GET',
  path: '/api/v1/broken-for-logs',
  summary: 'Throws',
  tags: ['T'],
  auth: 'key',
  meter: 'request',
  response: z.object({}),
  handler: () => failingLookup(),
});

t.test('request lines carry the response request id; errors their stack', async (t) => {
  const logs = captureLogs('debug');
  const h = await startHarness({ routes: [broken], log: logs.logger });
  t.teardown(() => h.close());
  const key = await h.key('max');
  const forRequest = (id: string): LogLine[] => logs.lines.filter((l) => l.request_id === id);

  const ok = await h.get('/api/v1/alerts', { authorization: `Bearer ${key}` });
  t.equal(ok.status, 200);
  const okId = ok.headers.get('x-request-id')!;
  t.match(okId, /^req_/);
  t.match(
    forRequest(okId),
    [
      {
        level: LEVELS.debug,
        component: 'http',
        msg: 'request',
        method: 'GET',
        path: '/api/v1/alerts',
        route: '/api/v1/alerts',
        status: 200,
        ms: Number,
        key_id: String,
        time: String,
      },
    ],
    'one debug line for a good request, with its key',
  );

  const denied = await h.get('/api/v1/alerts?api_key=secret-looking', { authorization: 'Bearer tk_live_nope' });
  t.equal(denied.status, 401);
  const problem = (await denied.json()) as { request_id: string };
  t.equal(problem.request_id, denied.headers.get('x-request-id'), 'the body and the header agree');
  t.match(forRequest(problem.request_id), [
    { level: LEVELS.debug, msg: 'request', status: 401, path: '/api/v1/alerts' },
  ]);
  t.notOk(
    logs.lines.some((l) => JSON.stringify(l).includes('secret-looking')),
    'the query (it may hold api_key) is never logged',
  );

  const failed = await h.get('/api/v1/broken-for-logs', { authorization: `Bearer ${key}` });
  t.equal(failed.status, 500);
  const failure = (await failed.json()) as { request_id: string; detail: string };
  t.notMatch(failure.detail, /corrupt/, 'the client sees no internals');
  const lines = forRequest(failure.request_id);
  t.match(
    lines,
    [
      {
        level: LEVELS.error,
        component: 'http',
        msg: 'request failed',
        err: { type: 'Error', message: 'lookup table is corrupt' },
      },
      {
        level: LEVELS.warn,
        component: 'http',
        msg: 'request answered with a server error',
        status: 500,
        route: '/api/v1/broken-for-logs',
      },
    ],
    'the failure at error, the 5xx request at warn, under the same id',
  );
  t.match(
    lines[0]?.err?.stack,
    /failingLookup[\s\S]*request-logs\.test\.ts/,
    'the stack is kept, down to the throwing function',
  );
});

t.test('at info, a request writes no line (the hot path builds nothing)', async (t) => {
  const logs = captureLogs('info');
  const h = await startHarness({ log: logs.logger });
  t.teardown(() => h.close());
  const key = await h.key('free');
  t.equal((await h.get('/api/v1/alerts', { authorization: `Bearer ${key}` })).status, 200);
  t.equal((await h.get('/api/v1/alerts')).status, 401);
  t.same(
    logs.lines.filter((l) => l.component === 'http'),
    [],
  );
});
