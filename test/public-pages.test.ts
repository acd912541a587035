// What anyone can read from a real `serve`: a feed URL with user:password, a token and a
// fragment, a header secret, a schedule source with a token and a feed at a private path all
// fail, and no public answer (status page, JSON, stream, docs, OpenAPI, LLM guides, dashboard,
// 404s, nor an API key's view of the feeds) repeats any of it; the admin `status` shows it all.
// The service binds 127.0.0.1 when the config names no host, every response says nosniff and
// every page carries its security headers; a configured quiet alerts feed is an alert source.
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { connect, createServer } from 'node:net';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { encodeFeed, header } from './support/pipeline-fakes.ts';
import { openSse } from './support/sse-client.ts';
import { op, startServe, tempDir, waitFor, writeJson } from './support/service-process.ts';
import { gtfsDate, smallGtfsZip } from './support/small-gtfs.ts';

t.setTimeout(240_000);

/** A loopback port nothing listens on (taken, then let go). */
function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** Whether a TCP connection to host:port is accepted. */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.setTimeout(2_000);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

interface Doc {
  feeds: Array<{ feed_id: string; state: string; last_error: string | null; reason: string }>;
  alerts: {
    state: string;
    reason: string;
    sources: Array<{ feed_id: string; state: string; last_success_at: string | null; alerts: number }>;
  };
  schedules: Array<{ schedule_id: string; last_check_outcome: string | null; last_error: string | null }>;
}

