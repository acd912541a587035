import t from 'tap';
import {
  JITTER,
  MAX_RETRY_AFTER_MS,
  RETRY_DELAYS_MS,
  jittered,
  nextStep,
  parseRetryAfter,
  type AttemptResult,
} from './retry-policy.ts';
import { ManualClock } from '../test/support/clock.ts';

const failure = (extra: Partial<AttemptResult> = {}): AttemptResult => ({
  outcome: 'http_error',
  status_code: 500,
  latency_ms: 3,
  error: 'HTTP 500',
  retry_after_ms: null,
  ...extra,
});
const mid = () => 0.5;

t.test('the schedule is immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h', async (t) => {
  const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;
  t.equal(MAX_ATTEMPTS, 8);
  t.same(RETRY_DELAYS_MS, [5e3, 3e5, 18e5, 72e5, 18e6, 36e6, 36e6]);
  for (let n = 1; n < MAX_ATTEMPTS; n++) {
    const step = nextStep(failure(), n, 1_000, mid);
    t.equal(step.state, 'retrying');
    t.equal(step.next_attempt_ms, 1_000 + RETRY_DELAYS_MS[n - 1]!, `after attempt ${n}`);
    t.ok(step.failed);
  }
  const last = nextStep(failure(), MAX_ATTEMPTS, 1_000, mid);
  t.same(last, { state: 'failed', next_attempt_ms: null, disable_endpoint: false, failed: true });
});

t.test('jitter stays within its share either way', async (t) => {
  t.equal(
    jittered(10_000, () => 0),
    10_000 * (1 - JITTER),
  );
  t.equal(
    jittered(10_000, () => 0.999999),
    Math.round(10_000 * (1 + JITTER * 0.999998)),
  );
  const low = nextStep(failure(), 1, 0, () => 0).next_attempt_ms!;
  const high = nextStep(failure(), 1, 0, () => 0.99).next_attempt_ms!;
  t.ok(low < high && low >= 4_000 && high <= 6_000);
});

t.test('outcomes other than plain failures', async (t) => {
  t.same(nextStep({ ...failure(), outcome: 'succeeded', status_code: 200, error: null }, 3, 5, mid), {
    state: 'succeeded',
    next_attempt_ms: null,
    disable_endpoint: false,
    failed: false,
  });
  t.same(nextStep({ ...failure(), outcome: 'gone', status_code: 410 }, 1, 5, mid), {
    state: 'failed',
    next_attempt_ms: null,
    disable_endpoint: true,
    failed: true,
  });
  t.same(nextStep({ ...failure(), outcome: 'interrupted' }, 0, 5, mid), {
    state: 'pending',
    next_attempt_ms: 5,
    disable_endpoint: false,
    failed: false,
  });
  t.equal(nextStep({ ...failure(), outcome: 'interrupted' }, 2, 5, mid).state, 'retrying');
  // Retry-After longer than the schedule wins; shorter does not shorten it; absurd values are capped
  t.equal(nextStep(failure({ status_code: 429, retry_after_ms: 120_000 }), 1, 0, mid).next_attempt_ms, 120_000);
  t.equal(nextStep(failure({ status_code: 429, retry_after_ms: 1_000 }), 1, 0, mid).next_attempt_ms, 5_000);
  t.equal(nextStep(failure({ status_code: 503, retry_after_ms: 9e9 }), 1, 0, mid).next_attempt_ms, MAX_RETRY_AFTER_MS);
});

t.test('Retry-After as seconds or an HTTP date', async (t) => {
  const now = Date.parse('2026-03-01T12:00:00Z');
  t.equal(parseRetryAfter('120', now), 120_000);
  t.equal(parseRetryAfter(' 0 ', now), 0);
  t.equal(parseRetryAfter('Sun, 01 Mar 2026 12:10:00 GMT', now), 600_000);
  t.equal(parseRetryAfter('Sun, 01 Mar 2026 11:00:00 GMT', now), 0);
  t.equal(parseRetryAfter('soon', now), null);
  t.equal(parseRetryAfter(undefined, now), null);
  t.equal(parseRetryAfter('', now), null);
});

t.test('the manual clock fires timers in due order as it advances', async (t) => {
  const clock = new ManualClock(1_000);
  const fired: string[] = [];
  clock.setTimeout(() => fired.push(`b@${clock.now()}`), 200);
  clock.setTimeout(() => fired.push(`a@${clock.now()}`), 100);
  const cancelled = clock.setTimeout(() => fired.push('never'), 50);
  clock.clearTimeout(cancelled);
  clock.setTimeout(() => fired.push('later'), 10_000);
  clock.advance(150);
  t.same(fired, ['a@1100']);
  clock.advance(100);
  t.same(fired, ['a@1100', 'b@1200']);
  t.equal(clock.now(), 1_250);
  t.equal(clock.pendingTimers, 1);
});
