import t from 'tap';
import type { FeedHealth } from '../core/ports.ts';
import { FeedHistory, MINUTE_MS } from './feed-history.ts';

const T0 = 1_714_579_200_000; // a whole minute

/** FeedHealth after a sequence of polls, as LiveState counts them. */
class FakeFeed {
  h: FeedHealth = {
    feed_id: 'f',
    kind: 'gtfs-rt',
    freshness: 'expired',
    header_timestamp_ms: null,
    last_poll_ms: null,
    last_success_ms: null,
    last_status: null,
    last_error: null,
    entities: 0,
    polls: 0,
    failures: 0,
    rejected: 0,
  };
  ok(atMs: number, entities: number): FeedHealth {
    this.h = {
      ...this.h,
      polls: this.h.polls + 1,
      last_poll_ms: atMs,
      last_success_ms: atMs,
      last_status: 'ok',
      last_error: null,
      entities,
    };
    return this.h;
  }
  fail(atMs: number, error = 'timed out'): FeedHealth {
    this.h = {
      ...this.h,
      polls: this.h.polls + 1,
      failures: this.h.failures + 1,
      last_poll_ms: atMs,
      last_status: 'timeout',
      last_error: error,
    };
    return this.h;
  }
}

t.test('counts polls per minute and failures in a row from moving counters', async (t) => {
  const feed = new FakeFeed();
  const history = new FeedHistory();
  history.observe(feed.h, T0);
  history.observe(feed.ok(T0 + 1_000, 30), T0 + 1_000);
  history.observe(feed.h, T0 + 1_500); // nothing new
  history.observe(feed.ok(T0 + 11_000, 32), T0 + 11_000);
  history.observe(feed.fail(T0 + 61_000), T0 + 61_000);
  t.equal(history.consecutiveFailures, 1);
  history.observe(feed.fail(T0 + 71_000, 'HTTP 500'), T0 + 71_000);
  t.equal(history.consecutiveFailures, 2);
  t.equal(history.lastError, 'HTTP 500');
  t.equal(history.lastErrorMs, T0 + 71_000);
  history.observe(feed.ok(T0 + 81_000, 33), T0 + 81_000);
  t.equal(history.consecutiveFailures, 0, 'a success resets the run');
  t.equal(history.lastError, 'HTTP 500', 'the last error is kept after recovery');

  const spark = history.sparkline(T0 + 90_000);
  t.equal(spark.polls.length, 60);
  t.equal(spark.start, new Date(T0 + MINUTE_MS - 59 * MINUTE_MS).toISOString());
  t.same(spark.polls.slice(-2), [2, 3]);
  t.same(spark.failures.slice(-2), [0, 2]);
  t.same(spark.entities.slice(-2), [32, 33]);
  t.same(history.lastHour(T0 + 90_000), { polls: 5, failures: 2 });
  t.same(history.lastHour(T0 + 60 * MINUTE_MS), { polls: 3, failures: 2 }, 'minutes older than an hour drop out');
});

t.test('several polls between two looks', async (t) => {
  const feed = new FakeFeed();
  const history = new FeedHistory();
  history.observe(feed.h, T0);
  feed.fail(T0 + 1_000);
  history.observe(feed.fail(T0 + 2_000), T0 + 2_000);
  t.equal(history.consecutiveFailures, 2, 'all failed: all count');
  feed.ok(T0 + 3_000, 5);
  history.observe(feed.fail(T0 + 4_000), T0 + 4_000);
  t.equal(history.consecutiveFailures, 1, 'a success in between: only the last failure is certain');
});

t.test('the first look is a baseline: earlier polls come from the poll log', async (t) => {
  const feed = new FakeFeed();
  feed.ok(T0 - 5_000, 10);
  const history = new FeedHistory();
  history.observe(feed.fail(T0, 'ECONNREFUSED'), T0);
  t.same(history.lastHour(T0), { polls: 0, failures: 0 });
  t.equal(history.consecutiveFailures, 1);
  t.equal(history.lastError, 'ECONNREFUSED');
  history.seed(
    [
      { minuteMs: T0 - 2 * MINUTE_MS, polls: 6, failures: 1, entities: 12 },
      { minuteMs: T0 - MINUTE_MS, polls: 6, failures: 0, entities: 14 },
    ],
    { error: 'older error', atMs: T0 - 100_000 },
  );
  t.equal(history.lastError, 'ECONNREFUSED', 'a seeded error older than the one seen is ignored');
  history.observe(feed.ok(T0 + 5_000, 15), T0 + 5_000);
  t.same(history.lastHour(T0 + 5_000), { polls: 13, failures: 1 });
  t.same(history.sparkline(T0 + 5_000).entities.slice(-3), [12, 14, 15]);

  const restarted = new FeedHistory();
  restarted.seed([], { error: 'HTTP 503', atMs: T0 - 1_000 });
  t.equal(restarted.lastError, 'HTTP 503', 'the last error survives a restart through the poll log');
});

t.test('a pipeline whose counters go back is re-baselined', async (t) => {
  const feed = new FakeFeed();
  const history = new FeedHistory();
  history.observe(feed.h, T0);
  history.observe(feed.ok(T0 + 1_000, 3), T0 + 1_000);
  const other = new FakeFeed();
  history.observe(other.ok(T0 + 2_000, 4), T0 + 2_000);
  history.observe(other.ok(T0 + 3_000, 4), T0 + 3_000);
  t.same(history.lastHour(T0 + 3_000), { polls: 2, failures: 0 });
});
