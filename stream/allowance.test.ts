import t from 'tap';
import { ApiError } from '../core/errors.ts';
import { StreamAllowance } from './allowance.ts';
import { ConnectionMeter } from './connection-meter.ts';
import { logInto } from '../test/support/logs.ts';

// the plan table (accounts/plans.ts) gives these numbers; the allowance takes them as arguments
const FREE = 0;
const REGULAR = 2;
const MAX = 25;

t.test('a Free key is refused with 403 forbidden_plan', async (t) => {
  const allowance = new StreamAllowance();
  const err = t.throws(() => allowance.acquire('k_free', FREE, 'free')) as ApiError;
  t.ok(err instanceof ApiError);
  t.equal(err.code, 'forbidden_plan');
  t.equal(err.status, 403);
  t.match(err.detail, /free plan/);
  t.equal(allowance.openStreams('k_free'), 0);
});

t.test('the third stream of a Regular key is refused with 429 until one closes', async (t) => {
  const allowance = new StreamAllowance();
  const a = allowance.acquire('k_reg', REGULAR);
  allowance.acquire('k_reg', REGULAR);
  const err = t.throws(() => allowance.acquire('k_reg', REGULAR)) as ApiError;
  t.equal(err.code, 'sse_allowance_exceeded');
  t.equal(err.status, 429);
  t.same(err.extra.members, { open_streams: 2, allowed_streams: 2 });
  t.same(err.extra.headers, { 'Retry-After': '30' }, 'every 429 carries Retry-After');
  t.doesNotThrow(() => allowance.acquire('k_other', REGULAR), 'other keys are counted apart');
  a.release();
  a.release();
  t.equal(allowance.openStreams('k_reg'), 1, 'a double release frees one slot only');
  const c = allowance.acquire('k_reg', REGULAR);
  t.equal(c.keyId, 'k_reg');
  t.throws(() => allowance.acquire('k_reg', REGULAR));
});

t.test('a Max key opens 25', async (t) => {
  const allowance = new StreamAllowance();
  const leases = Array.from({ length: MAX }, () => allowance.acquire('k_max', MAX));
  t.throws(() => allowance.acquire('k_max', MAX));
  for (const lease of leases) lease.release();
  t.equal(allowance.openStreams('k_max'), 0);
});

t.test('connection-minutes: one per started minute of a stream held 2+ minutes (controlled clock)', async (t) => {
  let clock = 1_000_000;
  const records: Array<{ tag: string; minutes: number; atMs: number }> = [];
  const meter = new ConnectionMeter<string>({
    now: () => clock,
    sink: { record: (tag, minutes, atMs) => records.push({ tag, minutes, atMs }) },
  });
  const stream = meter.openStream('key-1');
  t.same(records, [{ tag: 'key-1', minutes: 1, atMs: 1_000_000 }], 'the first minute counts when it starts');
  clock += 59_999;
  meter.tick();
  t.equal(records.length, 1, 'still the first minute');
  clock += 1;
  meter.tick();
  t.same(records.at(-1), { tag: 'key-1', minutes: 1, atMs: 1_060_000 }, 'second minute started');
  clock += 65_000;
  meter.tick();
  meter.tick();
  t.equal(
    records.reduce((n, r) => n + r.minutes, 0),
    3,
    '2 min 5 s is three started minutes',
  );
  clock += 200_000;
  stream.close();
  stream.close();
  t.equal(
    records.reduce((n, r) => n + r.minutes, 0),
    6,
    'closing reports the minutes started since the last tick (5 min 5 s → 6)',
  );
  t.equal(meter.openCount, 0);
  meter.tick();
  t.equal(
    records.reduce((n, r) => n + r.minutes, 0),
    6,
    'nothing after close',
  );
});

t.test('the meter timer and a failing sink', async (t) => {
  let clock = 0;
  const errors: unknown[] = [];
  let calls = 0;
  const meter = new ConnectionMeter<number>({
    now: () => clock,
    tickMs: 5,
    log: logInto((_m, line) => errors.push(line.err)),
    sink: {
      record: () => {
        calls++;
        throw new Error('store down');
      },
    },
  });
  meter.openStream(1);
  t.equal(errors.length, 1, 'a failing sink is logged, not thrown into the server');
  meter.start();
  clock = 60_000;
  await new Promise((resolve) => setTimeout(resolve, 30));
  t.equal(calls, 2, 'the shared timer reported the second minute once');
  meter.stop();
  t.equal(calls, 2);
});
