import t from 'tap';
import { Db } from './db.ts';
import { inTransaction, quoteIdent, sqlString } from './sql.ts';

t.test('quoted strings and identifiers round-trip through DuckDB', async (t) => {
  const db = await Db.open(':memory:', { migrate: false });
  t.teardown(() => db.close());
  const odd = `it's "odd"; --`;
  const [row] = await db.all<Record<string, string>>(`SELECT ${sqlString(odd)} AS ${quoteIdent(odd)}`);
  t.strictSame(row, { [odd]: odd });
});

t.test('inTransaction commits, or rolls back and rethrows the first error', async (t) => {
  const db = await Db.open(':memory:', { migrate: false });
  t.teardown(() => db.close());
  const conn = await db.connect();
  t.teardown(() => conn.closeSync());
  await conn.run('CREATE TABLE t (x INTEGER)');
  t.equal(await inTransaction(conn, async (c) => { await c.run('INSERT INTO t VALUES (1)'); return 'done'; }), 'done');
  await t.rejects(inTransaction(conn, async (c) => {
    await c.run('INSERT INTO t VALUES (2)');
    throw new Error('refused');
  }), /refused/);
  // a statement error aborts the transaction; the ROLLBACK still leaves the connection usable
  await t.rejects(inTransaction(conn, async (c) => c.run('INSERT INTO t VALUES (\'nope\')')), /Conversion|convert/i);
  const rows = (await conn.runAndReadAll('SELECT x FROM t ORDER BY x')).getRowObjectsJS();
  t.strictSame(rows, [{ x: 1 }]);
});
