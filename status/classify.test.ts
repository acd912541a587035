import t from 'tap';
import { parseConfig } from '../core/config.ts';
import type { FeedHealth } from '../core/ports.ts';
import { classifyAlertIngestion, classifyApi, classifyFeed, classifySchedule, summarize } from './classify.ts';

const rules = parseConfig({}).status;
const NOW = 1_714_580_000_000;

function health(over: Partial<FeedHealth> = {}): FeedHealth {
  return {
    feed_id: 'bus',
    kind: 'gtfs-rt',
    freshness: 'fresh',
    header_timestamp_ms: NOW - 8_000,
    last_poll_ms: NOW - 4_000,
    last_success_ms: NOW - 4_000,
    last_status: 'ok',
    last_error: null,
    entities: 40,
    polls: 10,
    failures: 0,
    rejected: 0,
    ...over,
  };
}
const feed = (over: Partial<FeedHealth> = {}, failures = 0, nowMs = NOW, sinceMs = NOW - 3_600_000) =>
  classifyFeed({ health: health(over), interval_s: 10, consecutive_failures: failures, nowMs, sinceMs }, rules);

t.test('a feed polling normally is operational', async (t) => {
  t.same(feed(), { state: 'operational', reason: 'polling normally' });
  t.equal(feed({ last_status: 'unchanged' }).state, 'operational', '304 Not Modified is a success');
});

t.test('one failed poll degrades, two in a row are down', async (t) => {
  const once = feed({ last_status: 'http_error', last_error: 'HTTP 500', last_poll_ms: NOW - 1_000 }, 1);
  t.same(once, { state: 'degraded', reason: 'last poll failed: HTTP 500' });
  const twice = feed({ last_status: 'http_error', last_error: 'HTTP 500' }, 2);
  t.equal(twice.state, 'down');
  t.match(twice.reason, /2 polls failed in a row: HTTP 500/);
});

t.test('a poll that hangs until its timeout is down after two intervals, before it fails', async (t) => {
  // the last poll succeeded 10 s ago; the one running since then has not returned
  const success = NOW - 10_000;
  t.equal(feed({ last_success_ms: success, last_poll_ms: success }, 0, success + 19_000).state, 'operational');
  const late = feed({ last_success_ms: success, last_poll_ms: success }, 0, success + 20_001);
  t.equal(late.state, 'down');
  t.match(late.reason, /no successful poll for 20 s/);
  const withError = feed(
    { last_success_ms: success, last_status: 'timeout', last_error: 'timed out after 9 s' },
    1,
    success + 25_000,
  );
  t.match(withError.reason, /last error: timed out after 9 s/);
});

t.test('start-up: unknown until the first poll, down when none comes in two intervals', async (t) => {
  const fresh = {
    last_poll_ms: null,
    last_success_ms: null,
    last_status: null,
    polls: 0,
    freshness: 'expired' as const,
    header_timestamp_ms: null,
  };
  t.same(feed(fresh, 0, NOW, NOW - 5_000), { state: 'unknown', reason: 'waiting for the first poll' });
  const never = feed(fresh, 0, NOW, NOW - 21_000);
  t.same(never, { state: 'down', reason: 'no successful poll since start' });
  t.equal(
    feed(
      { ...fresh, polls: 1, last_status: 'network_error', last_error: 'ECONNREFUSED', last_poll_ms: NOW },
      1,
      NOW,
      NOW - 5_000,
    ).state,
    'degraded',
    'a first failure is degraded, not unknown',
  );
});

t.test('freshness: stale data degrades, expired data is down', async (t) => {
  const stale = feed({ freshness: 'stale', header_timestamp_ms: NOW - 120_000 });
  t.same(stale, { state: 'degraded', reason: 'data is stale: header timestamp 120 s old' });
  const expired = feed({ freshness: 'expired', header_timestamp_ms: null });
  t.same(expired, { state: 'down', reason: 'data expired: no header timestamp' });
});

t.test('rules come from config', async (t) => {
  const strict = parseConfig({ status: { down_after_failures: 1, down_after_intervals: 1 } }).status;
  const h = health({ last_status: 'timeout', last_error: 'x' });
  t.equal(
    classifyFeed({ health: h, interval_s: 10, consecutive_failures: 1, nowMs: NOW, sinceMs: 0 }, strict).state,
    'down',
  );
  t.equal(
    classifyFeed({ health: health(), interval_s: 2, consecutive_failures: 0, nowMs: NOW, sinceMs: 0 }, strict).state,
    'down',
    'last success 4 s ago is more than one 2 s interval',
  );
});

