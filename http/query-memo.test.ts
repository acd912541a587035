import t from 'tap';
import { z } from 'zod';
import { ApiError } from '../core/errors.ts';
import { compileRoute } from './compile.ts';
import { QueryMemo, scopeQuery } from './query-memo.ts';
import type { RouteDef } from './types.ts';

const def = (id: string): RouteDef => ({
  id,
  method: 'GET',
  path: `/api/v1/${id}`,
  summary: id,
  tags: ['test'],
  auth: 'key',
  meter: 'request',
  query: z.object({
    route: z.string().optional(),
    limit: z.coerce.number().int().min(1).max(100).optional(),
    cursor: z.string().optional(),
  }),
  response: z.object({}),
  paginated: true,
  handler: () => ({}),
});

t.test('a query is parsed and validated once per route and raw string', async (t) => {
  const memo = new QueryMemo(10);
  const route = compileRoute(def('a'));
  const first = memo.get(route, 'route=7&limit=5');
  t.same(first.query, { route: '7', limit: 5 });
  t.equal(memo.get(route, 'route=7&limit=5'), first, 'the same entry');
  t.not(memo.get(route, 'limit=5&route=7'), first, 'another raw string is another entry');
  t.equal(first.parsed.scope, 'route=7', 'the scope leaves out the paging parameters');
  t.throws(() => memo.get(route, 'limit=abc'), ApiError, 'an invalid query throws the validation problem');
  t.throws(() => memo.get(route, 'nope=1'), ApiError, 'so does a parameter the route does not take');
  t.equal(memo.size, 2, 'a query that failed validation is not kept');
});

t.test("bounded: past the limit the oldest entry goes, the same route's first", async (t) => {
  const memo = new QueryMemo(3);
  const a = compileRoute(def('a'));
  const b = compileRoute(def('b'));
  const oldestOfB = memo.get(b, 'route=1');
  memo.get(a, 'route=1');
  const secondOfA = memo.get(a, 'route=2');
  memo.get(a, 'route=3');
  t.equal(memo.size, 3);
  t.equal(memo.get(b, 'route=1'), oldestOfB, 'the other route kept its entry');
  t.equal(memo.get(a, 'route=2'), secondOfA, 'route a lost its oldest, not its second');
  for (let i = 10; i < 100; i++) memo.get(a, `route=${i}`);
  t.equal(memo.size, 3, 'never more than the limit');
});

t.test('scopeQuery is canonical: sorted, encoded, without the excluded names', async (t) => {
  t.equal(scopeQuery({ values: { z: 'a b', a: '1', cursor: 'x' } } as never, new Set(['cursor'])), 'a=1&z=a%20b');
});
