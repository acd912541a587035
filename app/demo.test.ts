// `serve --demo`: loopback unless told otherwise (it prints live keys), and a config file given
// beside --demo merged over the demo's own config.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { ConfigError, parseConfig } from '../core/config.ts';
import { demoFiles, startDemo } from './demo.ts';

t.test('the demo config: 127.0.0.1, and a file merged over it', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'demo-config-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const env = { TRANSIT_DEMO_DIR: dir };
  const demo = await startDemo(env);
  t.teardown(() => demo.simulator.stop());
  t.equal(demo.config.host, '127.0.0.1', 'loopback by default');
  t.equal(demo.config.webhooks.allow_private_targets, false);
  const feeds = demo.config.feeds.map((f) => f.id);
  t.ok(feeds.includes('demo-vehicles'));

  const local = demo.configWith({ webhooks: { allow_private_targets: true }, host: '0.0.0.0' });
  t.equal(local.webhooks.allow_private_targets, true, "the file's setting applies");
  t.equal(local.webhooks.timeout_ms, demo.config.webhooks.timeout_ms, 'objects merge key by key');
  t.equal(local.host, '0.0.0.0', '--host (or the file) may open it up');
  t.same(
    local.feeds.map((f) => f.id),
    feeds,
    'the demo feeds stay',
  );
  t.equal(local.db_path, 'data/demo.duckdb');

  // its files apart from a configured deployment's defaults (data/exports, data/snapshot.duckdb)
  t.equal(demo.config.exports.dir, join('data', 'demo', 'exports'));
  t.equal(demo.config.snapshot.path, join('data', 'demo', 'snapshot.duckdb'));
  const deployment = parseConfig({});
  t.not(demo.config.exports.dir, deployment.exports.dir);
  t.not(demo.config.snapshot.path, deployment.snapshot.path);
  const elsewhere = demo.configWith({ db_path: '/srv/t/show.duckdb', exports: { cron: '0 5 * * *' } });
  t.equal(elsewhere.exports.dir, '/srv/t/show/exports', 'beside the database it is given');
  t.equal(elsewhere.exports.cron, '0 5 * * *', 'the rest of the exports settings merge');
  t.equal(elsewhere.snapshot.path, '/srv/t/show/snapshot.duckdb');
  const chosen = demo.configWith({ exports: { dir: '/srv/exports' }, snapshot: { path: '/srv/s.duckdb' } });
  t.same([chosen.exports.dir, chosen.snapshot.path], ['/srv/exports', '/srv/s.duckdb'], 'a config file names its own');
  const second = await startDemo({ ...env, TRANSIT_DB: join(dir, 'x.duckdb') });
  t.teardown(() => second.simulator.stop());
  const fromEnv = second.config;
  t.equal(fromEnv.exports.dir, join(dir, 'x', 'exports'), 'TRANSIT_DB moves them too');
  t.equal(demoFiles(':memory:', dir).exports_dir, join(dir, 'files', 'exports'));
  t.throws(() => demo.configWith({ exports: 'x' }), ConfigError, 'a malformed section is still refused');
  t.throws(() => demo.configWith({ port: 'x' }), ConfigError, 'a bad file is refused with its problems');
});
