import t, { type Test } from 'tap';
import { setImmediate as turn } from 'node:timers/promises';
import { appendColumns, appendColumnsInSlices, type ColumnDef } from './chunk-append.ts';
import { Db } from './db.ts';

interface Row {
  id: number;
  name: string | null;
  at_ms: number;
}
const COLUMNS: readonly ColumnDef<Row>[] = [
  { name: 'id', kind: 'integer', get: (r) => r.id },
  { name: 'name', kind: 'varchar', get: (r) => r.name },
  { name: 'seen_at', kind: 'timestamptz', get: (r) => r.at_ms },
];
const rows = (n: number): Row[] =>
  Array.from({ length: n }, (_, i) => ({
    id: i,
    name: i % 7 === 0 ? null : `a name longer than twelve bytes ${i}`,
    at_ms: Date.UTC(2024, 0, 1) + i * 1000,
  }));

async function table(t: Test): Promise<Db> {
  const db = await Db.open(':memory:', { migrate: false });
  t.teardown(() => db.close());
  await db.run('CREATE TABLE t (id INTEGER, name VARCHAR, seen_at TIMESTAMPTZ)');
  return db;
}

t.test(
  'in slices: a chunk of 2,048 rows at a time, the event loop turning between them, the same rows stored',
  async (t) => {
    const db = await table(t);
    let slices = 0;
    let turnsSeen = 0;
    await db.transaction(async (conn) => {
      const appender = await conn.createAppender('t');
      // a callback queued by someone else while the rows are appended
      const others = setInterval(() => turnsSeen++, 0);
      try {
        await appendColumnsInSlices(appender, COLUMNS, rows(5_000), async () => {
          slices++;
          await turn();
        });
        appender.flushSync();
      } finally {
        clearInterval(others);
        appender.closeSync();
      }
    });
    t.equal(slices, 3, '5,000 rows are three chunks');
    t.ok(turnsSeen > 0, 'other work ran while the rows were appended');
    const [stored] = await db.all<{ n: number; nulls: number; last: string }>(
      `SELECT count(*)::INTEGER AS n, count(*) FILTER (WHERE name IS NULL)::INTEGER AS nulls, max(name) FILTER ` +
        `(WHERE id = 4999) AS last FROM t`,
    );
    t.same(stored, { n: 5_000, nulls: 715, last: 'a name longer than twelve bytes 4999' });
  },
);

t.test('sliced and in one go store the same values', async (t) => {
  const db = await table(t);
  const data = rows(2_100);
  await db.append('t', (a) => appendColumns(a, COLUMNS, data));
  await db.transaction(async (conn) => {
    const appender = await conn.createAppender('t');
    try {
      await appendColumnsInSlices(appender, COLUMNS, data, () => turn());
    } finally {
      appender.closeSync();
    }
  });
  const [diff] = await db.all<{ n: number }>(`SELECT count(*)::INTEGER AS n FROM (
    SELECT id, name, seen_at, count(*) AS c FROM t GROUP BY ALL HAVING c <> 2)`);
  t.equal(diff!.n, 0, 'every row twice');
});

t.test('an empty list appends nothing and never pauses', async (t) => {
  const db = await table(t);
  let slices = 0;
  await db.transaction(async (conn) => {
    const appender = await conn.createAppender('t');
    await appendColumnsInSlices(appender, COLUMNS, [], async () => {
      slices++;
    });
    appender.closeSync();
  });
  t.equal(slices, 0);
});

t.test('long and non-ASCII values repeated in a chunk are stored as given, row by row', async (t) => {
  const db = await table(t);
  // repeats near and far, across the chunk boundary (2,048), among nulls, short and inlined values
  const values = [
    'vehicles-reporting-feed',
    'in_transit_to',
    'café',
    'Überlandbus nach Süden',
    null,
    'short',
    'another long value: 42 bytes of it, or so.',
  ];
  const source: Row[] = Array.from({ length: 4_500 }, (_, i) => ({
    id: i,
    name: values[(i * 5 + (i >> 6)) % values.length]!,
    at_ms: Date.UTC(2024, 0, 1),
  }));
  await db.transaction(async (conn) => {
    const appender = await conn.createAppender('t');
    appendColumns(appender, COLUMNS, source);
    appender.closeSync();
  });
  const stored = await db.all<{ id: number; name: string | null }>('SELECT id, name FROM t ORDER BY id');
  t.same(
    stored,
    source.map((r) => ({ id: r.id, name: r.name })),
  );
});

t.test('smallint columns keep their sign and range, nulls included (the usage tables’ status)', async (t) => {
  const db = await Db.open(':memory:', { migrate: false });
  t.teardown(() => db.close());
  await db.run('CREATE TABLE s (status SMALLINT, n INTEGER)');
  const values = [200, 304, 429, -1, 32_767, -32_768, null, 503];
  const appender = await (await db.connect()).createAppender('s');
  appendColumns(
    appender,
    [
      { name: 'status', kind: 'smallint', get: (v: number | null) => v },
      { name: 'n', kind: 'integer', get: (v: number | null) => (v === null ? 0 : 1) },
    ],
    values,
  );
  appender.closeSync();
  const stored = await db.all<{ status: number | null }>('SELECT status FROM s ORDER BY rowid');
  t.same(
    stored.map((r) => r.status),
    values,
  );
});
