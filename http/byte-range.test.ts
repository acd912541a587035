import t from 'tap';
import { contentRange, decideRange } from './byte-range.ts';

const ETAG = '"abc"';

t.test('no header or an unusable one: the whole file', async (t) => {
  t.same(decideRange(undefined, 100, ETAG), { kind: 'full' });
  for (const header of [
    'items=0-5',
    'bytes=',
    'bytes=-',
    'bytes=5',
    'bytes=0-1,5-6',
    'bytes=9-3',
    'bytes=a-b',
    'bytes=12345678901234567-',
  ]) {
    t.same(decideRange(header, 100, ETAG), { kind: 'full' }, header);
  }
});

t.test('single ranges', async (t) => {
  t.same(decideRange('bytes=0-9', 100, ETAG), { kind: 'partial', range: { start: 0, end: 9 } });
  t.same(decideRange('bytes=90-', 100, ETAG), { kind: 'partial', range: { start: 90, end: 99 } });
  t.same(decideRange('bytes=90-500', 100, ETAG), { kind: 'partial', range: { start: 90, end: 99 } }, 'end clamped');
  t.same(decideRange('bytes=-10', 100, ETAG), { kind: 'partial', range: { start: 90, end: 99 } }, 'suffix');
  t.same(
    decideRange('bytes=-500', 100, ETAG),
    { kind: 'partial', range: { start: 0, end: 99 } },
    'suffix longer than file',
  );
  t.same(decideRange('Bytes = 5 - 5', 100, ETAG), { kind: 'partial', range: { start: 5, end: 5 } }, 'case and spaces');
});

t.test('unsatisfiable ranges', async (t) => {
  t.same(decideRange('bytes=100-', 100, ETAG), { kind: 'unsatisfiable' });
  t.same(decideRange('bytes=-0', 100, ETAG), { kind: 'unsatisfiable' });
  t.same(decideRange('bytes=-5', 0, ETAG), { kind: 'unsatisfiable' });
});

t.test('If-Range must name the current ETag', async (t) => {
  t.same(decideRange('bytes=0-9', 100, ETAG, '"abc"'), { kind: 'partial', range: { start: 0, end: 9 } });
  t.same(decideRange('bytes=0-9', 100, ETAG, '"old"'), { kind: 'full' });
  t.same(
    decideRange('bytes=0-9', 100, ETAG, 'Wed, 21 Oct 2015 07:28:00 GMT'),
    { kind: 'full' },
    'dates are not trusted',
  );
});

t.test('Content-Range', async (t) => {
  t.equal(contentRange({ start: 90, end: 99 }, 100), 'bytes 90-99/100');
});
