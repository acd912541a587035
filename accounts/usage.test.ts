// dailyUsage over usage rows seeded straight into DuckDB: day boundaries in UTC, zero-filled
// days, what counts as a request, a connection-minute and an error, and isolation by key and
// by live/test table.
import t from 'tap';
import { Db } from '../store/db.ts';
import { dailyUsage, USAGE_DAYS_MAX } from './usage.ts';

const NOW = Date.UTC(2024, 4, 10, 15, 0, 0); // 2024-05-10 15:00 UTC
const at = (iso: string) => Date.parse(iso);

interface Row {
  key: string | null;
  unit?: 'request' | 'connection-minute';
  status?: number;
  atMs: number;
  calls?: number;
  quantity?: number;
  table?: 'api_usage' | 'api_usage_test';
}

async function seed(db: Db, rows: Row[]): Promise<void> {
  for (const r of rows) {
    const calls = r.calls ?? 1;
    await db.run(
      `INSERT INTO ${r.table ?? 'api_usage'} VALUES ($1, 'regular', $2, 'GET', '/api/v1/alerts', $3, ` +
        `to_timestamp($4::DOUBLE / 1000), $5, $6, 1, 1)`,
      [
        r.key,
        r.unit ?? 'request',
        r.status ?? 200,
        r.atMs,
        calls,
        r.quantity ?? (r.unit === 'connection-minute' ? 1 : calls),
      ],
    );
  }
}

const zero = (date: string) => ({ date, requests: 0, connection_minutes: 0, errors: 0 });

t.test('daily usage of one key', async (t) => {
  const db = await Db.open(':memory:');
  t.teardown(() => db.close());
  await seed(db, [
    // the first instant of the range counts, the last instant before it does not
    { key: 'k1', atMs: at('2024-05-06T00:00:00.000Z'), calls: 3 },
    { key: 'k1', atMs: at('2024-05-05T23:59:59.000Z'), calls: 50 },
    // errors are request calls answered 4xx/5xx; they are requests too
    { key: 'k1', atMs: at('2024-05-08T12:00:00Z'), status: 404, calls: 2 },
    { key: 'k1', atMs: at('2024-05-08T12:00:01Z'), status: 429 },
    { key: 'k1', atMs: at('2024-05-08T12:00:02Z'), status: 500 },
    // one second's bucket split across two flushes is two rows, summed
    { key: 'k1', atMs: at('2024-05-08T13:00:00Z'), calls: 2 },
    { key: 'k1', atMs: at('2024-05-08T13:00:00Z'), calls: 2 },
    // connection-minutes: quantity, not calls; never errors
    { key: 'k1', unit: 'connection-minute', atMs: at('2024-05-08T14:00:00Z'), quantity: 7 },
    { key: 'k1', unit: 'connection-minute', atMs: at('2024-05-09T23:59:59Z'), quantity: 2, status: 500 },
    // today, also after "now" within the same day; tomorrow is outside
    { key: 'k1', atMs: at('2024-05-10T23:59:59.000Z') },
    { key: 'k1', atMs: at('2024-05-11T00:00:00.000Z'), calls: 40 },
    // other keys, anonymous calls and the key's test-table rows never show
    { key: 'k2', atMs: at('2024-05-07T10:00:00Z'), calls: 9, status: 400 },
    { key: 'k2', unit: 'connection-minute', atMs: at('2024-05-07T10:00:00Z'), quantity: 9 },
    { key: null, atMs: at('2024-05-07T10:00:00Z'), calls: 9, status: 401 },
    { key: 'k1', atMs: at('2024-05-07T10:00:00Z'), calls: 9, table: 'api_usage_test' },
  ]);

  const report = await dailyUsage(db, { keyId: 'k1', test: false, days: 5, nowMs: NOW });
  t.equal(report.from, '2024-05-06');
  t.equal(report.to, '2024-05-10');
  t.same(report.days, [
    { date: '2024-05-06', requests: 3, connection_minutes: 0, errors: 0 },
    zero('2024-05-07'),
    { date: '2024-05-08', requests: 8, connection_minutes: 7, errors: 4 },
    { date: '2024-05-09', requests: 0, connection_minutes: 2, errors: 0 },
    { date: '2024-05-10', requests: 1, connection_minutes: 0, errors: 0 },
  ]);
  t.same(report.totals, { requests: 12, connection_minutes: 9, errors: 4 });

  const other = await dailyUsage(db, { keyId: 'k2', test: false, days: 5, nowMs: NOW });
  t.same(other.totals, { requests: 9, connection_minutes: 9, errors: 9 }, 'the other key sees only its own');
  const nobody = await dailyUsage(db, { keyId: 'k3', test: false, days: 3, nowMs: NOW });
  t.same(nobody.days, [zero('2024-05-08'), zero('2024-05-09'), zero('2024-05-10')], 'a key without usage gets zeros');
});

