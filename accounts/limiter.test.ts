import t from 'tap';
import { SlidingWindowLimiter, type RateDecision } from './limiter.ts';
import { apiRun, pushRequestHeaders } from '../http/headers.ts';
import { WINDOW_MS } from './plans.ts';

/** The window's headers an API response carries (its run's policy, then its own state), by name. */
function windowHeaders(decision: RateDecision, nowMs: number): Record<string, string> {
  const headers = pushRequestHeaders(apiRun(null, decision.limit).start(), 'req_t', decision, nowMs);
  return Object.fromEntries(headers.filter(([name]) => /RateLimit|Retry-After/.test(name)));
}

t.test('exact sliding window per key', async (t) => {
  const limiter = new SlidingWindowLimiter();
  const start = 1_000_000;
  for (let i = 0; i < 20; i++) {
    const d = limiter.take('k', 'free', start + i * 1000);
    t.ok(d.allowed);
    t.equal(d.remaining, 19 - i);
  }
  const refused = limiter.take('k', 'free', start + 30_000);
  t.notOk(refused.allowed);
  t.equal(refused.remaining, 0);
  t.equal(refused.retryAfterMs, WINDOW_MS - 30_000, 'until the first request leaves the window');
  t.equal(refused.takenAtMs, null);
  t.notOk(limiter.take('k', 'free', start + WINDOW_MS - 1).allowed, 'still inside the window');
  const freed = limiter.take('k', 'free', start + WINDOW_MS);
  t.ok(freed.allowed, 'the oldest request has left the window');
  t.equal(freed.remaining, 0);
  t.ok(limiter.take('other', 'free', start).allowed, 'keys are independent');
});

t.test('peek does not count; refund gives the exact request back', async (t) => {
  const limiter = new SlidingWindowLimiter();
  const a = limiter.take('k', 'regular', 1_000);
  limiter.take('k', 'regular', 2_000);
  t.equal(limiter.peek('k', 'regular', 3_000).remaining, 598);
  t.equal(limiter.peek('k', 'regular', 3_000).remaining, 598);
  limiter.refund('k', a);
  const after = limiter.peek('k', 'regular', 3_000);
  t.equal(after.remaining, 599);
  t.equal(after.resetMs, 2_000 + WINDOW_MS - 3_000, 'the refunded (older) request is the one removed');
  limiter.refund('k', { ...a, takenAtMs: null });
  limiter.refund('missing', a);
  t.equal(limiter.peek('k', 'regular', 3_000).remaining, 599);
});

t.test('a clock stepping back keeps the window ordered', async (t) => {
  const limiter = new SlidingWindowLimiter();
  limiter.take('k', 'free', 10_000);
  limiter.take('k', 'free', 5_000);
  t.equal(limiter.peek('k', 'free', 10_000 + WINDOW_MS).remaining, 20, 'both expire together');
});

t.test('a plan change starts a fresh window; idle keys are forgotten', async (t) => {
  const limiter = new SlidingWindowLimiter();
  for (let i = 0; i < 20; i++) limiter.take('k', 'free', 1);
  t.ok(limiter.take('k', 'max', 2).allowed);
  t.equal(limiter.peek('k', 'max', 2).limit, 6000);
  for (let i = 0; i < 10_000; i++) limiter.take(`key${i % 50}`, 'max', 10);
  t.ok(limiter.size >= 50);
  limiter.take('late', 'max', 10 + WINDOW_MS + 1);
  for (let i = 0; i < 10_000; i++) limiter.take('late', 'max', 10 + WINDOW_MS + 2);
  t.ok(limiter.size <= 2, 'keys with an empty window were swept');
});

t.test('headers', async (t) => {
  const limiter = new SlidingWindowLimiter();
  const now = 1_700_000_000_000;
  const ok = windowHeaders(limiter.take('k', 'regular', now), now);
  t.same(ok, {
    'X-RateLimit-Policy': '600;w=300',
    'RateLimit-Policy': '"5m";q=600;w=300',
    RateLimit: '"5m";r=599;t=300',
    'X-RateLimit-Limit': '600',
    'X-RateLimit-Remaining': '599',
    'X-RateLimit-Reset': String((now + WINDOW_MS) / 1000),
  });
  for (let i = 0; i < 599; i++) limiter.take('k', 'regular', now + 1_500);
  const refused = windowHeaders(limiter.take('k', 'regular', now + 1_500), now + 1_500);
  t.equal(refused['Retry-After'], '299');
  t.equal(refused.RateLimit, '"5m";r=0;t=299');
  t.equal(windowHeaders(limiter.peek('new', 'free', now), now).RateLimit, '"5m";r=20;t=0');
});
