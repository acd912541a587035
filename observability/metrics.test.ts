import t from 'tap';
import type { DomainEvent } from '../core/events.ts';
import type { FeedHealth } from '../core/ports.ts';
import type { FeedPoll } from '../core/types.ts';
import { parsePrometheusText, sampleValue } from '../test/support/prometheus-text.ts';
import { ServiceMetrics } from './metrics.ts';
import { rawEvent } from '../test/support/events.ts';

const scrape = async (m: ServiceMetrics) => parsePrometheusText(await m.metricsText());

function poll(overrides: Partial<FeedPoll> = {}): FeedPoll {
  return {
    feed_id: 'metro-tu',
    polled_ms: 1_700_000_000_000,
    status: 'ok',
    http_status: 200,
    bytes: 100,
    duration_ms: 40,
    header_timestamp_ms: 1_700_000_000_000,
    entities: 10,
    vehicles: 0,
    trip_updates: 10,
    alerts: 0,
    stored: 9,
    rejected: { missing_trip: 1 },
    matching: null,
    error: null,
    ...overrides,
  } as FeedPoll;
}

t.test('requests: counted by route and status, latency by route, from plain counts', async (t) => {
  const m = new ServiceMetrics({ defaultMetrics: false });
  m.request('listAlerts', 200, 0.002);
  m.request('listAlerts', 200, 0.004);
  m.request('listAlerts', 401, 0.0001);
  m.request('(unmatched)', 404, 0.0001);
  const f = await scrape(m);
  t.equal(f.get('transit_http_requests_total')?.type, 'counter');
  t.equal(sampleValue(f, 'transit_http_requests_total', { route: 'listAlerts', status: '200' }), 2);
  t.equal(sampleValue(f, 'transit_http_requests_total', { route: 'listAlerts', status: '401' }), 1);
  t.equal(sampleValue(f, 'transit_http_requests_total', { route: '(unmatched)', status: '404' }), 1);
  t.equal(sampleValue(f, 'transit_http_request_duration_seconds_count', { route: 'listAlerts' }), 3);
  t.equal(sampleValue(f, 'transit_http_request_duration_seconds_bucket', { route: 'listAlerts', le: '0.0025' }), 2);
  t.equal(sampleValue(f, 'transit_http_request_duration_seconds_sum', { route: 'listAlerts' }), 0.0061);
  m.request('listAlerts', 200, 0.001);
  t.equal(
    sampleValue(await scrape(m), 'transit_http_requests_total', { route: 'listAlerts', status: '200' }),
    3,
    'a scrape does not reset them',
  );
});

t.test('polls: outcome, duration, rejections, trip matching', async (t) => {
  const m = new ServiceMetrics({ defaultMetrics: false });
  m.poll(
    poll({
      matching: {
        trips: 10,
        matched: 8,
        unmatched: 1,
        ambiguous: 1,
        previous_day: 0,
        match_rate: 0.8,
        strategies: {
          exact: { matched: 6, unmatched: 4, ambiguous: 0 },
          start: { matched: 2, unmatched: 1, ambiguous: 1 },
        },
      },
    }),
  );
  m.poll(poll({ status: 'timeout', rejected: { timeout: 1 }, duration_ms: 10_000, matching: null }));
  m.poll(poll({ stop_events: { written: 12, anomalies: { vehicle_backwards: 2, trip_vanished: 1 } } }));
  m.poll(poll({ stop_events: { written: 0, anomalies: {} } }));
  const f = await scrape(m);
  t.equal(sampleValue(f, 'transit_stop_events_total', { feed: 'metro-tu' }), 12);
  t.equal(sampleValue(f, 'transit_stop_event_anomalies_total', { feed: 'metro-tu', kind: 'vehicle_backwards' }), 2);
  t.equal(sampleValue(f, 'transit_stop_event_anomalies_total', { feed: 'metro-tu', kind: 'trip_vanished' }), 1);
  t.equal(sampleValue(f, 'transit_feed_polls_total', { feed: 'metro-tu', status: 'ok' }), 3);
  t.equal(sampleValue(f, 'transit_feed_polls_total', { feed: 'metro-tu', status: 'timeout' }), 1);
  t.equal(sampleValue(f, 'transit_feed_poll_duration_seconds_count', { feed: 'metro-tu' }), 4);
  t.equal(sampleValue(f, 'transit_feed_entities_rejected_total', { feed: 'metro-tu', reason: 'missing_trip' }), 3);
  t.equal(sampleValue(f, 'transit_feed_entities_rejected_total', { feed: 'metro-tu', reason: 'timeout' }), 1);
  t.equal(sampleValue(f, 'transit_feed_trips_total', { feed: 'metro-tu', result: 'matched' }), 8);
  t.equal(sampleValue(f, 'transit_feed_trips_total', { feed: 'metro-tu', result: 'ambiguous' }), 1);
  t.equal(
    sampleValue(f, 'transit_feed_trip_strategy_decisions_total', {
      feed: 'metro-tu',
      strategy: 'start',
      result: 'matched',
    }),
    2,
  );
  t.equal(
    sampleValue(f, 'transit_feed_trip_match_ratio', { feed: 'metro-tu' }),
    0.8,
    'a poll without lookups leaves the ratio',
  );
});

