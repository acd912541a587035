import t from 'tap';
import { Db } from './db.ts';
import {
  inTransaction,
  microsOfMs,
  quoteIdent,
  runPrepared,
  sqlString,
  timestamptzFromMs,
  timestamptzValue,
  tsParam,
} from './sql.ts';

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

t.test('epoch ms → TIMESTAMPTZ is exact: SQL, values for appenders and packed int64s agree', async (t) => {
  const db = await Db.open(':memory:', { migrate: false });
  t.teardown(() => db.close());
  const edges = [
    0, 1, 999, 1_000, -1, -999, -1_001, 1_700_000_000_000, 1_700_000_000_001, 1_700_000_000_999,
    4_102_444_799_999 /* 2099-12-31T23:59:59.999Z */, 9_007_199_254_740 /* 2^53 µs, in ms */, 100_000_000_000_001,
    253_402_300_799_999 /* 9999-12-31T23:59:59.999Z, the usual "never" */,
  ];
  for (const ms of edges) {
    const [row] = await db.all<{ sql: bigint; value: bigint; back: number; text: string }>(
      `SELECT epoch_us(${tsParam(1)}) AS sql, epoch_us($2) AS value,
        epoch_ms(${timestamptzFromMs('$1')})::DOUBLE AS back,
         strftime(${tsParam('1')} AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%S.%g') AS text`,
      [ms, timestamptzValue(ms)],
    );
    t.equal(row!.sql, BigInt(ms) * 1000n, `${ms}: SQL`);
    t.equal(row!.value, BigInt(ms) * 1000n, `${ms}: value`);
    t.equal(row!.back, ms, `${ms}: back through epoch_ms`);
    if (Math.abs(ms) * 1000 < 2 ** 53) t.equal(microsOfMs(ms), ms * 1000, `${ms}: packed`);
    if (ms >= 0) t.equal(`${row!.text}Z`, new Date(ms).toISOString(), `${ms}: the same instant as Date`);
  }
  // why not to_timestamp(ms / 1000): through a DOUBLE of seconds the last instant of 9999 moves
  const [old] = await db.all<{ us: bigint }>(
    'SELECT epoch_us(to_timestamp($1::DOUBLE / 1000)) AS us',
    [253_402_300_799_999],
  );
  t.not(old!.us, 253_402_300_799_999_000n, 'the DOUBLE form is off by microseconds there');
});

t.test('a fraction of a millisecond rounds to the nearest millisecond, alike in SQL and in values', async (t) => {
  const db = await Db.open(':memory:', { migrate: false });
  t.teardown(() => db.close());
  for (const [ms, want] of [
    [1_700_000_000_123.4, 1_700_000_000_123_000n],
    [1_700_000_000_123.6, 1_700_000_000_124_000n],
    [1_700_000_000_999.5, 1_700_000_001_000_000n],
    [-0.4, 0n],
  ] as const) {
    const [row] = await db.all<{ sql: bigint; value: bigint }>(
      `SELECT epoch_us(${tsParam(1)}) AS sql, epoch_us($2) AS value`,
      [ms, timestamptzValue(ms)],
    );
    t.equal(row!.sql, want, `${ms}: SQL`);
    t.equal(row!.value, want, `${ms}: value`);
  }
});
