// Config reload on a serving process: SIGHUP adds a feed (polled, on /status.json); an invalid
// file is refused with every problem listed and the running config kept; `transit-api reload`
// removes the feed again and names what needs a restart. Then the operator commands through the
// socket against the same commands on the file once the service stopped: same output. The
// online backup is a working database.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { encodeFeed, header } from './support/pipeline-fakes.ts';
import { Db } from '../store/db.ts';
import { cli, op, startServe, tempDir, waitFor, writeJson } from './support/service-process.ts';
import { writeSmallGtfsZip } from './support/small-gtfs.ts';

t.setTimeout(300_000);

interface StatusFeed {
  feed_id: string;
  last_poll_at: string | null;
}

const ymd = (d: Date) => d.toISOString().slice(0, 10).replaceAll('-', '');

t.test('reload while serving; commands through the socket read the same as on the file', async (t) => {
  const dir = tempDir(t.teardown.bind(t), 'admin-reload-');
  const now = Math.floor(Date.now() / 1000);
  const feedFile = (name: string) => {
    const path = join(dir, `${name}.pb`);
    writeFileSync(
      path,
      encodeFeed({
        header: header(now),
        entity: [
          {
            id: 'v',
            vehicle: {
              vehicle: { id: `bus-${name}` },
              position: { latitude: 41.88, longitude: -87.63 },
              timestamp: now,
            },
          },
        ],
      }),
    );
    return `file://${path}`;
  };
  const day = 86_400_000;
  const gtfs = writeSmallGtfsZip(join(dir, 'small.zip'), {
    trips: 4,
    start: ymd(new Date(Date.now() - 20 * day)),
    end: ymd(new Date(Date.now() + 20 * day)),
  });
  const configPath = join(dir, 'transit.json');
  const db = join(dir, 'transit.duckdb');
  const base = {
    host: '127.0.0.1',
    port: 0,
    db_path: db,
    signing_secret: 'reload-test-secret-0123456789',
    schedules: [{ id: 'small', source: gtfs }],
    exports: { enabled: false, dir: join(dir, 'exports') },
    snapshot: { enabled: false, path: join(dir, 'snapshot.duckdb') },
  };
  const feedA = { id: 'feed-a', kind: 'gtfs-rt', url: feedFile('a'), interval_s: 3_600 };
  const feedB = { id: 'feed-b', kind: 'gtfs-rt', url: feedFile('b'), interval_s: 1 };
  writeJson(configPath, { ...base, feeds: [feedA] });
  const service = await startServe(configPath);
  t.teardown(() => service.stop('SIGKILL'));
  const feeds = async () =>
    ((await (await fetch(`${service.url}/status.json`)).json()) as { feeds: StatusFeed[] }).feeds;
  t.same(
    (await feeds()).map((f) => f.feed_id),
    ['feed-a'],
  );

  // a service day that has ended in every time zone: yesterday by UTC is still running in the
  // Americas for the first hours of the UTC day (Chicago's runs until 10:00Z the next day)
  const to = new Date(Date.now() - 2 * day).toISOString().slice(0, 10);
  const from = new Date(Date.now() - 7 * day).toISOString().slice(0, 10);
  const commands = {
    reliability: ['--mode', 'bus', '--group', 'period', '--from', from, '--to', to],
    export: ['--from', to, '--dataset', 'alerts', '--format', 'parquet', '--force'],
  } as const;
  const online: Record<string, Awaited<ReturnType<typeof op>>> = {};
  let backupOnline!: Awaited<ReturnType<typeof op>>;

  t.test('commands through the socket', async (t) => {
    for (const [name, args] of Object.entries(commands))
      online[name] = await op(name as keyof typeof commands, [...args, '--config', configPath]);
    backupOnline = await op('backup', [join(dir, 'online.backup'), '--json', '--config', configPath]);
    t.equal(backupOnline.code, 0, backupOnline.err);
  });

  t.test('import-gtfs through the socket: a new version, used by the running service', async (t) => {
    const bigger = writeSmallGtfsZip(join(dir, 'small-2.zip'), {
      trips: 5,
      start: ymd(new Date(Date.now() - 20 * day)),
      end: ymd(new Date(Date.now() + 20 * day)),
      feedVersion: 'v2',
    });
    const imported = await op('import-gtfs', [bigger, '--id', 'small', '--config', configPath]);
    t.equal(imported.code, 0, imported.err);
    t.match(imported.out, /^imported schedule small from /);
    const status = JSON.parse((await op('status', ['--json', '--config', configPath])).out) as {
      service: { running: boolean };
      schedules: Array<{ id: string; trips: number; feed_version: string | null }>;
    };
    t.equal(status.service.running, true, 'done by the service');
    t.match(status.schedules, [{ id: 'small', trips: 10, feed_version: 'v2' }]);
    // back to the first copy, so the comparisons below see one schedule throughout
    t.equal((await op('import-gtfs', [gtfs, '--id', 'small', '--config', configPath])).code, 0);
  });

  t.test('SIGHUP adds a feed', async (t) => {
    writeJson(configPath, { ...base, feeds: [feedA, feedB], port: 1 });
    service.child.kill('SIGHUP');
    const added = await waitFor('feed-b polled', async () =>
      (await feeds()).find((f) => f.feed_id === 'feed-b' && f.last_poll_at),
    );
    t.ok(added, 'the new feed is polled and on /status.json');
    // the line comes once the served ids are re-read too, which may be after the first poll
    await waitFor('the reload logged', async () => /reload applied/.test(service.output()));
    t.match(service.output(), /reload applied: feeds \+feed-b .*needs restart: port/);
  });

  t.test('an invalid file is refused with every problem; the running config is kept', async (t) => {
    writeJson(configPath, {
      ...base,
      port: 'x',
      feeds: [feedA, { id: 'bad id!', kind: 'gtfs-rt', url: 'ftp://nope' }],
    });
    const refused = await cli(['reload', '--config', configPath]);
    t.equal(refused.code, 2, refused.out + refused.err);
    t.match(refused.err, /reload refused: .*transit\.json is invalid; the running config is kept/);
    t.match(refused.err, /- port: /);
    t.match(refused.err, /- feeds\.1\.id: /);
    t.match(refused.err, /- feeds\.1\.url: must be an http\(s\):\/\/ or file:\/\/ URL/);
    service.child.kill('SIGHUP');
    await waitFor(
      'the SIGHUP refusal logged',
      async () => (service.output().match(/reload refused/g) ?? []).length >= 2,
    );
    t.same(
      (await feeds()).map((f) => f.feed_id),
      ['feed-a', 'feed-b'],
      'both feeds still served',
    );
  });

  t.test('transit-api reload removes a feed and says what needs a restart', async (t) => {
    writeJson(configPath, { ...base, feeds: [feedA], port: 1 });
    const reloaded = await op('reload', ['--config', configPath]);
    t.equal(reloaded.code, 0, reloaded.err);
    t.match(reloaded.out, /feeds {5}added -; changed -; removed feed-b/);
    t.match(reloaded.out, /needs restart: port/);
    t.same(
      (await feeds()).map((f) => f.feed_id),
      ['feed-a'],
      'the removed feed left /status.json',
    );
    const json = JSON.parse((await op('reload', ['--json', '--config', configPath])).out) as {
      applied: boolean;
      feeds: { removed: string[] };
    };
    t.match(json, { applied: true, feeds: { added: [], changed: [], removed: [] } }, 'nothing left to change');
    writeJson(configPath, { ...base, feeds: [feedA] });
  });

  t.test('through the socket and on the file: same output', async (t) => {
    const statusOnline = await op('status', ['--config', configPath]);
    t.equal(statusOnline.code, 0, statusOnline.err);
    t.match(statusOnline.out, /^service {4}running: pid \d+ /);
    t.equal(await service.stop('SIGTERM'), 0);

    const statusOffline = await op('status', ['--config', configPath]);
    t.match(statusOffline.out, /^service {4}not running \(nothing answers on its admin socket \S+\.sock\)\n/);
    const rest = (text: string) => text.split('\n').slice(1).join('\n');
    t.equal(rest(statusOffline.out), rest(statusOnline.out), 'status: everything but the service line');
    t.match(
      statusOffline.out,
      /feed-b \(not in the config\): last poll \S+ (ok|unchanged)/,
      "the removed feed's polls stay in history",
    );

    for (const [name, args] of Object.entries(commands)) {
      const offline = await op(name as keyof typeof commands, [...args, '--config', configPath]);
      t.equal(offline.code, online[name]!.code, `${name}: same exit code`);
      t.equal(offline.out, online[name]!.out, `${name}: same output`);
      t.equal(offline.err, online[name]!.err, `${name}: same messages`);
    }
    t.match(online.reliability!.out, /^R1\s/m, 'the report has the route');
    // the service polled only today: a day it never watched gets no file (exports/README.md)
    t.match(online.export!.out, /^no data\s.*no service data for service day/m, 'an unwatched day gets no files');

    const backupOffline = await op('backup', [join(dir, 'offline.backup'), '--json', '--config', configPath]);
    type Backup = { tables: Array<{ name: string; rows: number }> };
    const [a, b] = [backupOnline, backupOffline].map((r) => JSON.parse(r.out) as Backup);
    t.same(
      a!.tables.map((x) => x.name),
      b!.tables.map((x) => x.name),
      'backup: the same tables',
    );
    const stable = ['api_keys', 'gtfs_routes', 'gtfs_trips', 'gtfs_stop_times', 'schedules', 'schema_migrations'];
    const rows = (x: Backup) =>
      Object.fromEntries(x.tables.filter((r) => stable.includes(r.name)).map((r) => [r.name, r.rows]));
    t.same(rows(a!), rows(b!), 'backup: the same rows where nothing changed meanwhile');
  });

  t.test('the online backup is a working database', async (t) => {
    const restored = await Db.open(join(dir, 'online.backup'));
    t.teardown(() => restored.close());
    t.same(await restored.migrate(), [], 'migrations all recorded: nothing to apply');
    const [trips] = await restored.all<{ n: bigint }>(
      "SELECT count(*) AS n FROM gtfs_trips WHERE schedule_id = 'small'",
    );
    t.equal(Number(trips!.n), 8);
    await restored.run(
      "INSERT INTO api_keys (id, key_hash, prefix, plan, test, created_at) VALUES ('key_x', 'h', 'p', " +
        "'free', false, now())",
    );
    await t.rejects(
      restored.run(
        "INSERT INTO api_keys (id, key_hash, prefix, plan, test, created_at) VALUES ('key_x', 'h2', 'p', " +
          "'free', false, now())",
      ),
      /Duplicate key/,
      'constraints kept',
    );
  });
});
