import t from 'tap';
import { parseManifest, type SeaManifest } from './manifest.ts';

const HASH = 'a'.repeat(64);

function valid(): SeaManifest {
  return {
    name: 'transit-api',
    version: '0.1.0',
    id: '0123456789abcdef',
    platform: 'linux-x64',
    abi: '115',
    entries: [
      {
        key: 'tree/store/migrations/001_init.sql',
        path: 'store/migrations/001_init.sql',
        bytes: 10,
        sha256: HASH,
        encoding: 'raw',
      },
      { key: 'tree/native/uws.node', path: 'native/uws.node', bytes: 5, sha256: HASH, encoding: 'raw' },
      { key: 'tree/native/duckdb.node', path: 'native/duckdb.node', bytes: 5, sha256: HASH, encoding: 'gzip' },
    ],
    natives: { uws: 'uws.node', duckdb: 'duckdb.node' },
  };
}

function withEntry(patch: Partial<SeaManifest['entries'][number]>): string {
  const m = valid();
  m.entries[0] = { ...m.entries[0]!, ...patch };
  return JSON.stringify(m);
}

t.test('a manifest written by the build parses', async (t) => {
  t.same(parseManifest(JSON.stringify(valid())), valid());
});

t.test('paths that could escape the extraction folder are refused', async (t) => {
  for (const path of ['../x', '/etc/x', 'a/../../x', 'a/./b', './a', 'a\\b', 'a/b/..', '']) {
    t.throws(() => parseManifest(withEntry({ path })), /unsafe path/, JSON.stringify(path));
  }
  t.doesNotThrow(() => parseManifest(withEntry({ path: 'http/status/page.v2.html' })));
});

t.test('broken fields are named', async (t) => {
  t.throws(() => parseManifest('{'), /manifest is invalid/);
  t.throws(() => parseManifest(JSON.stringify({ ...valid(), id: 'zz' })), /id is not hex/);
  t.throws(() => parseManifest(JSON.stringify({ ...valid(), version: '../1' })), /plain version/);
  t.throws(() => parseManifest(JSON.stringify({ ...valid(), name: '' })), /name missing/);
  t.throws(() => parseManifest(JSON.stringify({ ...valid(), entries: 'x' })), /entries missing/);
  t.throws(() => parseManifest(withEntry({ sha256: 'abc' })), /bad sha256/);
  t.throws(() => parseManifest(withEntry({ bytes: -1 })), /bad size/);
  t.throws(() => parseManifest(withEntry({ encoding: 'brotli' as 'raw' })), /unknown encoding/);
  t.throws(() => parseManifest(withEntry({ path: 'native/uws.node' })), /duplicate path/);
  t.throws(
    () => parseManifest(JSON.stringify({ ...valid(), natives: { uws: 'other.node', duckdb: 'duckdb.node' } })),
    /native uws/,
  );
  t.throws(() => parseManifest(JSON.stringify({ ...valid(), entries: [null] })), /without key or path/);
});
