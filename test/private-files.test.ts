// Files and secrets of a real `serve` under a permissive umask (022): the database, its folder,
// WAL, exports, snapshot, backups and the generated signing secret are owner-only; the secret
// generated on the first start is read back on the next, so a download link signed before a
// restart still works after it; webhook secrets are stored encrypted; files an earlier version
// left readable are tightened at start and the log says so.
import { chmodSync, existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { Db } from '../store/db.ts';
import { isSealed } from '../webhooks/secret-box.ts';
import { op, startServe, tempDir, writeJson } from './support/service-process.ts';

t.setTimeout(300_000);

const mode = (path: string) => statSync(path).mode & 0o777;

t.test('private files and a signing secret that survives restarts', async (t) => {
  const previous = process.umask(0o022);
  t.teardown(() => process.umask(previous));
  const dir = tempDir(t.teardown.bind(t), 'private-files-');
  const data = join(dir, 'data');
  const db = join(data, 'transit.duckdb');
  const config = join(dir, 'transit.json');
  writeJson(config, {
    host: '127.0.0.1',
    port: 0,
    db_path: db,
    exports: { dir: join(data, 'exports') },
    snapshot: { path: join(data, 'snapshot.duckdb') },
    webhooks: { allow_private_targets: true },
  });

  // a day with service data of its own (an unwatched day gets no export file)
  const seed = await Db.open(db);
  await seed.run(`INSERT INTO vehicle_positions (feed_id, vehicle_id, route_id, trip_id, mode, lat, lon, position_at,
      observed_at) VALUES ('feed-1', 'v1', 'R1', 'T1', 'bus', 40.7, -74.0, '2024-01-02T18:00:00Z',
        '2024-01-02T18:00:00Z')`);
  await seed.close();

  const first = await startServe(config);
  t.teardown(() => first.stop('SIGKILL'));
  t.match(first.output(), /no signing_secret in the config: generated one and keep it in this file/);
  t.match(first.output(), /set \\"signing_secret\\"/, 'it names the config key');
  t.notMatch(first.output(), /signing_secret is not set/);
  const secretFile = `${db}.secret`;
  t.equal(mode(secretFile), 0o600, 'the generated secret: 0600');

  const created = await op('keys', ['create', '--plan', 'max', '--config', config]);
  t.equal(created.code, 0, created.err);
  const auth = { authorization: `Bearer ${created.out.split('\n')[0]}` };
  const endpoint = (await (
    await fetch(`${first.url}/api/v1/webhooks/endpoints`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ url: 'http://127.0.0.1:9/hook' }),
    })
  ).json()) as { id: string; secret: string };
  t.match(endpoint.secret, /^whsec_/);

  const exported = await op('export', ['--from', '2024-01-02', '--dataset', 'alerts', '--config', config]);
  t.equal(exported.code, 0, exported.err);
  const listed = (await (await fetch(`${first.url}/api/v1/history/exports`, { headers: auth })).json()) as {
    data: Array<{ id: string; download: { url: string } | null }>;
  };
  const link = listed.data.find((e) => e.download)!.download!.url;
  const download = (url: string) => fetch(`${url}${link}`).then((r) => r.status);
  t.equal(await download(first.url), 200, 'the signed link works');

  t.equal((await op('snapshot', ['--config', config])).code, 0);
  const backup = join(dir, 'backups', 'b.duckdb');
  const backedUp = await op('backup', [backup, '--config', config]);
  t.equal(backedUp.code, 0, backedUp.err);
  t.match(backedUp.out, `the generated signing secret copied to ${backup}.secret`);

  t.equal(mode(data), 0o700, 'the database folder');
  for (const file of [db, `${db}.wal`, join(data, 'snapshot.duckdb'), backup, `${backup}.secret`])
    t.equal(mode(file), 0o600, file);
  t.equal(mode(join(dir, 'backups')), 0o700);
  t.equal(mode(join(data, 'exports')), 0o700);
  t.equal(mode(join(data, 'exports', 'alerts')), 0o700);
  t.equal(mode(join(data, 'exports', 'alerts', 'alerts-2024-01-02.parquet')), 0o600);
  t.equal(mode(join(data, 'exports', 'alerts', 'alerts-2024-01-02.ndjson.gz')), 0o600);
  t.equal(await first.stop('SIGTERM'), 0);

  // at rest, the endpoint's secret is not the secret
  const closed = await Db.open(db, { create: false });
  const [row] = await closed.all<{ secret: string }>('SELECT secret FROM webhook_endpoints WHERE endpoint_id = $1', [
    endpoint.id,
  ]);
  await closed.close();
  t.ok(isSealed(row!.secret));
  t.notMatch(row!.secret, endpoint.secret.slice('whsec_'.length));

  // as an earlier version (or another umask) left them
  chmodSync(db, 0o644);
  chmodSync(join(data, 'exports', 'alerts', 'alerts-2024-01-02.parquet'), 0o644);
  const second = await startServe(config);
  t.teardown(() => second.stop('SIGKILL'));
  t.notMatch(second.output(), /generated one/, 'the secret is read back, not generated again');
  t.equal(await download(second.url), 200, 'a link signed before the restart still works');
  t.equal(mode(db), 0o600);
  t.equal(mode(join(data, 'exports', 'alerts', 'alerts-2024-01-02.parquet')), 0o600);
  t.equal(second.output().match(/database files were readable by other users/g)?.length, 1, 'said once');
  t.match(second.output(), /export files were readable by other users/);
  t.equal(await second.stop('SIGTERM'), 0);
  t.notOk(existsSync(`${db}.sock`));
});
