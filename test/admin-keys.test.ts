// Keys issued and revoked while the service runs: the CLI reaches the serving process through
// its admin socket (DuckDB lets no second process open the file). A new key works on the next
// request, a revoked one is refused on the next request. The CLI piped into `head -1` exits 0
// with the key printed and the key kept. A service killed with SIGKILL leaves its socket file:
// the CLI then works on the file itself, and the next service replaces the stale socket.
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { cli, op, startServe, tempDir, writeJson } from './support/service-process.ts';

t.setTimeout(300_000);

t.test('keys while serving, through the admin socket', async (t) => {
  const dir = tempDir(t.teardown.bind(t), 'admin-keys-');
  const config = join(dir, 'transit.json');
  const db = join(dir, 'transit.duckdb');
  writeJson(config, {
    host: '127.0.0.1',
    port: 0,
    db_path: db,
    exports: { enabled: false, dir: join(dir, 'exports') },
    snapshot: { enabled: false, path: join(dir, 'snapshot.duckdb') },
  });
  const service = await startServe(config);
  t.teardown(() => service.stop('SIGKILL'));
  const socket = `${db}.sock`;
  t.equal(statSync(socket).mode & 0o777, 0o600, 'the admin socket is private to the service user');
  const get = (key: string) =>
    fetch(`${service.url}/api/v1/alerts`, { headers: { authorization: `Bearer ${key}` } }).then((r) => r.status);

  const created = await op('keys', ['create', '--plan', 'regular', '--name', 'customer', '--config', config]);
  t.equal(created.code, 0, created.err);
  const key = created.out.split('\n')[0]!;
  t.match(key, /^tk_live_[A-Za-z0-9]{32}$/, 'the key alone on the first line');
  t.match(created.out, /^created key_\w+ \(regular\)/m);
  t.equal(await get(key), 200, 'the new key works on the next request');

  const listed = await op('keys', ['list', '--json', '--config', config]);
  t.equal(listed.code, 0, listed.err);
  const keys = JSON.parse(listed.out) as Array<{ id: string; name: string; revoked_at: string | null }>;
  const mine = keys.find((k) => k.name === 'customer');
  t.ok(mine, 'listed through the service');

  // cached by the API now; the revocation must not wait for api.key_recheck_ms
  for (let i = 0; i < 3; i++) t.equal(await get(key), 200);
  const revoked = await op('keys', ['revoke', mine!.id, '--config', config]);
  t.equal(revoked.code, 0, revoked.err);
  t.match(revoked.out, `revoked ${mine!.id}`);
  t.equal(await get(key), 401, 'the revoked key is refused on the next request');

  const missing = await op('keys', ['revoke', 'key_nope', '--config', config]);
  t.equal(missing.code, 1, 'same exit code as offline for an unknown key');
  t.match(missing.err, /no key with id or prefix "key_nope"/);
  const usage = await op('keys', ['create', '--plan', 'gold', '--config', config]);
  t.equal(usage.code, 2, 'a usage mistake exits 2 through the socket too');
  t.match(usage.err, /--plan must be one of free, regular, max/);

  t.test('piped into head -1: exit 0, the key printed and kept', async (t) => {
    const piped = await cli([], {
      shell:
        `set -o pipefail; "$0" "$@" keys create --plan free --name piped --config ` +
        `${JSON.stringify(config)} | head -1`,
    });
    t.equal(piped.code, 0, piped.err);
    t.match(piped.out, /^tk_live_[A-Za-z0-9]{32}\n$/);
    t.equal(await get(piped.out.trim()), 200, 'the key was kept');
    // a reader that is gone before anything is written: the write fails with EPIPE
    const closed = await cli([], {
      shell: `set -o pipefail; "$0" "$@" keys list --config ${JSON.stringify(config)} | true`,
    });
    t.equal(closed.code, 0, closed.err);
    t.notMatch(closed.err, /EPIPE/);
  });

  t.test(
    'a killed service leaves a stale socket: the CLI works on the file, the next service replaces it',
    async (t) => {
      await service.stop('SIGKILL');
      t.ok(existsSync(socket), 'SIGKILL leaves the socket file behind');
      const offline = await op('keys', ['list', '--json', '--config', config]);
      t.equal(offline.code, 0, offline.err);
      const names = (JSON.parse(offline.out) as Array<{ name: string }>).map((k) => k.name);
      t.same(names.sort(), ['customer', 'piped'], 'read from the file, every key kept');
      const status = await op('status', ['--config', config]);
      t.match(status.out, /^service {4}not running \(nothing answers on its admin socket \S+\)$/m);

      const again = await startServe(config);
      t.teardown(() => again.stop('SIGKILL'));
      const running = await op('status', ['--config', config]);
      t.match(
        running.out,
        new RegExp(`^service {4}running: pid ${again.child.pid} `, 'm'),
        'the stale socket was replaced',
      );
      t.equal(await again.stop('SIGTERM'), 0);
      t.notOk(existsSync(socket), 'removed on shutdown');
    },
  );
});
