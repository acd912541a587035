import t from 'tap';
import { Db } from '../store/db.ts';
import { DbMeter, MemoryMeter, teeMeter, type UsageRecord } from './meter.ts';

const usage = (over: Partial<UsageRecord> = {}): UsageRecord => ({
  keyId: 'key_1', plan: 'regular', test: false, unit: 'request', quantity: 1, method: 'GET', endpoint: '/api/v1/alerts',
  status: 200, latencyMs: 1.5, atMs: 1_714_580_000_123, requestId: 'req_1', ...over,
});

t.test('rows are appended in batches, live and test apart', async (t) => {
  const db = await Db.open(':memory:');
  t.teardown(() => db.close());
  const meter = new DbMeter(db, { flushMs: 60_000, batchRows: 1_000 });
  meter.record(usage());
  meter.record(usage({ test: true, keyId: 'key_2', status: 429 }));
  meter.record(usage({ keyId: null, plan: null, status: 401 }));
  meter.record(usage({ unit: 'connection-minute', quantity: 3, endpoint: '/api/v1/events/stream' }));
  t.equal(meter.pending, 4);
  await meter.flush();
  t.equal(meter.pending, 0);
  t.equal(meter.persisted, 4);
  const live = await db.json<Record<string, unknown>>('SELECT key_id, plan, unit, quantity, status, latency_ms, called_at, request_id FROM api_usage ORDER BY unit, status');
  t.same(live.map((r) => [r.key_id, r.unit, r.quantity, r.status]), [
    ['key_1', 'connection-minute', 3, 200], ['key_1', 'request', 1, 200], [null, 'request', 1, 401],
  ]);
  t.match(String(live[1]!.called_at), /^2024-05-01 16:13:20\.123/);
  const test = await db.all<{ key_id: string; status: number }>('SELECT key_id, status FROM api_usage_test');
  t.same(test, [{ key_id: 'key_2', status: 429 }]);
});

t.test('a full batch flushes early; the timer flushes the rest; close flushes and stops', async (t) => {
  const db = await Db.open(':memory:');
  t.teardown(() => db.close());
  const meter = new DbMeter(db, { flushMs: 20, batchRows: 5 }).start();
  for (let i = 0; i < 12; i++) meter.record(usage({ requestId: `req_${i}` }));
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
  const rows = await db.all<{ n: bigint }>('SELECT count(*) AS n FROM api_usage');
  t.equal(Number(rows[0]!.n), 14);
});

t.test('a failing store keeps rows (bounded) and reports what was lost', async (t) => {
  const db = await Db.open(':memory:');
  const logged: string[] = [];
  const meter = new DbMeter(db, { flushMs: 60_000, batchRows: 1_000, maxBufferedRows: 5, log: (m) => logged.push(m) });
  await db.close();
  for (let i = 0; i < 8; i++) meter.record(usage({ test: i % 2 === 0 }));
  await meter.flush();
  t.equal(meter.pending, 5, 'kept for the next flush, up to the bound');
  t.equal(meter.dropped, 3);
  t.match(logged, [/api_usage failed/, /api_usage_test failed/]);
  await meter.close();
  t.equal(meter.dropped, 8);
  t.match(logged.at(-1), /could not be persisted at shutdown/);
});

t.test('tee and memory meters', async (t) => {
  const a = new MemoryMeter();
  const b = new MemoryMeter();
  const both = teeMeter(a, b);
  both.record(usage());
  await both.flush();
  await both.close();
  t.equal(a.records.length, 1);
  t.equal(b.records.length, 1);
});
