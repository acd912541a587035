import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { assetPath, setAssetRoot } from './assets.ts';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));

t.test('from a checkout, paths resolve inside the repository', async (t) => {
  t.equal(assetPath('pipeline/gtfs-realtime.proto'), join(repoRoot, 'pipeline', 'gtfs-realtime.proto'));
  t.ok(readFileSync(assetPath('pipeline/gtfs-realtime.proto'), 'utf8').includes('message FeedMessage'));
  t.ok(existsSync(join(assetPath('store/migrations'), '001_init.sql')));
  t.equal(assetPath('./store//migrations/'), join(repoRoot, 'store', 'migrations/'));
});

t.test('paths that leave the repository are refused', async (t) => {
  for (const bad of ['../outside', '/etc/passwd', 'store/../../x', '..']) {
    t.throws(() => assetPath(bad), /must stay inside the repository/, bad);
  }
});

t.test('the single executable points every path at its extracted tree', async (t) => {
  t.throws(() => setAssetRoot('relative/dir'), /absolute path/);
  setAssetRoot('/opt/cache/transit-api/0.1.0-abc');
  t.equal(assetPath('store/migrations'), '/opt/cache/transit-api/0.1.0-abc/store/migrations');
  t.equal(assetPath('package.json'), '/opt/cache/transit-api/0.1.0-abc/package.json');
});
