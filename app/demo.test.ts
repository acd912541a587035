// `serve --demo`: loopback unless told otherwise (it prints live keys), and a config file given
// beside --demo merged over the demo's own config.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { ConfigError } from '../core/config.ts';
import { startDemo } from './demo.ts';

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
  t.throws(() => demo.configWith({ port: 'x' }), ConfigError, 'a bad file is refused with its problems');
});
