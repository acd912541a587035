import t from 'tap';
import { Db } from '../store/db.ts';
import { DbMeter, type UsageRecord } from './meter.ts';
import { logInto } from '../test/support/logs.ts';

const usage = (over: Partial<UsageRecord> = {}): UsageRecord => ({
  keyId: 'key_1',
  plan: 'regular',
  test: false,
  unit: 'request',
  quantity: 1,
  method: 'GET',
  endpoint: '/api/v1/alerts',
  status: 200,
  latencyMs: 1.5,
  atMs: 1_714_580_000_123,
  requestId: 'req_1',
  ...over,
});

t.test('calls are summed per second and appended, live and test apart', async (t) => {
  const db = await Db.open(':memory:');
  t.teardown(() => db.close());
  const meter = new DbMeter(db, { flushMs: 60_000, batchRows: 1_000 });
  meter.record(usage());
  meter.record(usage({ latencyMs: 4, atMs: 1_714_580_000_900 }));
  meter.record(usage({ atMs: 1_714_580_001_000 }));
  meter.record(usage({ test: true, keyId: 'key_2', status: 429 }));
  meter.record(usage({ keyId: null, plan: null, status: 401 }));
  meter.record(usage({ unit: 'connection-minute', quantity: 3, endpoint: '/api/v1/events/stream' }));
  t.equal(meter.pending, 5, 'two calls in the same second share a bucket');
  await meter.flush();
  t.equal(meter.pending, 0);
  t.equal(meter.persisted, 6);
  const live = await db.json<Record<string, unknown>>(
    'SELECT key_id, plan, unit, status, bucket_at, calls, quantity, latency_ms_total, latency_ms_max FROM api_usage ' +
      'ORDER BY unit, status, bucket_at',
  );
  t.same(
    live.map((r) => [r.key_id, r.unit, r.status, r.calls, r.quantity, r.latency_ms_total, r.latency_ms_max]),
    [
      ['key_1', 'connection-minute', 200, 1, 3, 1.5, 1.5],
      ['key_1', 'request', 200, 2, 2, 5.5, 4],
      ['key_1', 'request', 200, 1, 1, 1.5, 1.5],
      [null, 'request', 401, 1, 1, 1.5, 1.5],
    ],
  );
  t.match(String(live[1]!.bucket_at), /^2024-05-01 16:13:20\+00/);
  const test = await db.all<{ key_id: string; status: number; calls: number }>(
    'SELECT key_id, status, calls FROM api_usage_test',
  );
  t.same(test, [{ key_id: 'key_2', status: 429, calls: 1 }]);
});

t.test('a full batch flushes early; the timer flushes the rest; close flushes and stops', async (t) => {
  const db = await Db.open(':memory:');
  t.teardown(() => db.close());
  const meter = new DbMeter(db, { flushMs: 20, batchRows: 5 }).start();
  for (let i = 0; i < 12; i++) meter.record(usage({ atMs: i * 1000 }));
  await meter.flush();
  t.equal(meter.persisted, 12);
  meter.record(usage());
  const deadline = Date.now() + 5_000;
  while (meter.persisted < 13 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  t.equal(meter.persisted, 13, 'the timer flushed');
  meter.record(usage());
  await meter.close();
  t.equal(meter.persisted, 14);
  meter.record(usage());
  t.equal(meter.dropped, 1, 'records after close are counted as dropped');
  const rows = await db.all<{ n: bigint }>('SELECT sum(calls) AS n FROM api_usage');
  t.equal(Number(rows[0]!.n), 14);
});

t.test('a failing store keeps buckets (bounded, merged) and reports what was lost', async (t) => {
  const db = await Db.open(':memory:');
  const logged: string[] = [];
  const meter = new DbMeter(db, {
    flushMs: 60_000,
    batchRows: 1_000,
    maxBufferedRows: 5,
    log: logInto((m, line) => logged.push(line.table ? `${m} (${String(line.table)})` : m)),
  });
  await db.close();
  for (let i = 0; i < 8; i++) meter.record(usage({ test: i % 2 === 0, atMs: i * 1000 }));
  const flushing = meter.flush();
  meter.record(usage({ test: false, atMs: 7000 }));
  await flushing;
  t.equal(meter.pending, 5, 'kept for the next flush, up to the bound');
  t.equal(meter.dropped, 3);
  t.match(logged, [/flush failed.*\(api_usage\)$/, /flush failed.*\(api_usage_test\)$/]);
  await meter.close();
  t.equal(meter.dropped, 9, 'every call is accounted for: persisted or dropped');
  t.match(logged.at(-1), /could not be persisted at shutdown/);
});