t.test('test keys read the test table only', async (t) => {
  const db = await Db.open(':memory:');
  t.teardown(() => db.close());
  await seed(db, [
    { key: 'k1', atMs: at('2024-05-10T01:00:00Z'), calls: 4, table: 'api_usage_test' },
    { key: 'k1', atMs: at('2024-05-10T01:00:00Z'), status: 400, table: 'api_usage_test' },
    { key: 'k1', unit: 'connection-minute', atMs: at('2024-05-09T01:00:00Z'), quantity: 3, table: 'api_usage_test' },
    { key: 'k1', atMs: at('2024-05-10T01:00:00Z'), calls: 100 },
  ]);
  const test = await dailyUsage(db, { keyId: 'k1', test: true, days: 2, nowMs: NOW });
  t.same(test.days, [
    { date: '2024-05-09', requests: 0, connection_minutes: 3, errors: 0 },
    { date: '2024-05-10', requests: 5, connection_minutes: 0, errors: 1 },
  ]);
  const live = await dailyUsage(db, { keyId: 'k1', test: false, days: 2, nowMs: NOW });
  t.same(live.totals, { requests: 100, connection_minutes: 0, errors: 0 });
});

t.test('days are UTC whatever the session time zone', async (t) => {
  const db = await Db.open(':memory:');
  t.teardown(() => db.close());
  await seed(db, [
    { key: 'k1', atMs: at('2024-05-09T23:30:00Z') },
    { key: 'k1', atMs: at('2024-05-10T00:30:00Z'), calls: 2 },
  ]);
  const expected = [
    { date: '2024-05-09', requests: 1, connection_minutes: 0, errors: 0 },
    { date: '2024-05-10', requests: 2, connection_minutes: 0, errors: 0 },
  ];
  for (const zone of ['UTC', 'Pacific/Kiritimati', 'America/Los_Angeles']) {
    await db.run(`SET TimeZone = '${zone}'`);
    const report = await dailyUsage(db, { keyId: 'k1', test: false, days: 2, nowMs: NOW });
    t.same(report.days, expected, zone);
  }
});

t.test('range length and bounds', async (t) => {
  const db = await Db.open(':memory:');
  t.teardown(() => db.close());
  const one = await dailyUsage(db, { keyId: 'k1', test: false, days: 1, nowMs: NOW });
  t.same(one, {
    from: '2024-05-10',
    to: '2024-05-10',
    days: [zero('2024-05-10')],
    totals: { requests: 0, connection_minutes: 0, errors: 0 },
  });
  const longest = await dailyUsage(db, { keyId: 'k1', test: false, days: USAGE_DAYS_MAX, nowMs: NOW });
  t.equal(longest.days.length, 90);
  t.equal(longest.from, '2024-02-11', 'leap day included');
  t.equal(new Set(longest.days.map((d) => d.date)).size, 90, 'no day twice');
  // midnight belongs to the day it starts
  const midnight = await dailyUsage(db, { keyId: 'k1', test: false, days: 1, nowMs: at('2024-05-10T00:00:00Z') });
  t.equal(midnight.to, '2024-05-10');
  for (const days of [0, 91, 1.5, Number.NaN, -3]) {
    await t.rejects(dailyUsage(db, { keyId: 'k1', test: false, days, nowMs: NOW }), RangeError, `days ${days}`);
  }
  await t.rejects(dailyUsage(db, { keyId: 'k1', test: false, days: 3, nowMs: Number.NaN }), RangeError);
});
