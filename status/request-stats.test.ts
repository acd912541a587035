import t from 'tap';
import type { UsageRecord } from '../accounts/meter.ts';
import { RequestStats } from './request-stats.ts';

const T0 = 1_714_579_200_000; // a whole minute

function usage(atMs: number, latencyMs: number, status = 200, unit: UsageRecord['unit'] = 'request'): UsageRecord {
  return {
    keyId: 'k',
    plan: 'regular',
    test: false,
    unit,
    quantity: 1,
    method: 'GET',
    endpoint: '/api/v1/alerts',
    status,
    latencyMs,
    atMs,
    requestId: 'r',
  };
}

t.test('percentiles, rates and error shares over 5 and 60 minutes', async (t) => {
  const stats = new RequestStats(T0 - 3_600_000);
  // 99 fast requests and one slow one, 50 minutes ago
  for (let i = 0; i < 99; i++) stats.record(usage(T0 - 50 * 60_000 + i, 2));
  stats.record(usage(T0 - 50 * 60_000 + 100, 800, 503));
  // the last 5 minutes: 1..100 ms, 4 client errors, 1 server error
  for (let ms = 1; ms <= 100; ms++) stats.record(usage(T0 + 30_000 + ms, ms, ms <= 4 ? 404 : ms === 5 ? 500 : 200));
  const now = T0 + 59_000;

  const w5 = stats.window(5, now);
  t.equal(w5.requests, 100);
  t.equal(w5.server_errors, 1);
  t.equal(w5.client_errors, 4);
  t.equal(w5.error_rate, 0.01);
  t.ok(Math.abs(w5.p50_ms! - 50) <= 1.5, `p50 ≈ 50 ms (${w5.p50_ms})`);
  t.ok(Math.abs(w5.p99_ms! - 99) <= 2.5, `p99 ≈ 99 ms (${w5.p99_ms})`);
  t.equal(w5.minutes, 4.98);
  t.equal(w5.requests_per_minute, 20.07, '100 requests over 4 min 59 s');

  const w60 = stats.window(60, now);
  t.equal(w60.requests, 200);
  t.equal(w60.server_errors, 2);
  t.ok(w60.p99_ms! >= 98 && w60.p99_ms! <= 101, `p99 over the hour (${w60.p99_ms})`);
  t.ok(Math.abs(w60.p50_ms! - 2) <= 0.1, `p50 over the hour is a fast request (${w60.p50_ms})`);
});

t.test('an empty window, the start of the service, and what is not counted', async (t) => {
  const stats = new RequestStats(T0);
  t.same(stats.window(5, T0 + 10_000), {
    minutes: 0.17,
    requests: 0,
    requests_per_minute: 0,
    server_errors: 0,
    error_rate: null,
    client_errors: 0,
    p50_ms: null,
    p99_ms: null,
  });
  stats.record(usage(T0 + 1_000, 0, 200, 'connection-minute'));
  t.equal(stats.window(5, T0 + 10_000).requests, 0, 'stream openings are not requests');
  stats.record(usage(T0 + 1_000, 0));
  stats.record(usage(T0 + 2_000, 0));
  const w = stats.window(60, T0 + 30_000);
  t.equal(w.minutes, 0.5, 'a new server does not claim a full hour');
  t.equal(w.requests_per_minute, 4);
  t.equal(w.p50_ms, 0, 'millisecond clocks report 0 ms, shown as such');
  t.equal(stats.version, 2);
});

t.test('the ring forgets minutes older than an hour and ignores records that late', async (t) => {
  const stats = new RequestStats(T0 - 7_200_000);
  stats.record(usage(T0 - 90 * 60_000, 5));
  t.equal(stats.window(60, T0).requests, 0, 'outside the window');
  stats.record(usage(T0 - 29 * 60_000, 5)); // same ring slot as 90 minutes ago (61 slots)
  stats.record(usage(T0 - 90 * 60_000, 5)); // arrives late for a slot reused since
  t.equal(stats.window(60, T0).requests, 1);
  stats.record(usage(T0, Number.NaN));
  stats.record(usage(T0, 10_000_000));
  const w = stats.window(5, T0);
  t.equal(w.requests, 2, 'odd latencies are still counted');
  t.equal(w.p99_ms, 10_000_000, 'huge values are clamped to the largest seen');
});
