// /status, /status.json and /status/stream through the whole request chain (inject): public,
// unmetered, documented, and streaming the page's sections.
import t, { type Test } from 'tap';
import { parseConfig } from '../core/config.ts';
import { FakeLive, makeAlert, makeFeed } from '../test/support/fake-live.ts';
import { RequestHandler } from '../http/request-handler.ts';
import type { KeyAuthenticator } from '../accounts/auth.ts';
import { CursorCodec } from '../http/cursor.ts';
import { SlidingWindowLimiter } from '../accounts/limiter.ts';
import { statusRoutes } from './routes.ts';
import { createStatus } from './index.ts';
import { StatusDocumentSchema } from './schema.ts';
import { buildOpenApi } from '../docs/openapi.ts';
import { MemoryEventLog } from '../stream/event-log.ts';
import { hubOptionsFromConfig, StreamHub } from '../stream/hub.ts';
import { silentLogger } from '../test/support/logs.ts';
import { MemoryMeter } from '../test/support/meter.ts';

const NOW = Date.now();

async function setup(t: Test, configOverrides: Record<string, unknown> = {}) {
  const config = parseConfig({
    feeds: [
      { id: 'bus-vp', kind: 'gtfs-rt', url: 'http://127.0.0.1:1/vp.pb', interval_s: 5 },
      { id: 'alerts', kind: 'alerts-json', url: 'http://127.0.0.1:1/a.json', interval_s: 30 },
    ],
    ...configOverrides,
  });
  const live = new FakeLive();
  live.feedList = [
    makeFeed({ feed_id: 'bus-vp', last_poll_ms: NOW, last_success_ms: NOW, header_timestamp_ms: NOW - 4_000 }),
    makeFeed({
      feed_id: 'alerts',
      kind: 'alerts-json',
      last_poll_ms: NOW,
      last_success_ms: NOW,
      header_timestamp_ms: NOW,
    }),
  ];
  live.alertList = [makeAlert({ id: 'alerts:1', modes: ['streetcar'], header: { en: '<script>alert(1)</script>' } })];
  const clock = { now: NOW };
  const hub = new StreamHub(hubOptionsFromConfig(config.sse), new MemoryEventLog({ capacity: 16 }));
  const status = await createStatus({ db: null, live, config, hub, clock: () => clock.now, log: silentLogger });
  await status.start();
  const inner = new MemoryMeter();
  const keys: KeyAuthenticator = {
    authenticate: (token) => (token === 'good' ? { id: 'k1', plan: 'max', test: false, prefix: 'tk_live_good' } : null),
    close: () => {},
  };
  const app = new RequestHandler({
    routes: statusRoutes(status),
    keys,
    limiter: new SlidingWindowLimiter(),
    meter: status.wrapMeter(inner),
    cursors: new CursorCodec('x'.repeat(32)),
    clock: () => clock.now,
    log: silentLogger,
    maxBodyBytes: 1024,
    responseCacheEntries: 10,
  });
  t.teardown(async () => {
    await status.stop();
    hub.close();
    await app.close();
  });
  return { app, status, inner, live, clock, hub };
}

