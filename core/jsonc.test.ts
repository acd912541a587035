import t from 'tap';
import { stripJsonComments } from './jsonc.ts';

const parse = (text: string): unknown => JSON.parse(stripJsonComments(text));

t.test('line and block comments are removed outside strings', async (t) => {
  t.same(parse('// head\n{\n  "a": 1, // why\n  /* block\n  over lines */ "b": "x"\n}\n// tail'), { a: 1, b: 'x' });
  t.same(parse('{"a":1}//no newline at the end'), { a: 1 });
});

t.test('comment markers inside strings stay', async (t) => {
  t.same(parse('{"url": "https://example.org/a//b", "c": "/* not a comment */"}'), {
    url: 'https://example.org/a//b',
    c: '/* not a comment */',
  });
  t.same(parse('{"q": "say \\"//\\" and \\\\", "n": 2} // end'), { q: 'say "//" and \\', n: 2 });
});

t.test('positions of a later mistake are kept', async (t) => {
  const text = '{\n  // a comment on line 2\n  "a": 1,\n  "b": ,\n}';
  const stripped = stripJsonComments(text);
  t.equal(stripped.length, text.length, 'same length');
  t.equal(stripped.split('\n').length, text.split('\n').length, 'same lines');
  t.throws(() => JSON.parse(stripped));
});

t.test('plain JSON is unchanged; unclosed comments are left for JSON.parse to refuse', async (t) => {
  const json = JSON.stringify({ a: [1, 2, { b: 'c' }], d: null });
  t.equal(stripJsonComments(json), json);
  t.throws(() => parse('{"a": 1} /* open'));
  t.throws(() => parse('{"a": 1,}'), 'trailing commas are still refused');
});