t.test('public answers carry no secret; safe defaults', async (t) => {
  const dir = tempDir(t.teardown.bind(t), 'public-pages-');
  const port = await closedPort();
  // the schedule's source answers for the first import, then goes away: every refresh fails
  const zip = smallGtfsZip({ trips: 2, start: gtfsDate(-10), end: gtfsDate(30), timezone: 'America/Chicago' });
  const gtfs = createHttpServer((_req, res) => res.writeHead(200, { 'content-type': 'application/zip' }).end(zip));
  await new Promise<void>((r) => gtfs.listen(0, '127.0.0.1', r));
  const gtfsPort = (gtfs.address() as { port: number }).port;
  const privateDir = join(dir, 'private-dir');
  mkdirSync(privateDir);
  const quietAlerts = join(dir, 'ct-service-alerts.pb');
  // Caltrain's alerts feed as captured: valid, no entities
  writeFileSync(quietAlerts, encodeFeed({ header: header(Math.floor(Date.now() / 1000)), entity: [] }));
  const SECRETS = [
    'FEEDTOKEN',
    'PASSWORD',
    'FRAGMENT',
    'HEADERSECRET',
    'SCHEDTOKEN',
    'private-dir',
    'agency-secret',
    dir,
  ];
  const configPath = join(dir, 'transit.json');
  writeJson(configPath, {
    port: 0,
    db_path: join(dir, 'transit.duckdb'),
    signing_secret: 'public-pages-secret-0123456789',
    schedules: [
      { id: 'agency', source: `http://127.0.0.1:${gtfsPort}/gtfs.zip?token=SCHEDTOKEN`, refresh_cron: '* * * * * *' },
    ],
    feeds: [
      {
        id: 'tokened',
        kind: 'gtfs-rt',
        url: `http://user:PASSWORD@127.0.0.1:${port}/feed.pb?token=FEEDTOKEN#FRAGMENT`,
        headers: { 'x-api-key': 'HEADERSECRET' },
        interval_s: 1,
        mode: 'bus',
      },
      { id: 'plain', kind: 'gtfs-rt', url: `http://127.0.0.1:${port}/vehicles.pb?key=FEEDTOKEN`, interval_s: 1 },
      { id: 'private', kind: 'gtfs-rt', url: `file://${privateDir}/agency-secret-feed.pb`, interval_s: 1 },
      { id: 'ct-alerts', kind: 'gtfs-rt', url: `file://${quietAlerts}`, interval_s: 1 },
    ],
    exports: { enabled: false, dir: join(dir, 'exports') },
    snapshot: { enabled: false, path: join(dir, 'snapshot.duckdb') },
  });
  const service = await startServe(configPath);
  t.teardown(() => service.stop('SIGKILL'));
  gtfs.closeAllConnections();
  await new Promise((r) => gtfs.close(r));
  const base = service.url;

  t.test('no host in the config: 127.0.0.1, and the banner says so', async (t) => {
    const bound = /listening on http:\/\/([\d.]+):(\d+) \(([^)]*)\)/.exec(service.output());
    t.ok(bound, 'the banner names the address bound', { output: service.output() });
    t.equal(bound![1], '127.0.0.1', 'the address bound');
    t.match(bound![3], /^this machine only; database /);
    t.equal(base, `http://127.0.0.1:${bound![2]}`);
    t.ok(await accepts('127.0.0.1', Number(bound![2])), 'loopback connects');
    const outside = Object.values(networkInterfaces())
      .flat()
      .find((a) => a && a.family === 'IPv4' && !a.internal);
    if (outside) t.notOk(await accepts(outside.address, Number(bound![2])), `${outside.address} is refused`);
  });

  const doc = await waitFor('every failure on /status.json', async () => {
    const got = (await (await fetch(`${base}/status.json`)).json()) as Doc;
    const failed = (id: string) => got.feeds.find((f) => f.feed_id === id)?.last_error;
    // a refresh in flight when the schedule's server closed fails with "connection closed by the
    // server"; the ones after it (every second) with "connection refused": wait for those
    const schedule = got.schedules[0]?.last_error;
    return failed('tokened') && failed('plain') && failed('private') && schedule?.includes('connection refused')
      ? got
      : null;
  });

  t.test('/status.json shows each failure in words', async (t) => {
    const feed = (id: string) => doc.feeds.find((f) => f.feed_id === id)!;
    t.equal(feed('private').last_error, 'file not found');
    t.match(feed('plain').last_error, /connection refused/);
    t.match(feed('tokened').last_error, /user name and password/);
    t.match(
      doc.schedules[0]!.last_error,
      /^GTFS download failed: http:\/\/127\.0\.0\.1:\d+\/gtfs\.zip: fetch failed: connection refused$/,
    );
  });

  t.test('a quiet configured alerts feed is an operational alert source', async (t) => {
    const alerts = await waitFor('the alerts feed polled', async () => {
      const got = ((await (await fetch(`${base}/status.json`)).json()) as Doc).alerts;
      return got.state === 'operational' ? got : null;
    });
    t.same(alerts.sources, [
      { feed_id: 'ct-alerts', state: 'operational', last_success_at: alerts.sources[0]!.last_success_at, alerts: 0 },
    ]);
    t.equal(alerts.reason, '1 source polling normally');
    const page = await (await fetch(`${base}/status`)).text();
    t.notMatch(page, /no alert sources configured/);
  });

  t.test('no public answer repeats a secret', async (t) => {
    const created = await op('keys', ['create', '--plan', 'max', '--name', 'reader', '--config', configPath]);
    t.equal(created.code, 0, created.err);
    const auth = { authorization: `Bearer ${created.out.split('\n')[0]!}` };
    const answers: Array<[string, Response]> = [];
    for (const path of [
      '/status',
      '/status.json',
      '/docs',
      '/openapi.yaml',
      '/openapi.json',
      '/llms.txt',
      '/llms-full.txt',
      '/dashboard',
      '/nope',
      '/api/v1/nope',
      '/status.json/x',
    ])
      answers.push([path, await fetch(`${base}${path}`)]);
    answers.push(['/api/v1/bus/realtime (keyed)', await fetch(`${base}/api/v1/bus/realtime`, { headers: auth })]);
    for (const [path, res] of answers) {
      const text = `${[...res.headers].map(([k, v]) => `${k}: ${v}`).join('\n')}\n${await res.text()}`;
      for (const secret of SECRETS) t.notOk(text.includes(secret), `${path} (${res.status}) does not hold ${secret}`);
    }
    const stream = await openSse(`${base}/status/stream`);
    await stream.waitFor((events) => events.length >= 1, 20_000);
    const frames = stream.events.map((e) => e.data).join('\n');
    await stream.close();
    t.match(frames, /file not found/, 'the stream shows the failures');
    for (const secret of SECRETS) t.notOk(frames.includes(secret), `/status/stream does not hold ${secret}`);
    const bus = JSON.parse(await (await fetch(`${base}/api/v1/bus/realtime`, { headers: auth })).text()) as {
      freshness: { sources: Array<{ source: string; last_error: string | null }> };
    };
    t.match(
      bus.freshness.sources.find((s) => s.source === 'tokened')?.last_error,
      /user name and password/,
      'an API key sees the reason, not the URL',
    );
  });

  t.test('the operator sees everything: admin status and log', async (t) => {
    const status = await op('status', ['--config', configPath]);
    t.equal(status.code, 0, status.err);
    t.match(status.out, /^service {4}running/);
    t.match(status.out, /tokened .*\n {4}last error \S+: Request cannot be constructed .*PASSWORD.*FEEDTOKEN#FRAGMENT/);
    t.match(
      status.out,
      /private .*\n {4}last error \S+: ENOENT: no such file or directory, stat '.*private-dir\/agency-secret-feed\.pb'/,
    );
    t.match(
      status.out,
      new RegExp(
        String.raw`agency: imported .*SCHEDTOKEN.*\n {4}last check \S+ failed: GTFS download failed: .*token=SCHE` +
          'DTOKEN: fetch failed: ECONNREFUSED',
      ),
    );
    const json = JSON.parse((await op('status', ['--json', '--config', configPath])).out) as {
      feeds: Array<{ id: string; last_error: string | null }>;
    };
    t.match(json.feeds.find((f) => f.id === 'plain')?.last_error, /ECONNREFUSED/);
    t.match(service.output(), /agency-secret-feed\.pb/, 'the log has the path');
  });

  t.test('headers on every kind of answer', async (t) => {
    const kinds: Array<[string, string, Record<string, string>?]> = [
      ['/status.json', 'application/json'],
      ['/nope', 'application/problem+json'],
      ['/openapi.yaml', 'application/yaml'],
      ['/llms.txt', 'text/plain; charset=utf-8'],
      ['/docs', 'text/html; charset=utf-8'],
      ['/status', 'text/html; charset=utf-8'],
      ['/dashboard', 'text/html; charset=utf-8'],
    ];
    for (const [path, type] of kinds) {
      const res = await fetch(`${base}${path}`);
      await res.arrayBuffer();
      t.equal(res.headers.get('content-type'), type, path);
      t.equal(res.headers.get('x-content-type-options'), 'nosniff', `${path}: nosniff`);
      if (type.startsWith('text/html')) {
        const csp = res.headers.get('content-security-policy') ?? '';
        t.match(csp, /(^|; )frame-ancestors 'none'(;|$)/, `${path}: never framed`);
        t.match(csp, /(^|; )default-src 'none'(;|$)/, `${path}: nothing but what the page allows`);
        t.match(csp, /(^|; )script-src 'sha256-[A-Za-z0-9+/=]+'(;|$)/, `${path}: its own script only`);
        t.equal(res.headers.get('referrer-policy'), 'no-referrer', `${path}: Referrer-Policy`);
        t.equal(res.headers.get('x-frame-options'), 'DENY', `${path}: X-Frame-Options`);
      }
    }
    t.equal((await fetch(`${base}/status.json`)).headers.get('cache-control'), 'private, no-cache');
    const stream = await openSse(`${base}/status/stream`);
    t.equal(stream.headers.get('content-type'), 'text/event-stream');
    t.equal(stream.headers.get('x-content-type-options'), 'nosniff', 'the event stream too');
    await stream.close();
    const preflight = await fetch(`${base}/status.json`, { method: 'OPTIONS' });
    t.equal(preflight.headers.get('x-content-type-options'), 'nosniff', 'and a preflight');
  });
});
