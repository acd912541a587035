// /metrics on the real service (demo network → simulator → pipeline → API), read by a strict
// Prometheus text parser: the request counter moves with requests by route and status, the poll
// counters with a poll, the stream gauge with an open stream; the scraper's listener is its own.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { startService } from '../app/serve.ts';
import { parseConfig } from '../core/config.ts';
import { DEMO_SCHEDULE_ID } from '../fixtures/demo-config.ts';
import { generateDemoNetwork } from '../fixtures/demo-network.ts';
import { startSimulator } from '../fixtures/simulator.ts';
import { createKey } from '../accounts/keys.ts';
import { parsePrometheusText, sampleValue, type MetricFamily } from './support/prometheus-text.ts';
import { silentLogger } from './support/logs.ts';
import { adminGet } from './support/admin-socket.ts';

t.test('GET /metrics on metrics.port follows requests, polls and streams', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'metrics-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const network = generateDemoNetwork(join(dir, 'network'));
  const sim = await startSimulator({ network, host: '127.0.0.1', port: 0, badBodyEvery: 0 });
  t.teardown(() => sim.stop());
  const config = parseConfig({
    host: '127.0.0.1',
    port: 0,
    db_path: join(dir, 'metrics.duckdb'),
    feeds: [
      { id: 'demo-vehicles', kind: 'gtfs-rt', url: sim.feeds.vehicles, schedule_id: DEMO_SCHEDULE_ID },
      { id: 'demo-trip-updates', kind: 'gtfs-rt', url: sim.feeds.tripUpdates, schedule_id: DEMO_SCHEDULE_ID },
    ],
    schedules: [{ id: DEMO_SCHEDULE_ID, source: sim.scheduleSource }],
    exports: { enabled: false, dir: join(dir, 'exports') },
    snapshot: { enabled: false, path: join(dir, 'snapshot.duckdb') },
    metrics: { port: 0 },
  });
  const service = await startService(config, { log: silentLogger, poll: false });
  t.teardown(() => service.close());
  const metricsUrl = service.metricsServer?.url;
  t.match(metricsUrl, /^http:\/\/127\.0\.0\.1:\d+\/metrics$/, 'metrics.port set: a listener of its own');
  if (!metricsUrl) return;
  t.not(new URL(metricsUrl).port, String(service.server.port), 'not the API port');

  const scrape = async (): Promise<Map<string, MetricFamily>> => {
    const res = await fetch(metricsUrl);
    t.equal(res.status, 200);
    t.match(res.headers.get('content-type'), /^text\/plain; version=0\.0\.4/);
    return parsePrometheusText(await res.text());
  };
  const requests = (f: Map<string, MetricFamily>, route: string, status: number) =>
    sampleValue(f, 'transit_http_requests_total', { route, status: String(status) }) ?? 0;

  const first = await scrape();
  for (const name of [
    'transit_http_requests_total',
    'transit_http_request_duration_seconds',
    'transit_sse_streams_open',
    'transit_events_published_total',
    'transit_webhook_attempts_total',
    'transit_feed_polls_total',
    'transit_feed_age_seconds',
    'transit_feed_entities_rejected_total',
    'transit_feed_trip_match_ratio',
    'transit_db_queue_wait_seconds',
    'transit_db_queue_depth',
    'transit_history_queue_depth',
    'transit_history_queue_lag_seconds',
    'transit_export_files_total',
    'transit_snapshot_runs_total',
    'process_cpu_user_seconds_total',
    'nodejs_eventloop_lag_p99_seconds',
  ])
    t.ok(first.get(name)?.type && first.get(name)?.help, `${name} is declared with TYPE and HELP`);
  t.ok((sampleValue(first, 'transit_db_queue_wait_seconds_count') ?? 0) > 0, 'start-up statements waited in the queue');

  // requests: the counter for the route and status, the latency histogram for the route
  const { key } = await createKey(service.runtime.db, { plan: 'max', name: 'metrics-test' });
  for (let i = 0; i < 3; i++) {
    t.equal((await fetch(`${service.url}/api/v1/alerts`, { headers: { authorization: `Bearer ${key}` } })).status, 200);
  }
  t.equal(
    (await fetch(`${service.url}/api/v1/alerts`, { headers: { authorization: 'Bearer tk_live_wrong' } })).status,
    401,
  );
  t.equal((await fetch(`${service.url}/nowhere`)).status, 404);
  const second = await scrape();
  t.equal(requests(second, 'listAlerts', 200) - requests(first, 'listAlerts', 200), 3, 'three 200s on listAlerts');
  t.equal(requests(second, 'listAlerts', 401) - requests(first, 'listAlerts', 401), 1, 'one 401 on listAlerts');
  t.equal(
    requests(second, '(unmatched)', 404) - requests(first, '(unmatched)', 404),
    1,
    'unmatched paths under one label',
  );
  t.equal(sampleValue(second, 'transit_http_request_duration_seconds_count', { route: 'listAlerts' }), 4);
  t.notOk(
    second.get('transit_http_requests_total')!.samples.some((s) => s.labels.route?.startsWith('/')),
    'route ids, never raw paths',
  );

  // a poll of each feed: polls by outcome, the feed's age, trip matching against the schedule
  const before = sampleValue(second, 'transit_feed_polls_total', { feed: 'demo-trip-updates', status: 'ok' }) ?? 0;
  await service.runtime.pipeline.pollOnce('demo-vehicles');
  const poll = await service.runtime.pipeline.pollOnce('demo-trip-updates');
  t.equal(poll.status, 'ok');
  const third = await scrape();
  t.equal(
    sampleValue(third, 'transit_feed_polls_total', { feed: 'demo-trip-updates', status: 'ok' }),
    before + 1,
    'the poll is counted',
  );
  t.equal(sampleValue(third, 'transit_feed_polls_total', { feed: 'demo-vehicles', status: 'ok' }), 1);
  const age = sampleValue(third, 'transit_feed_age_seconds', { feed: 'demo-trip-updates' });
  t.ok(age !== undefined && age >= 0 && age < 600, `feed age from the header timestamp (${age} s)`);
  t.equal(sampleValue(third, 'transit_feed_poll_duration_seconds_count', { feed: 'demo-trip-updates' }), 1);
  const matched = sampleValue(third, 'transit_feed_trips_total', { feed: 'demo-trip-updates', result: 'matched' }) ?? 0;
  t.equal(matched, poll.matching?.matched, 'matched trips as the poll counted them');
  t.ok(matched > 0, 'the demo trips match its schedule');
  t.equal(
    sampleValue(third, 'transit_feed_trip_match_ratio', { feed: 'demo-trip-updates' }),
    poll.matching?.match_rate,
  );
  t.ok(
    (sampleValue(third, 'transit_events_published_total', { type: 'vehicle.position' }) ?? 0) > 0,
    'the poll published events',
  );

  // an open event stream is counted while it is open
  const controller = new AbortController();
  const stream = await fetch(`${service.url}/api/v1/events/stream`, {
    headers: { authorization: `Bearer ${key}` },
    signal: controller.signal,
  });
  t.equal(stream.status, 200);
  const reader = stream.body!.getReader();
  await reader.read();
  t.equal(sampleValue(await scrape(), 'transit_sse_streams_open'), 1, 'one stream open');
  controller.abort();
  await reader.read().catch(() => undefined);
  let open = 1;
  for (let i = 0; i < 100 && open !== 0; i++) {
    await new Promise((r) => setTimeout(r, 50));
    open = sampleValue(await scrape(), 'transit_sse_streams_open') ?? -1;
  }
  t.equal(open, 0, 'and no longer once the client left');

  // the admin socket serves the same registry
  t.ok(service.admin, 'the admin socket is on (the default)');
  if (service.admin) {
    const viaSocket = await adminGet(service.admin.path, '/metrics');
    t.equal(viaSocket.status, 200);
    const f = parsePrometheusText(viaSocket.body);
    t.equal(requests(f, 'listAlerts', 200), requests(third, 'listAlerts', 200), 'the same counters as on metrics.port');
    t.equal(sampleValue(f, 'transit_feed_polls_total', { feed: 'demo-vehicles', status: 'ok' }), 1);
  }

  // the API port does not serve the scraper's endpoint
  t.equal((await fetch(`${service.url}/metrics`)).status, 404);
});

t.test('without metrics.port no listener is opened', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'metrics-off-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const config = parseConfig({
    host: '127.0.0.1',
    port: 0,
    db_path: join(dir, 'off.duckdb'),
    admin: { enabled: false },
    exports: { enabled: false, dir: join(dir, 'exports') },
    snapshot: { enabled: false, path: join(dir, 's.duckdb') },
  });
  const service = await startService(config, { log: silentLogger, poll: false });
  t.teardown(() => service.close());
  t.equal(service.metricsServer, null);
  t.match(
    parsePrometheusText(await service.metrics.metricsText()).get('transit_http_requests_total'),
    { type: 'counter' },
    'the registry still exists for the admin socket',
  );
});
