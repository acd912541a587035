import t from 'tap';
import { ApiError, invalidParameter } from '../core/errors.ts';
import { problemDocument, renderProblem, toApiError } from './problem.ts';
import { captureLogs } from '../test/support/logs.ts';

t.test('problem documents follow RFC 9457 with the registry code', async (t) => {
  const doc = problemDocument(invalidParameter('limit', 'must be a whole number'), 'req_1', '/api/v1/alerts');
  t.same(doc, {
    type: 'https://transit-api.dev/problems/invalid-parameter',
    title: 'Invalid parameter',
    status: 400,
    detail: 'limit: must be a whole number',
    instance: '/api/v1/alerts',
    code: 'invalid_parameter',
    request_id: 'req_1',
    errors: [{ parameter: 'limit', detail: 'must be a whole number' }],
  });
  const limited = problemDocument(
    new ApiError('rate_limited', 'slow down', {
      members: { 'violated-policies': ['5m'], status: 999, code: 'forged' },
    }),
    'req_2',
    '/',
  );
  t.equal(limited.type, 'https://iana.org/assignments/http-problem-types#quota-exceeded');
  t.same(limited['violated-policies'], ['5m']);
  t.equal(limited.status, 429, 'extension members cannot override standard ones');
  t.equal(limited.code, 'rate_limited');
});

t.test('rendering adds content type, no-store and the Bearer challenge', async (t) => {
  const r = renderProblem(new ApiError('unauthorized', 'no key'), 'req_3', '/x');
  t.equal(r.status, 401);
  t.same(Object.fromEntries(r.headers), {
    'Content-Type': 'application/problem+json',
    'Cache-Control': 'no-store',
    'WWW-Authenticate': 'Bearer realm="transit-api"',
  });
  const own = renderProblem(
    new ApiError('unauthorized', 'bad', { headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' } }),
    'r',
    '/',
  );
  t.equal(own.headers.filter(([n]) => n === 'WWW-Authenticate').length, 1);
  t.same(JSON.parse(r.body).request_id, 'req_3');
});

t.test('unexpected errors become a logged internal error without details', async (t) => {
  const logs = captureLogs();
  const err = toApiError(new Error('secret database path /var/x'), logs.logger, 'req_4');
  t.equal(err.code, 'internal');
  t.notMatch(err.detail, /secret/);
  t.match(
    logs.lines,
    [
      {
        msg: 'request failed',
        request_id: 'req_4',
        err: { message: 'secret database path /var/x', stack: /problem\.test\.ts/ },
      },
    ],
    'logged once, under the request id, with the stack',
  );
  const known = new ApiError('not_found', 'x');
  t.equal(toApiError(known, logs.logger, 'r'), known);
  t.equal(logs.lines.length, 1, 'an ApiError is an answer, not a failure: not logged');
});