t.test('scrape-time sources: feed age, open streams, hub, outbox, queue; absent until bound', async (t) => {
  const m = new ServiceMetrics({ defaultMetrics: false });
  let f = await scrape(m);
  t.equal(sampleValue(f, 'transit_feed_age_seconds'), undefined, 'nothing bound: no feed, no sample');
  const feeds = [
    { feed_id: 'a', header_timestamp_ms: 1_000_000 - 42_000 },
    { feed_id: 'b', header_timestamp_ms: null },
  ] as FeedHealth[];
  let open = 3;
  m.bind({
    now: () => 1_000_000,
    feeds: () => feeds,
    openStreams: () => open,
    hub: () => ({ framesEncoded: 7, eventWrites: 21, closed: { client: 2, shutdown: 0 } }),
    outbox: () => ({ depth: 5, oldestPendingMs: 1_000_000 - 90_000 }),
    dbQueueDepth: () => 4,
    historyQueue: () => ({ depth: 2, lag_ms: 1_500 }),
    tripsInProgress: () => 37,
  });
  f = await scrape(m);
  t.equal(sampleValue(f, 'transit_trips_in_progress'), 37);
  t.equal(sampleValue(f, 'transit_feed_age_seconds', { feed: 'a' }), 42);
  t.notOk(
    f.get('transit_feed_age_seconds')!.samples.some((s) => s.labels.feed === 'b'),
    'no header yet: no age',
  );
  t.equal(sampleValue(f, 'transit_sse_streams_open'), 3);
  t.equal(sampleValue(f, 'transit_sse_events_encoded_total'), 7);
  t.equal(sampleValue(f, 'transit_sse_event_writes_total'), 21);
  t.equal(sampleValue(f, 'transit_sse_streams_closed_total', { reason: 'client' }), 2);
  t.equal(sampleValue(f, 'transit_webhook_outbox_depth'), 5);
  t.equal(sampleValue(f, 'transit_webhook_outbox_oldest_pending_seconds'), 90);
  t.equal(sampleValue(f, 'transit_db_queue_depth'), 4);
  t.equal(sampleValue(f, 'transit_history_queue_depth'), 2);
  t.equal(sampleValue(f, 'transit_history_queue_lag_seconds'), 1.5);
  open = 1;
  feeds.pop();
  f = await scrape(m);
  t.equal(sampleValue(f, 'transit_sse_streams_open'), 1, 'read again at every scrape');
});

