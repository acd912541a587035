import t from 'tap';
import { etagOf, matchesIfNoneMatch, ResponseCache } from './response-cache.ts';

t.test('entries are keyed by version token, expire, and are evicted least recently used first', async (t) => {
  const cache = new ResponseCache(2);
  const a = cache.set('a', 'v1', Buffer.from('{"a":1}'), 1_000, 0);
  t.equal(cache.get('a', 'v1', 10), a);
  t.equal(cache.get('a', 'v2', 10), undefined, 'another version misses');
  t.equal(cache.get('a', 'v1', 1_000), undefined, 'expired');
  cache.set('a', 'v1', Buffer.from('1'), Infinity, 0);
  cache.set('b', 'v1', Buffer.from('2'), Infinity, 0);
  cache.get('a', 'v1', 0);
  cache.set('c', 'v1', Buffer.from('3'), Infinity, 0);
  t.ok(cache.get('a', 'v1', 0), 'recently used survives');
  t.notOk(cache.get('b', 'v1', 0), 'least recently used was evicted');
  t.equal(cache.size, 2);
  t.ok(cache.hits > 0 && cache.misses > 0);
});

t.test('ETags and If-None-Match', async (t) => {
  const tag = etagOf('{"x":1}');
  t.match(tag, /^"[A-Za-z0-9_-]{22}"$/);
  t.equal(etagOf(Buffer.from('{"x":1}')), tag);
  t.not(etagOf('{"x":2}'), tag);
  t.ok(matchesIfNoneMatch(tag, tag));
  t.ok(matchesIfNoneMatch(`W/${tag}`, tag), 'weak comparison');
  t.ok(matchesIfNoneMatch(`"other", ${tag}`, tag));
  t.ok(matchesIfNoneMatch(' * ', tag));
  t.ok(matchesIfNoneMatch(tag, `W/${tag}`));
  t.notOk(matchesIfNoneMatch(undefined, tag));
  t.notOk(matchesIfNoneMatch('"nope"', tag));
  t.notOk(matchesIfNoneMatch('', tag));
});
