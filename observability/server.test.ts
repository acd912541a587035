import t from 'tap';
import { createServer } from 'node:net';
import { ServiceMetrics } from './metrics.ts';
import { startMetricsServer } from './server.ts';
import { parsePrometheusText, sampleValue } from '../test/support/prometheus-text.ts';
import { captureLogs } from '../test/support/logs.ts';

t.test('GET /metrics on its own loopback listener', async (t) => {
  const metrics = new ServiceMetrics({ defaultMetrics: false });
  const server = await startMetricsServer({ metrics, host: '127.0.0.1', port: 0 });
  t.teardown(() => server.close());
  t.match(server.url, /^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
  metrics.request('listAlerts', 200, 0.001);
  const res = await fetch(server.url);
  t.equal(res.status, 200);
  t.match(res.headers.get('content-type'), /^text\/plain; version=0\.0\.4/);
  t.equal(res.headers.get('cache-control'), 'no-store');
  t.equal(res.headers.get('x-content-type-options'), 'nosniff');
  t.equal(
    sampleValue(parsePrometheusText(await res.text()), 'transit_http_requests_total', {
      route: 'listAlerts',
      status: '200',
    }),
    1,
  );
  t.equal((await fetch(`${server.url}?x=1`)).status, 200, 'a query is ignored');
  const head = await fetch(server.url, { method: 'HEAD' });
  t.equal(head.status, 200);
  t.equal(await head.text(), '');
  const other = await fetch(server.url.replace('/metrics', '/'));
  t.equal(other.status, 404);
  t.match(await other.text(), /the metrics are at \/metrics/);
  t.equal(other.headers.get('x-content-type-options'), 'nosniff', 'on refusals too');
  const post = await fetch(server.url, { method: 'POST' });
  t.equal(post.status, 405);
  t.equal(post.headers.get('allow'), 'GET, HEAD');
});

t.test('a failing collection is a 500 and a logged error; a taken port names metrics.port', async (t) => {
  const logs = captureLogs();
  const failing = { contentType: 'text/plain', metricsText: () => Promise.reject(new Error('collector broke')) };
  const server = await startMetricsServer({ metrics: failing, host: '127.0.0.1', port: 0, log: logs.logger });
  t.teardown(() => server.close());
  t.equal((await fetch(server.url)).status, 500);
  t.match(logs.lines, [
    { component: 'metrics', msg: 'collecting metrics failed', err: { message: 'collector broke', stack: /./ } },
  ]);

  const holder = createServer();
  await new Promise<void>((r) => holder.listen(0, '127.0.0.1', () => r()));
  t.teardown(() => holder.close());
  const port = (holder.address() as { port: number }).port;
  await t.rejects(
    startMetricsServer({ metrics: failing, host: '127.0.0.1', port }),
    /could not listen on 127\.0\.0\.1:\d+: EADDRINUSE; change metrics\.port/,
  );
});
