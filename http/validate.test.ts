import t from 'tap';
import { z } from 'zod';
import { dateParam, enumListParam, enumParam, idListParam, idValue, intParam } from './params.ts';
import { parseJsonBody, parseQuery, validate } from './validate.ts';

/** an expected ApiError shape (tap's types want Error-like objects) */
const apiError = (shape: object) => shape as Error;

t.test('parseQuery refuses unknown and repeated names, normalizes the rest', async (t) => {
  const allowed = new Set(['limit', 'mode']);
  t.same(parseQuery('mode=bus&limit=5', allowed), {
    values: { limit: '5', mode: 'bus' },
    normalized: 'limit=5&mode=bus',
  });
  t.same(parseQuery('', allowed).normalized, '');
  t.same(parseQuery('mode=a%20b', allowed).values.mode, 'a b');
  t.throws(() => parseQuery('x=1&y=2&x=3', allowed), {
    code: 'invalid_parameter',
    extra: {
      errors: [
        { parameter: 'x', detail: 'unknown query parameter' },
        { parameter: 'y', detail: 'unknown query parameter' },
      ],
    },
  });
  t.throws(
    () => parseQuery('limit=1&limit=2', allowed),
    apiError({ extra: { errors: [{ parameter: 'limit', detail: 'given more than once' }] } }),
  );
  t.throws(
    () => parseQuery('api_key=x', allowed, { api_key: 'streams only' }),
    apiError({ extra: { errors: [{ parameter: 'api_key', detail: 'streams only' }] } }),
  );
  t.throws(
    () => parseQuery('__proto__=1&toString=2', allowed, {}),
    apiError({
      extra: {
        errors: [
          { parameter: '__proto__', detail: 'unknown query parameter' },
          { parameter: 'toString', detail: 'unknown query parameter' },
        ],
      },
    }),
  );
  t.throws(
    () => parseQuery('a='.padEnd(9000, 'x'), allowed),
    apiError({ extra: { errors: [{ parameter: '(query)' }] } }),
  );
});

t.test('parameter builders parse strictly', async (t) => {
  const schema = z
    .object({
      limit: intParam({ description: 'n', min: 1, max: 50 }).optional(),
      mode: enumListParam(['rail', 'bus'], 'Mode.').optional(),
      route: idListParam('Route.').optional(),
      dir: enumParam(['0', '1'], 'Direction.').optional(),
      day: dateParam('Day.').optional(),
      id: idValue('Id.').optional(),
    })
    .strict();
  t.same(
    validate(schema, { limit: '7', mode: 'bus,rail,bus', route: '1,39', dir: '1', day: '2024-02-29', id: 'Green-B' }),
    { limit: 7, mode: ['bus', 'rail'], route: ['1', '39'], dir: '1', day: '2024-02-29', id: 'Green-B' },
  );
  for (const [input, parameter] of [
    [{ limit: '1e1' }, 'limit'],
    [{ limit: '51' }, 'limit'],
    [{ limit: '0' }, 'limit'],
    [{ limit: '' }, 'limit'],
    [{ mode: 'bus,plane' }, 'mode'],
    [{ route: '' }, 'route'],
    [
      {
        route: Array(52)
          .fill('r')
          .map((r, i) => r + i)
          .join(','),
      },
      'route',
    ],
    [{ dir: '2' }, 'dir'],
    [{ day: '2023-02-29' }, 'day'],
    [{ id: 'a\u0001b' }, 'id'],
    [{ id: 'x'.repeat(201) }, 'id'],
    [{ bogus: '1' }, 'bogus'],
  ] as const) {
    try {
      validate(schema, input);
      t.fail(`${JSON.stringify(input)} should fail`);
    } catch (err) {
      t.equal(
        (err as { extra: { errors: Array<{ parameter: string }> } }).extra.errors[0]!.parameter,
        parameter,
        JSON.stringify(input).slice(0, 60),
      );
    }
  }
  t.throws(() => validate(z.string(), 5), apiError({ extra: { errors: [{ parameter: '(value)' }] } }));
});

t.test('JSON bodies', async (t) => {
  const schema = z.object({ url: z.string().url(), tags: z.array(z.string()).optional() }).strict();
  t.same(parseJsonBody(schema, Buffer.from('{"url":"https://example.com/hook"}')), { url: 'https://example.com/hook' });
  t.throws(() => parseJsonBody(schema, Buffer.from('{')), { code: 'invalid_body', message: /not valid JSON/ });
  t.throws(() => parseJsonBody(schema, Buffer.from('{"url":"nope","tags":[1]}')), {
    code: 'invalid_body',
    extra: { errors: [{ parameter: 'url' }, { parameter: 'tags.0' }] },
  });
  t.throws(() => parseJsonBody(schema, Buffer.from('[]')), apiError({ extra: { errors: [{ parameter: '(body)' }] } }));
});

t.test('unknown body fields are named', async (t) => {
  const schema = z.object({ a: z.object({ b: z.number() }).strict() }).strict();
  t.throws(
    () => parseJsonBody(schema, Buffer.from('{"a":{"b":1,"c":2},"d":3}')),
    apiError({
      extra: {
        errors: [
          { parameter: 'a.c', detail: 'unknown field' },
          { parameter: 'd', detail: 'unknown field' },
        ],
      },
    }),
  );
});
