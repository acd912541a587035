import t from 'tap';
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { FeedSchema } from '../core/config.ts';
import { FeedFetcher, fetchBody, type FetchRequest } from './fetch-feed.ts';
import { startFaultServer, type Fault } from '../test/support/fault-server.ts';

const BODY = Buffer.alloc(2000, 1);
const request = (url: string, extra: Partial<FetchRequest> = {}): FetchRequest => ({
  url,
  timeout_ms: 5_000,
  max_bytes: 1024 * 1024,
  headers: {},
  etag: null,
  last_modified: null,
  ...extra,
});

t.test('http faults each end in their own status, against a real loopback server', async (t) => {
  const server = await startFaultServer(BODY, (req) => (req.url ?? '/').slice(1) as Fault);
  t.teardown(() => server.close());

  const ok = await fetchBody(request(server.url('/ok'), { headers: { 'x-api-key': 'k' } }));
  t.equal(ok.kind, 'body');
  if (ok.kind === 'body') t.equal(ok.body.byteLength, BODY.length);

  t.match(await fetchBody(request(server.url('/timeout'), { timeout_ms: 400 })), {
    kind: 'failed',
    status: 'timeout',
    reason: 'timeout',
    http_status: null,
  });
  t.match(await fetchBody(request(server.url('/status500'))), {
    kind: 'failed',
    status: 'http_error',
    reason: 'http_error',
    http_status: 500,
  });
  t.match(await fetchBody(request(server.url('/truncated'))), {
    kind: 'failed',
    status: 'network_error',
    reason: 'truncated_body',
    http_status: 200,
    error: /cut short after 100 of 3000 bytes/,
  });
  t.match(await fetchBody(request(server.url('/huge'))), { kind: 'failed', status: 'too_large', reason: 'too_large' });
  t.match(await fetchBody(request(server.url('/huge_chunked'))), {
    kind: 'failed',
    status: 'too_large',
    bytes: Number,
  });
  t.match(await fetchBody(request(server.url('/slow'), { timeout_ms: 400 })), {
    kind: 'failed',
    status: 'timeout',
    http_status: 200,
    error: /bytes of body read/,
  });
});

t.test('connection refused is a network_error', async (t) => {
  const server = await startFaultServer(BODY, () => 'ok');
  const url = server.url();
  await server.close();
  t.match(await fetchBody(request(url)), { kind: 'failed', status: 'network_error', reason: 'network_error' });
});

t.test('conditional GET and the body hash make an unchanged feed quiet', async (t) => {
  const server = await startFaultServer(BODY, (req) => (req.url === '/etag' ? 'etag' : 'ok'));
  t.teardown(() => server.close());
  const feed = (path: string) => FeedSchema.parse({ id: 'f', kind: 'gtfs-rt', url: server.url(path), timeout_s: 2 });

  const withEtag = new FeedFetcher(feed('/etag'));
  const first = await withEtag.fetch();
  t.equal(first.kind, 'body');
  const uncommitted = await withEtag.fetch();
  t.equal(uncommitted.kind, 'body', 'not processed yet: fetched again in full');
  if (uncommitted.kind === 'body') uncommitted.commit();
  t.match(await withEtag.fetch(), { kind: 'unchanged', http_status: 304 });
  t.same(
    server.requests.map((r) => r.ifNoneMatch),
    [null, null, '"v1"'],
  );
  t.equal(server.requests[2]!.ifModifiedSince, 'Tue, 07 Nov 2023 10:00:00 GMT');
  t.equal(withEtag.committedBytes, BODY.length);

  const plain = new FeedFetcher(feed('/ok'));
  const a = await plain.fetch();
  if (a.kind === 'body') a.commit();
  t.match(
    await plain.fetch(),
    { kind: 'unchanged', http_status: 200, bytes: BODY.length },
    'same bytes without validators',
  );
});

t.test('file:// feeds are read from disk with the same contract', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'fetch-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'feed.pb');
  writeFileSync(path, BODY);
  const url = pathToFileURL(path).href;
  const fetcher = new FeedFetcher(FeedSchema.parse({ id: 'f', kind: 'gtfs-rt', url }));
  const first = await fetcher.fetch();
  t.equal(first.kind, 'body');
  if (first.kind === 'body') first.commit();
  t.match(await fetcher.fetch(), { kind: 'unchanged' }, 'same size and mtime: not read again');
  writeFileSync(path, Buffer.alloc(10, 2));
  utimesSync(path, new Date(), new Date(Date.now() + 5000));
  t.equal((await fetcher.fetch()).kind, 'body');

  t.match(await fetchBody(request(url, { max_bytes: 5 })), { kind: 'failed', status: 'too_large' });
  t.match(await fetchBody(request(pathToFileURL(join(dir, 'missing.pb')).href)), {
    kind: 'failed',
    status: 'network_error',
    error: /ENOENT/,
  });
});