t.test('the HTML page: public, self-contained, every component, escaped', async (t) => {
  const { app, inner } = await setup(t);
  const page = await app.inject({ url: '/status' });
  t.equal(page.status, 200);
  t.equal(page.headers['content-type'], 'text/html; charset=utf-8');
  t.match(
    page.headers['content-security-policy'],
    /default-src 'none'; style-src 'sha256-[^']+'; script-src 'sha256-[^']+'; connect-src 'self'/,
  );
  t.notOk(page.headers['x-meter-unit']);
  for (const component of ['feed:bus-vp', 'feed:alerts', 'alerts', 'api'])
    t.match(page.body, `data-component="${component}"`);
  t.match(page.body, /<section id="history"/);
  t.notMatch(page.body, /<script>alert/, 'nothing from a feed is rendered unescaped');
  t.notMatch(page.body, /(src|href)="(https?:)?\/\//, 'no asset from elsewhere');
  const head = await app.inject({ url: '/status', method: 'HEAD' });
  t.equal(head.status, 200);
  t.equal(head.body, '');
  t.equal(inner.records.length, 0, 'nothing metered');
});

t.test('/status.json: the document, matching its schema and the OpenAPI document', async (t) => {
  const { app } = await setup(t);
  const res = await app.inject({ url: '/status.json' });
  t.equal(res.status, 200);
  const doc = StatusDocumentSchema.parse(res.json());
  t.same(
    doc.feeds.map((f) => f.feed_id),
    ['bus-vp', 'alerts'],
  );
  t.equal(doc.alerts.active_by_mode.streetcar, 1);
  const api = buildOpenApi(app.routes) as {
    paths: Record<string, Record<string, { responses: Record<string, unknown>; security: unknown[] }>>;
  };
  t.ok(api.paths['/status.json']?.get?.responses['200'], 'documented');
  t.same(api.paths['/status.json']?.get?.security, [], 'no key');
  t.ok(api.paths['/status']?.get && api.paths['/status/stream']?.get);
  const again = await app.inject({ url: '/status.json', headers: { 'if-none-match': res.headers.etag! } });
  t.equal(again.status, 304, 'the document is cached per tick and revalidated by ETag');
  t.equal((await app.inject({ url: '/status.json?x=1' })).status, 400, 'unknown parameters are refused as anywhere');
});

t.test('/status/stream: current sections at once, then changes; bounded viewers; not metered', async (t) => {
  const { app, status, inner, live, clock } = await setup(t, { status: { max_viewers: 2 } });
  const first = await app.inject({ url: '/status/stream' });
  t.equal(first.status, 200);
  t.equal(first.headers['content-type'], 'text/event-stream');
  t.notOk(first.headers['x-meter-unit'], 'a public stream carries no meter unit');
  t.equal((await app.inject({ url: '/status/stream?api_key=good' })).status, 400, 'and takes no key');
  const chunks = first.stream!.chunks;
  t.match(chunks[0], /^retry: 3000\n\nid: \d+\nevent: status\ndata: \{/);
  const message = JSON.parse(/data: (.*)\n/.exec(chunks[0]!)![1]!) as {
    state: string;
    sections: Record<string, string>;
    hashes: Record<string, string>;
  };
  t.same(Object.keys(message.sections), ['overall', 'feeds', 'alerts', 'api', 'history']);
  t.same(Object.keys(message.hashes), Object.keys(message.sections));
  t.match(message.sections.feeds, /data-component="feed:bus-vp" data-state="operational"/);

  // the feed's poll hangs: after two intervals the stream says so
  clock.now += 11_000;
  live.change(() => {});
  status.collector.tick();
  const last = chunks.at(-1)!;
  t.match(last, /event: status/);
  t.match(last, /data-component=\\"feed:bus-vp\\" data-state=\\"down\\"/);

  const second = await app.inject({ url: '/status/stream' });
  t.equal(second.status, 200);
  t.equal(status.viewerCount, 2);
  const third = await app.inject({ url: '/status/stream' });
  t.equal(third.status, 503);
  t.match(third.json(), { code: 'unavailable' });
  t.equal(third.headers['retry-after'], '60');
  second.stream!.close();
  t.equal(status.viewerCount, 1, 'a viewer that leaves frees its place');
  t.equal((await app.inject({ url: '/status/stream' })).status, 200);
  t.same(
    inner.records.filter((r) => r.endpoint.startsWith('/status')),
    [],
    'status viewers are not usage',
  );
  status.setOpenStreams(() => 5);
  status.collector.tick();
  t.equal(status.document().api.open_streams, 3, 'status viewers are not API streams');
});

t.test('API requests feed the figures and still reach the billing meter', async (t) => {
  const { app, status, inner } = await setup(t);
  // the status app has no API route: a keyed call to an unknown path is a metered 404
  const res = await app.inject({ url: '/api/v1/nothing', headers: { authorization: 'Bearer good' } });
  t.equal(res.status, 404);
  t.equal(inner.records.length, 1);
  status.collector.tick();
  t.match(status.document().api.last_5m, { requests: 1, client_errors: 1 });
});

t.test("/status/stream: CR and LF in a feed's error text cannot break the event framing", async (t) => {
  const { app, status, live, clock } = await setup(t);
  const stream = (await app.inject({ url: '/status/stream' })).stream!;
  // an upstream error message is text the service does not control
  const evil = 'HTTP 502\r\nevent: admin\r\nid: 999\n\ndata: {"state":"operational"}\rretry: 1';
  clock.now += 1_000;
  live.change(() => {
    live.feedList = [
      makeFeed({
        feed_id: 'bus-vp',
        last_poll_ms: clock.now,
        last_success_ms: NOW,
        last_status: 'http_error',
        last_error: evil,
        failures: 1,
      }),
    ];
  });
  status.collector.tick();
  const wire = stream.chunks.join('');
  t.notMatch(wire, /\r/, 'no CR reaches the wire');
  const fields = wire.split('\n').filter((line) => line !== '' && !line.startsWith('data: '));
  t.ok(fields.length >= 4, 'the first state and at least one update');
  t.ok(
    fields.every((line) => /^(retry: 3000|id: \d+|event: status)$/.test(line)),
    `only the stream's own fields: ${JSON.stringify(fields)}`,
  );
  const update = JSON.parse(/data: (.*)\n\n$/.exec(stream.chunks.at(-1)!)![1]!) as { sections: { feeds: string } };
  t.match(update.sections.feeds, 'event: admin', 'the text is shown, escaped inside the JSON data');
});
