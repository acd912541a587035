import t from 'tap';
import { Db } from './db.ts';
import { inTransaction, quoteIdent, runPrepared, sqlString } from './sql.ts';

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
  t.equal(
    await inTransaction(conn, async (c) => {
      await c.run('INSERT INTO t VALUES (1)');
      return 'done';
    }),
    'done',
  );
  await t.rejects(
    inTransaction(conn, async (c) => {
      await c.run('INSERT INTO t VALUES (2)');
      throw new Error('refused');
    }),
    /refused/,
  );
  // a statement error aborts the transaction; the ROLLBACK still leaves the connection usable
  await t.rejects(
    inTransaction(conn, async (c) => c.run("INSERT INTO t VALUES ('nope')")),
    /Conversion|convert/i,
  );
  const rows = (await conn.runAndReadAll('SELECT x FROM t ORDER BY x')).getRowObjectsJS();
  t.strictSame(rows, [{ x: 1 }]);
});

t.test('a statement prepared once sees later rows and a changed table, and takes new bindings', async (t) => {
  const db = await Db.open(':memory:', { migrate: false });
  t.teardown(() => db.close());
  await db.run('CREATE TABLE days (d DATE, route VARCHAR, n INTEGER)');
  const sql = `SELECT route, sum(n) AS n FROM days WHERE route = $route AND d >= CAST($from AS DATE) GROUP BY ALL`;
  const read = (route: string, from: string) =>
    db.exclusive(async (c) => (await runPrepared(c, sql, { route, from })).getRowObjectsJS());
  t.same(await read('A', '2024-01-01'), [], 'prepared on an empty table');
  await db.run(`INSERT INTO days VALUES ('2024-01-02', 'A', 3), ('2024-01-03', 'A', 4), ('2024-01-03', 'B', 5)`);
  t.same(await read('A', '2024-01-01'), [{ route: 'A', n: 7n }], 'rows inserted after it was prepared');
  t.same(await read('B', '2024-01-03'), [{ route: 'B', n: 5n }], 'other bindings');
  await db.run('ALTER TABLE days ADD COLUMN extra INTEGER');
  await db.run(`INSERT INTO days VALUES ('2024-01-04', 'A', 1, 9)`);
  t.same(await read('A', '2024-01-01'), [{ route: 'A', n: 8n }], 'after the table changed');
});