t.test('events, webhook attempts, jobs, queue waits', async (t) => {
  const m = new ServiceMetrics({ defaultMetrics: false });
  const event = (type: DomainEvent['type'], data: unknown = {}): DomainEvent => rawEvent(type, { at_ms: 0, data });
  m.events([
    event('vehicle.position'),
    event('vehicle.position'),
    event('alert.created'),
    event('export.ready', { dataset: 'realtime', format: 'parquet', rows: 1200 }),
    event('export.failed', { dataset: 'alerts', format: 'ndjson.gz' }),
  ]);
  m.webhookAttempt({ result: { outcome: 'succeeded', latency_ms: 12 } });
  m.webhookAttempt({ result: { outcome: 'http_error', latency_ms: 40 } });
  m.webhookAttempt({ result: { outcome: 'succeeded', latency_ms: 9 } });
  m.snapshotWritten({ ms: 1500, bytes: 4096 });
  m.snapshotFailed();
  m.dbQueueWait(0.002);
  const f = await scrape(m);
  t.equal(sampleValue(f, 'transit_events_published_total', { type: 'vehicle.position' }), 2);
  t.equal(
    sampleValue(f, 'transit_export_files_total', { dataset: 'realtime', format: 'parquet', outcome: 'ready' }),
    1,
  );
  t.equal(
    sampleValue(f, 'transit_export_files_total', { dataset: 'alerts', format: 'ndjson.gz', outcome: 'failed' }),
    1,
  );
  t.equal(sampleValue(f, 'transit_export_rows_total', { dataset: 'realtime' }), 1200);
  t.equal(sampleValue(f, 'transit_webhook_attempts_total', { outcome: 'succeeded' }), 2);
  t.equal(sampleValue(f, 'transit_snapshot_runs_total', { outcome: 'ok' }), 1);
  t.equal(sampleValue(f, 'transit_snapshot_runs_total', { outcome: 'failed' }), 1);
  t.equal(sampleValue(f, 'transit_snapshot_bytes'), 4096);
  t.equal(sampleValue(f, 'transit_snapshot_duration_seconds_count'), 1);
  t.equal(sampleValue(f, 'transit_db_queue_wait_seconds_count'), 1);
});

t.test('one registry per instance, process metrics on it, nothing on the global default', async (t) => {
  const { register } = await import('prom-client');
  const a = new ServiceMetrics();
  const b = new ServiceMetrics();
  a.request('listAlerts', 200, 0.001);
  const fa = await scrape(a);
  const fb = await scrape(b);
  t.equal(sampleValue(fa, 'transit_http_requests_total', { route: 'listAlerts', status: '200' }), 1);
  t.equal(sampleValue(fb, 'transit_http_requests_total', { route: 'listAlerts', status: '200' }), undefined);
  t.ok(fa.has('process_cpu_user_seconds_total') && fa.has('nodejs_heap_size_used_bytes'), 'default process metrics');
  t.ok(fb.has('process_resident_memory_bytes') || process.platform !== 'linux', 'on each registry');
  t.equal((await register.getMetricsAsJSON()).length, 0, 'the global registry stays empty');
  t.match(a.contentType, /^text\/plain; version=0\.0\.4/);
});

t.test('feed rule findings: counted by feed and rule, summed over polls', async (t) => {
  const m = new ServiceMetrics({ defaultMetrics: false });
  m.poll(poll({ findings: { E022: { count: 3, example: 'tu-1' }, W009: { count: 19, example: 'tu-1' } } }));
  m.poll(poll({ findings: { E022: { count: 2, example: 'tu-7' } } }));
  m.poll(poll({ status: 'unchanged' }));
  const f = await scrape(m);
  t.equal(f.get('transit_feed_rule_findings_total')?.type, 'counter');
  t.equal(sampleValue(f, 'transit_feed_rule_findings_total', { feed: 'metro-tu', rule: 'E022' }), 5);
  t.equal(sampleValue(f, 'transit_feed_rule_findings_total', { feed: 'metro-tu', rule: 'W009' }), 19);
  t.equal(sampleValue(f, 'transit_feed_rule_findings_total', { feed: 'metro-tu', rule: 'E001' }), undefined);
});
