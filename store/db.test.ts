import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Db } from './db.ts';

t.test('migrations apply once and survive reopen', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'db-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'x.duckdb');
  const db = await Db.open(path);
  const tables = await db.all<{ name: string }>("SELECT table_name AS name FROM information_schema.tables");
  t.ok(tables.some((r) => r.name === 'vehicle_positions'));
  await db.close();
  const again = await Db.open(path);
  t.same(await again.migrate(), [], 'nothing left to apply');
  await again.close();
});

t.test('a failed transaction rolls back and the queue keeps going', async (t) => {
  const db = await Db.open(':memory:');
  t.teardown(() => db.close());
  await db.run('CREATE TABLE t (i INTEGER)');
  await t.rejects(db.transaction(async (c) => {
    await c.run('INSERT INTO t VALUES (1)');
    throw new Error('boom');
  }), /boom/);
  const [row] = await db.all<{ n: bigint }>('SELECT count(*) AS n FROM t');
  t.equal(Number(row!.n), 0);
  await db.append('t', (a) => { a.appendInteger(7); a.endRow(); });
  const rows = await db.all<{ i: number }>('SELECT i FROM t');
  t.same(rows, [{ i: 7 }]);
});
