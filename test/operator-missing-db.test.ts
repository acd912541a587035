// Operator commands read or change what a service stored: pointed at a path where no database
// is (TRANSIT_DB unset or mistyped, the wrong --config), they exit 2 naming the path they looked
// at and how to point them elsewhere, and leave no empty database there. Only the commands that
// start something (serve, ingest, replay, import-gtfs, keys create) create one.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { childEnv, runCli } from './support/cli.ts';
import { op, tempDir, writeJson } from './support/service-process.ts';

t.setTimeout(300_000);

t.test('the CLI on a mistyped TRANSIT_DB: exit 2, the path named, nothing created', async (t) => {
  const dir = tempDir(t.teardown.bind(t), 'missing-db-');
  const typo = join(dir, 'trasnit.duckdb');
  const r = await runCli(['backup', join(dir, 'b.duckdb')], { cwd: dir, env: childEnv({ TRANSIT_DB: typo }) });
  t.equal(r.code, 2, r.stderr);
  t.match(r.stderr, `no database at ${typo} (TRANSIT_DB) and no transit-api service answers on ${typo}.sock`);
  t.match(r.stderr, /Point it at yours with --config <file> \(or TRANSIT_CONFIG\).* TRANSIT_DB=<path>/);
  t.match(r.stderr, /`transit-api backup` works on an existing database and does not create one/);
  t.same(readdirSync(dir), [], 'no database, WAL or backup left behind');
});

t.test('status with no config and no database says what it looked for', async (t) => {
  const dir = tempDir(t.teardown.bind(t), 'missing-db-');
  const r = await runCli(['status'], { cwd: dir, env: childEnv({ TRANSIT_DB: '' }) });
  t.equal(r.code, 2, r.stderr);
  const db = join(dir, 'data', 'transit.duckdb');
  t.match(
    r.stderr,
    `no database at ${db} (the default db_path, with no --config or TRANSIT_CONFIG, relative to ${dir})`,
  );
  t.match(r.stderr, `no transit-api service answers on ${db}.sock`);
  t.notMatch(r.stdout + r.stderr, /not running/);
  t.notOk(existsSync(join(dir, 'data')), 'no data folder created');
});

t.test('every command but keys create refuses a missing database named by --config', async (t) => {
  const dir = tempDir(t.teardown.bind(t), 'missing-db-');
  const db = join(dir, 'db', 'transit.duckdb');
  const config = join(dir, 'transit.json');
  writeJson(config, { db_path: db, exports: { dir: join(dir, 'exports') } });
  const commands: Array<[Parameters<typeof op>[0], string[]]> = [
    ['keys', ['list']],
    ['keys', ['revoke', 'key_x']],
    ['status', []],
    ['reliability', ['--route', '1']],
    ['export', ['--from', '2024-01-02']],
    ['snapshot', [join(dir, 'snap.duckdb')]],
    ['backup', [join(dir, 'b.duckdb')]],
  ];
  for (const [name, args] of commands) {
    const r = await op(name, [...args, '--config', config]);
    t.equal(r.code, 2, `${name} ${args[0] ?? ''}: exit 2`);
    t.match(r.err, `no database at ${db} (db_path of ${config})`, `${name}: the path and where it came from`);
  }
  t.same(readdirSync(dir), ['transit.json'], 'nothing created by any of them');

  const created = await op('keys', ['create', '--plan', 'free', '--config', config]);
  t.equal(created.code, 0, created.err);
  t.ok(existsSync(db), 'keys create makes the database');
  const listed = await op('keys', ['list', '--config', config]);
  t.equal(listed.code, 0, listed.err);
  t.match(listed.out, /free/);
});
