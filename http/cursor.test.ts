import t from 'tap';
import { compareKeys, CursorCodec } from './cursor.ts';

t.test('round trip, scope binding and tampering', async (t) => {
  const codec = new CursorCodec('0123456789abcdef0123');
  const cursor = codec.encode('listAlerts\n/api/v1/alerts\nmode=bus', [-1700, 'feed:a']);
  t.same(codec.decode('listAlerts\n/api/v1/alerts\nmode=bus', cursor), [-1700, 'feed:a']);
  const bad = (c: string, scope = 'listAlerts\n/api/v1/alerts\nmode=bus') =>
    t.throws(() => codec.decode(scope, c), { code: 'invalid_cursor' });
  bad(cursor, 'listAlerts\n/api/v1/alerts\nmode=rail');
  bad(`${cursor}x`);
  bad(`x${cursor}`);
  bad('');
  bad('a'.repeat(3000));
  bad('abc');
  bad('a.b.c');
  bad('.sig');
  const other = new CursorCodec(Buffer.alloc(32, 7));
  bad(other.encode('listAlerts\n/api/v1/alerts\nmode=bus', [1]), 'listAlerts\n/api/v1/alerts\nmode=bus');
  // validly signed but not JSON, or not an array of scalars
  const signer = codec as unknown as { sign(scope: string, payload: string): Buffer };
  for (const payload of [
    Buffer.from('not json').toString('base64url'),
    Buffer.from('{"a":1}').toString('base64url'),
    Buffer.from('[[1]]').toString('base64url'),
  ]) {
    bad(`${payload}.${signer.sign('s', payload).toString('base64url')}`, 's');
  }
  t.throws(() => new CursorCodec('short'), /at least 16 bytes/);
});

t.test('key order: null, numbers, strings; then length', async (t) => {
  t.equal(compareKeys([null], [0]), -1);
  t.equal(compareKeys([0], [null]), 1);
  t.ok(compareKeys([1], ['a']) < 0);
  t.ok(compareKeys(['a'], [1]) > 0);
  t.ok(compareKeys(['a', 2], ['a', 10]) < 0);
  t.ok(compareKeys(['b'], ['a']) > 0);
  t.equal(compareKeys(['a', 1], ['a', 1]), 0);
  t.ok(compareKeys(['a'], ['a', 1]) < 0);
});

t.test('stringKey: store keysets are exactly n strings', async (t) => {
  const { stringKey } = await import('./cursor.ts');
  t.same(stringKey(['2024-03-10', 'a.parquet'], 2), ['2024-03-10', 'a.parquet']);
  for (const bad of [['x'], ['x', 1], ['x', null], ['x', 'y', 'z']]) {
    t.throws(() => stringKey(bad, 2), { code: 'invalid_cursor' }, JSON.stringify(bad));
  }
});
