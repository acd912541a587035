import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { IngestLink, PROBE_PATH } from './ingest-link.ts';

async function listen(handler: Parameters<typeof createServer>[1]): Promise<{ server: Server; url: string }> {
  const server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

const close = (server: Server) =>
  new Promise<void>((r) => {
    server.closeAllConnections();
    server.close(() => r());
  });

t.test('the configured address first; reachable while it answers, why not once it does not', async (t) => {
  const seen: string[] = [];
  const { server, url } = await listen((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    res.writeHead(200).end();
  });
  const link = new IngestLink({ configured: url, announced: async () => 'http://127.0.0.1:9' });
  t.teardown(() => link.close());
  t.equal(link.state.reachable, null, 'not known before the first probe');
  t.equal(await link.target(), url, 'ingest.url wins over the announcement');
  await link.probe();
  t.same(seen, [`HEAD ${PROBE_PATH}`]);
  t.equal(link.state.reachable, true);
  t.equal(link.state.source, 'config');
  t.equal(link.state.error, null);
  const okAt = link.state.lastOkMs;
  t.ok(okAt !== null);
  await close(server);
  await link.probe();
  t.equal(link.state.reachable, false);
  t.match(link.state.error, /ECONNREFUSED connecting to http:\/\/127\.0\.0\.1:\d+/);
  t.equal(link.state.lastOkMs, okAt, 'the last good probe is kept');
});

t.test('no ingest.url: the announced address; none: unreachable, saying why', async (t) => {
  const { server, url } = await listen((_req, res) => res.writeHead(503).end());
  t.teardown(() => close(server));
  let announced: string | null = url;
  const link = new IngestLink({ configured: null, announced: async () => announced });
  t.teardown(() => link.close());
  await link.probe();
  t.equal(link.state.source, 'broker');
  t.equal(link.state.url, url);
  t.equal(link.state.reachable, false, 'a 5xx is no answer');
  t.match(link.state.error, /HTTP 503/);
  announced = null;
  await link.probe();
  t.equal(link.state.url, null);
  t.match(link.state.error, /ingest\.url is not set and the ingest node has not announced one/);
});

t.test('a probe that gets no answer ends at its timeout', async (t) => {
  const { server, url } = await listen(() => undefined);
  t.teardown(() => close(server));
  const link = new IngestLink({ configured: url, probeTimeoutMs: 100 });
  t.teardown(() => link.close());
  await link.probe();
  t.equal(link.state.reachable, false);
  t.match(link.state.error, /no answer from .* within 100 ms/);
});

t.test('an announcement read that hangs (the broker went down mid-read) gives the last address', async (t) => {
  let hang = false;
  const link = new IngestLink({
    configured: null,
    announced: () => (hang ? new Promise<string | null>(() => undefined) : Promise.resolve('http://10.0.0.4:8080')),
  });
  t.teardown(() => link.close());
  t.equal(await link.target(), 'http://10.0.0.4:8080');
  hang = true;
  t.equal(await link.target(), 'http://10.0.0.4:8080', 'within half a second, the address known');
});