t.test('alert ingestion follows its sources', async (t) => {
  t.equal(classifyAlertIngestion([]).reason, 'no alert sources configured');
  t.same(
    classifyAlertIngestion([
      { feed_id: 'a', state: 'operational' },
      { feed_id: 'b', state: 'operational' },
    ]),
    { state: 'operational', reason: '2 sources polling normally' },
  );
  t.same(
    classifyAlertIngestion([
      { feed_id: 'a', state: 'down' },
      { feed_id: 'b', state: 'operational' },
    ]),
    { state: 'degraded', reason: 'alert sources with problems: a' },
  );
  t.same(
    classifyAlertIngestion([
      { feed_id: 'a', state: 'down' },
      { feed_id: 'b', state: 'down' },
    ]),
    { state: 'down', reason: 'every alert source is down: a, b' },
  );
  t.equal(classifyAlertIngestion([{ feed_id: 'a', state: 'unknown' }]).state, 'unknown');
});

t.test('the API is judged on its 5xx share and p99 once there are enough requests', async (t) => {
  t.equal(
    classifyApi({ requests: 5, server_errors: 5, p99_ms: 9_000 }, rules).state,
    'operational',
    'too few to judge',
  );
  t.same(classifyApi({ requests: 100, server_errors: 1, p99_ms: 12 }, rules), {
    state: 'operational',
    reason: 'answering normally',
  });
  t.same(classifyApi({ requests: 100, server_errors: 7, p99_ms: 12 }, rules), {
    state: 'degraded',
    reason: '7.0 % of requests failed with 5xx',
  });
  t.same(classifyApi({ requests: 100, server_errors: 60, p99_ms: 12 }, rules), {
    state: 'down',
    reason: '60 % of requests failed with 5xx',
  });
  t.same(classifyApi({ requests: 100, server_errors: 0, p99_ms: 2_500 }, rules), {
    state: 'degraded',
    reason: 'p99 latency 2500 ms',
  });
});

t.test('the summary is the worst state', async (t) => {
  t.same(summarize(['operational', 'operational']), { state: 'operational', reason: 'All systems operational' });
  t.same(summarize(['operational', 'unknown']).state, 'unknown');
  t.same(summarize(['unknown', 'degraded', 'operational']), { state: 'degraded', reason: '1 component is degraded' });
  t.same(summarize(['down', 'degraded', 'down']), { state: 'down', reason: '2 components are down' });
});

t.test(
  'a schedule: unknown before its first import, down without a version, degraded while its refresh fails or its ' +
    'calendar has ended',
  async (t) => {
    const version = {
      version_id: 3,
      schedule_id: 'ct',
      source: 'ct.zip',
      sha256: 'ab',
      imported_at: '2024-05-01T03:41:00.000Z',
      feed_version: '2024-05',
      feed_start_date: null,
      feed_end_date: null,
      service_start_date: '2024-05-01',
      service_end_date: '2024-08-31',
      routes: 1,
      trips: 2,
      stops: 3,
      stop_times: 4,
      import_ms: 5,
    };
    const check = (outcome: 'imported' | 'failed', failures = 0) => ({
      schedule_id: 'ct',
      source: 'ct.zip',
      etag: null,
      last_modified: null,
      sha256: 'ab',
      checked_at: '2024-05-02T03:41:00.000Z',
      outcome,
      last_error: outcome === 'failed' ? 'not a ZIP archive' : null,
      last_error_at: null,
      consecutive_failures: failures,
    });
    const base = { schedule_id: 'ct', source: 'ct.zip', refresh_cron: '41 3 * * *' };
    t.match(classifySchedule({ ...base, version: null, last_check: null }, '2024-06-01'), { state: 'unknown' });
    t.match(classifySchedule({ ...base, version: null, last_check: check('failed', 1) }, '2024-06-01'), {
      state: 'down',
      reason: /not a ZIP archive/,
    });
    t.match(classifySchedule({ ...base, version, last_check: check('imported') }, '2024-06-01'), {
      state: 'operational',
      reason: 'version 3 (2024-05) in use until 2024-08-31',
    });
    t.match(classifySchedule({ ...base, version, last_check: check('failed', 2) }, '2024-06-01'), {
      state: 'degraded',
      reason: '2 refreshes failed: not a ZIP archive; version 3 (2024-05) stays in place',
    });
    t.match(classifySchedule({ ...base, version, last_check: check('imported') }, '2024-09-01'), {
      state: 'degraded',
      reason: /calendar ended on 2024-08-31/,
    });
  },
);
