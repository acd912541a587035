import t from 'tap';
import { chmodSync, copyFileSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '../core/config.ts';
import { captureLogs } from '../test/support/logs.ts';
import { assetPath } from '../core/assets.ts';
import { DatabaseMissingError, Db, dbOptions, duckdbMemoryLimit } from './db.ts';

const mode = (path: string) => statSync(path).mode & 0o777;

t.test('the database, its folder and its WAL are owner-only under a permissive umask', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'db-modes-'));
  const previous = process.umask(0o022);
  t.teardown(() => {
    process.umask(previous);
    rmSync(dir, { recursive: true, force: true });
  });
  const path = join(dir, 'data', 'nested', 'x.duckdb');
  const logs = captureLogs();
  const db = await Db.open(path, { log: logs.logger });
  await db.run('CREATE TABLE t (v VARCHAR)');
  await db.run("INSERT INTO t VALUES ('private')");
  t.equal(mode(join(dir, 'data')), 0o700, 'a folder it creates: 0700');
  t.equal(mode(join(dir, 'data', 'nested')), 0o700);
  t.equal(mode(path), 0o600, 'the file: 0600');
  t.ok(existsSync(`${path}.wal`), 'a WAL while open');
  t.equal(mode(`${path}.wal`), 0o600, 'the WAL DuckDB created itself: 0600');
  t.same(logs.lines, [], 'nothing to tighten on a new file');
  await db.close();

  // a file an earlier version left readable: tightened, and said once
  chmodSync(path, 0o644);
  const again = await Db.open(path, { log: logs.logger });
  await again.close();
  t.equal(mode(path), 0o600);
  t.equal(logs.lines.length, 1);
  t.match(logs.lines[0], { msg: /readable by other users of this host: made owner-only/, files: [path] });
  const third = await Db.open(path, { log: logs.logger });
  await third.close();
  t.equal(logs.lines.length, 1, 'not again once private');
});

t.test('create: false refuses a missing file and leaves nothing behind', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'db-missing-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'typo', 'x.duckdb');
  await t.rejects(Db.open(path, { create: false }), DatabaseMissingError);
  await t.rejects(Db.open(path, { create: false }), { message: `no database at ${path}`, path });
  t.notOk(existsSync(join(dir, 'typo')), 'no folder, no file');
  const made = await Db.open(path);
  await made.close();
  const opened = await Db.open(path, { create: false });
  await opened.close();
  t.pass('an existing file opens');
});

t.test('migrations apply once and survive reopen', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'db-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'x.duckdb');
  const db = await Db.open(path);
  const tables = await db.all<{ name: string }>('SELECT table_name AS name FROM information_schema.tables');
  t.ok(tables.some((r) => r.name === 'vehicle_positions'));
  await db.close();
  const again = await Db.open(path);
  t.same(await again.migrate(), [], 'nothing left to apply');
  await again.close();
});

t.test('an upgrade whose migration fails applies none of its migrations', async (t) => {
  const db = await Db.open(':memory:');
  t.teardown(() => db.close());
  // a file at migration 009 whose 011 cannot apply (feed_snapshots already there)
  await db.run(
    'DROP TABLE broker_offsets; DROP TABLE schedule_days; DROP TABLE schedule_sources; DROP TABLE schedule_versions',
  );
  await db.run('DROP SEQUENCE schedule_version_ids');
  // later migrations stay applied: only 010..012 are pending again
  await db.run('DELETE FROM schema_migrations WHERE version BETWEEN 10 AND 12');
  await t.rejects(db.migrate(), /migration 011_snapshots\.sql failed \(no migration of this run was applied\)/);
  const [latest] = await db.all<{ v: number }>('SELECT max(version) AS v FROM schema_migrations WHERE version <= 12');
  t.equal(latest!.v, 9, 'schema_migrations still ends at 009');
  const tables = await db.all<{ name: string }>(
    "SELECT table_name AS name FROM information_schema.tables WHERE table_name = 'schedule_versions'",
  );
  t.same(tables, [], "010's tables rolled back with it");
  await db.run('DROP TABLE feed_snapshots');
  t.same(
    await db.migrate(),
    ['010_schedule_versions.sql', '011_snapshots.sql', '012_broker_offsets.sql'],
    'the cause removed, all of them apply',
  );
});

