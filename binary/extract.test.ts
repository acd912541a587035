import { createHash } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import t, { type Test } from 'tap';
import { defaultCacheBase, extractAssets, type ExtractOptions } from './extract.ts';
import type { ManifestEntry, SeaManifest } from './manifest.ts';

const FILES: Record<string, { text: string; encoding: 'raw' | 'gzip' }> = {
  'store/migrations/001_init.sql': { text: 'CREATE TABLE t (x INTEGER);', encoding: 'raw' },
  'pipeline/gtfs-realtime.proto': { text: 'syntax = "proto2";', encoding: 'raw' },
  'native/uws.node': { text: 'not really an addon'.repeat(100), encoding: 'gzip' },
  'native/duckdb.node': { text: 'duckdb', encoding: 'raw' },
};

function fixture(tamper?: string): { manifest: SeaManifest; stored: Map<string, Uint8Array> } {
  const stored = new Map<string, Uint8Array>();
  const entries: ManifestEntry[] = Object.entries(FILES).map(([path, { text, encoding }]) => {
    const bytes = Buffer.from(text);
    const key = `tree/${path}`;
    const body = path === tamper ? Buffer.from(text.toUpperCase()) : bytes;
    stored.set(key, encoding === 'gzip' ? gzipSync(body) : body);
    return { key, path, bytes: bytes.byteLength, sha256: createHash('sha256').update(bytes).digest('hex'), encoding };
  });
  const manifest: SeaManifest = {
    name: 'transit-api',
    version: '0.1.0',
    id: 'feedbeef00112233',
    platform: 'linux-x64',
    abi: '115',
    entries,
    natives: { uws: 'uws.node', duckdb: 'duckdb.node' },
  };
  return { manifest, stored };
}

function setup(t: Test, tamper?: string) {
  const root = mkdtempSync(join(tmpdir(), 'sea-extract-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const { manifest, stored } = fixture(tamper);
  const reads: string[] = [];
  const options: ExtractOptions = {
    manifest,
    cacheBase: join(root, 'cache'),
    read: (key) => {
      reads.push(key);
      const bytes = stored.get(key);
      if (!bytes) throw new Error(`no asset ${key}`);
      return bytes;
    },
  };
  return { root, options, reads };
}

t.test('the first start writes the tree; later starts reuse it without reading assets', async (t) => {
  const { options, reads } = setup(t);
  const first = extractAssets(options);
  t.equal(first.wrote, true);
  t.equal(first.dir, join(options.cacheBase, '0.1.0-feedbeef00112233'));
  for (const [path, { text }] of Object.entries(FILES))
    t.equal(readFileSync(join(first.dir, path), 'utf8'), text, path);
  t.equal(statSync(join(first.dir, 'native/uws.node')).mode & 0o777, 0o500, 'addons are read-only and loadable');
  t.equal(statSync(join(first.dir, 'store/migrations/001_init.sql')).mode & 0o777, 0o400);
  t.equal(statSync(options.cacheBase).mode & 0o777, 0o700, 'the cache folder is private');
  t.same(readdirSync(options.cacheBase), ['0.1.0-feedbeef00112233'], 'no staging folder is left');

  reads.length = 0;
  const second = extractAssets(options);
  t.same(second, { dir: first.dir, wrote: false });
  t.same(reads, [], 'an intact tree is trusted by its mark and sizes');
});

t.test('a tree that lost a file is replaced', async (t) => {
  const { options } = setup(t);
  const { dir } = extractAssets(options);
  rmSync(join(dir, 'native/duckdb.node'));
  const again = extractAssets(options);
  t.equal(again.wrote, true);
  t.equal(readFileSync(join(dir, 'native/duckdb.node'), 'utf8'), 'duckdb');
  t.same(readdirSync(options.cacheBase), ['0.1.0-feedbeef00112233'], 'the damaged copy is removed');
});

t.test('a tree of another build under the same version is not reused', async (t) => {
  const { options } = setup(t);
  extractAssets(options);
  const other = { ...options, manifest: { ...options.manifest, id: '0000000000000001' } };
  const result = extractAssets(other);
  t.equal(result.wrote, true);
  t.equal(result.dir, join(options.cacheBase, '0.1.0-0000000000000001'));
});

t.test('a corrupt embedded file fails the start and leaves nothing behind', async (t) => {
  for (const tamper of ['store/migrations/001_init.sql', 'native/uws.node']) {
    const { options } = setup(t, tamper);
    t.throws(() => extractAssets(options), new RegExp(`${tamper} is corrupt`));
    t.same(readdirSync(options.cacheBase), [], tamper);
  }
});

t.test('when another process finishes first, its tree is used', async (t) => {
  const { options } = setup(t);
  let raced = false;
  const racing: ExtractOptions = {
    ...options,
    read(key) {
      if (!raced && key.endsWith('duckdb.node')) {
        raced = true;
        t.equal(extractAssets(options).wrote, true, 'the other process wrote it');
      }
      return options.read(key);
    },
  };
  t.same(extractAssets(racing), { dir: join(options.cacheBase, '0.1.0-feedbeef00112233'), wrote: false });
  t.same(readdirSync(options.cacheBase), ['0.1.0-feedbeef00112233']);
});

t.test('a cache folder others could write to is refused', async (t) => {
  const { root, options } = setup(t);
  mkdirSync(options.cacheBase, { mode: 0o700 });
  chmodSync(options.cacheBase, 0o777);
  t.throws(() => extractAssets(options), /writable by other users/);

  const elsewhere = join(root, 'elsewhere');
  mkdirSync(elsewhere, { mode: 0o700 });
  const link = join(root, 'link');
  symlinkSync(elsewhere, link);
  t.throws(() => extractAssets({ ...options, cacheBase: link }), /not a directory/);
  t.notOk(existsSync(join(elsewhere, '0.1.0-feedbeef00112233')));
});

t.test('the cache folder: TRANSIT_CACHE_DIR, else per user in the temp folder', async (t) => {
  t.equal(defaultCacheBase({ TRANSIT_CACHE_DIR: '/var/cache/transit-api' }), '/var/cache/transit-api');
  t.equal(defaultCacheBase({ TRANSIT_CACHE_DIR: 'cache' }), join(process.cwd(), 'cache'), 'made absolute');
  t.equal(defaultCacheBase({}), join(tmpdir(), `transit-api-${process.getuid!()}`));
});