t.test('a failed transaction rolls back and the queue keeps going', async (t) => {
  const db = await Db.open(':memory:');
  t.teardown(() => db.close());
  await db.run('CREATE TABLE t (i INTEGER)');
  await t.rejects(
    db.transaction(async (c) => {
      await c.run('INSERT INTO t VALUES (1)');
      throw new Error('boom');
    }),
    /boom/,
  );
  const [row] = await db.all<{ n: bigint }>('SELECT count(*) AS n FROM t');
  t.equal(Number(row!.n), 0);
  await db.append('t', (a) => {
    a.appendInteger(7);
    a.endRow();
  });
  const rows = await db.all<{ i: number }>('SELECT i FROM t');
  t.same(rows, [{ i: 7 }]);
});

t.test('store.memory_limit, store.threads and the temp directory beside the file reach DuckDB', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'db-settings-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'x.duckdb');
  const config = parseConfig({ db_path: path, store: { memory_limit: '256MB', threads: 1 } });
  const db = await Db.open(config.db_path, dbOptions(config.store));
  t.teardown(() => db.close());
  const setting = async (name: string) =>
    (await db.all<{ v: unknown }>(`SELECT current_setting('${name}') AS v`))[0]!.v;
  // DuckDB reports 256MB (10^6) in MiB
  t.equal(await setting('memory_limit'), '244.1 MiB');
  t.equal(Number(await setting('threads')), 1);
  t.equal(await setting('temp_directory'), `${path}.tmp`);

  const other = await Db.open(':memory:', dbOptions(parseConfig({}).store));
  t.teardown(() => other.close());
  const [row] = await other.all<{ v: string }>("SELECT current_setting('memory_limit') AS v");
  t.equal(row!.v, '953.6 MiB', 'the default, 1GB, instead of 80% of RAM');
});

t.test('a share of RAM becomes a size DuckDB accepts', async (t) => {
  t.equal(duckdbMemoryLimit('25%', 8 * 2 ** 30), '2048MiB');
  t.equal(duckdbMemoryLimit('1GB'), '1GB');
  t.throws(() => parseConfig({ store: { memory_limit: 'lots' } }), /store\.memory_limit/);
  t.throws(() => parseConfig({ store: { memory_limit: '150%' } }), /store\.memory_limit/);
  t.equal(parseConfig({ store: { memory_limit: '10%' } }).store.memory_limit, '10%');
});

t.test('a file whose migrations are still in the WAL (a crash before any checkpoint) opens again', async (t) => {
  // DuckDB replays DDL from the WAL: an ALTER whose DEFAULT calls a function (getvariable) made
  // that replay fail with "no default database set", and the file no longer opened
  const dir = mkdtempSync(join(tmpdir(), 'db-wal-replay-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'live.duckdb');
  const db = await Db.open(path);
  t.teardown(() => db.close().catch(() => undefined));
  t.ok(existsSync(`${path}.wal`), 'the migrations are in the WAL, not checkpointed');
  // the files as a crash leaves them: copied while the database is open
  const crashed = join(dir, 'crashed.duckdb');
  copyFileSync(path, crashed);
  copyFileSync(`${path}.wal`, `${crashed}.wal`);
  const reopened = await Db.open(crashed);
  t.teardown(() => reopened.close());
  const [row] = await reopened.all<{ n: bigint }>('SELECT count(*) AS n FROM schema_migrations');
  t.equal(
    Number(row!.n),
    readdirSync(assetPath('store/migrations')).filter((f) => f.endsWith('.sql')).length,
    'every migration replayed',
  );
});
