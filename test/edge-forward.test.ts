// An edge forwards the paths it does not serve (history, account, dashboard) to the ingest node it
// finds through the broker, on a real redis-server on loopback: the same answers as the ingest
// node's, a Regular key's window counted once per forwarded request, bodies both ways, and 503
// ingest_unavailable with Retry-After once the ingest node is gone while realtime keeps answering.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { createKey } from '../accounts/keys.ts';
import { startEdge, type EdgeService } from '../app/edge.ts';
import { startService, type Service } from '../app/serve.ts';
import { parseConfig } from '../core/config.ts';
import { brokerMissing, startBroker } from './support/broker-servers.ts';
import { captureLogs } from './support/logs.ts';
import { waitFor } from './support/service-process.ts';

const missing = brokerMissing('redis');

t.test('an edge forwards what it does not serve to the ingest node', { skip: missing }, async (t) => {
  const redis = await startBroker('redis');
  const dir = mkdtempSync(join(tmpdir(), 'transit-forward-'));
  const logs = captureLogs('warn');
  const base = {
    host: '127.0.0.1',
    port: 0,
    signing_secret: 'test-secret-0123456789abcdef',
    broker: { url: redis.url, prefix: 'fw:', forward_timeout_ms: 2_000 },
    api: { meter_flush_ms: 100 },
  };
  let ingest: Service | null = await startService(
    parseConfig({
      ...base,
      role: 'ingest',
      db_path: join(dir, 'ingest.duckdb'),
      webhooks: { allow_private_targets: true },
    }),
    { log: logs.logger, poll: false },
  );
  const edge: EdgeService = await startEdge(parseConfig({ ...base, role: 'edge' }), { log: logs.logger });
  t.teardown(async () => {
    await edge.close().catch(() => undefined);
    await ingest?.close().catch(() => undefined);
    await redis.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const db = ingest.runtime.db;
  const regular = await createKey(db, { plan: 'regular', name: 'forwarded' });
  const max = await createKey(db, { plan: 'max', name: 'webhooks' });
  const auth = (key: string, more: Record<string, string> = {}) => ({ authorization: `Bearer ${key}`, ...more });
  await waitFor(
    'the key on the edge',
    async () => (await fetch(`${edge.url}/api/v1/alerts`, { headers: auth(regular.key) })).status === 200,
  );

  await t.test('history paths and the dashboard answer as on the ingest node, marked as forwarded', async (t) => {
    const path = '/api/v1/history/exports';
    const direct = await fetch(`${ingest!.url}${path}`, { headers: auth(max.key) });
    const viaEdge = await fetch(`${edge.url}${path}`, { headers: auth(max.key) });
    t.equal(viaEdge.status, direct.status);
    // signed links expire at a whole minute: two requests either side of one differ only there
    const unsigned = (body: unknown) =>
      JSON.parse(
        JSON.stringify(body)
          .replace(/expires=\d+&signature=[\w-]+/g, 'expires=…&signature=…')
          .replace(/"expires_at":"[^"]+"/g, '"expires_at":"…"'),
      );
    t.same(unsigned(await viaEdge.json()), unsigned(await direct.json()), 'the same body');
    t.equal(viaEdge.headers.get('via'), '1.1 transit-api-edge');
    t.equal(direct.headers.get('via'), null, 'the ingest node answers itself');
    t.equal(viaEdge.headers.get('content-type'), direct.headers.get('content-type'));

    const page = await fetch(`${edge.url}/dashboard`);
    t.equal(page.status, 200, "the dashboard (the ingest node's) through the edge");
    t.equal(page.headers.get('via'), '1.1 transit-api-edge');
    t.match(page.headers.get('content-type') ?? '', /text\/html/);
    t.match(await page.text(), /<html/i);
    const identity = { 'accept-encoding': 'identity' };
    const head = await fetch(`${edge.url}/dashboard`, { method: 'HEAD', headers: identity });
    const got = await fetch(`${edge.url}/dashboard`, { headers: identity });
    const body = Buffer.from(await got.arrayBuffer());
    t.equal(head.status, 200);
    t.equal(Number(head.headers.get('content-length')), body.byteLength, 'HEAD says the length a GET sends');

    const own = await fetch(`${edge.url}/status.json`);
    t.equal(own.status, 200);
    t.equal(own.headers.get('via'), null, "the status page is the edge's own");
    t.equal(((await own.json()) as { node: { role: string } }).node.role, 'edge');

    const unknown = await fetch(`${edge.url}/api/v1/no/such/path`, { headers: auth(max.key) });
    t.equal(unknown.status, 404, "a path nobody serves is the ingest node's 404");
    t.match(unknown.headers.get('content-type') ?? '', /application\/problem\+json/);
    t.equal(unknown.headers.get('via'), '1.1 transit-api-edge');
  });

  await t.test("the edge's own answers and the forwarded ones carry the same security headers", async (t) => {
    const answers: Array<[string, Response]> = [
      ['own JSON', await fetch(`${edge.url}/api/v1/alerts`, { headers: auth(regular.key) })],
      ['own problem', await fetch(`${edge.url}/api/v1/alerts?mode=nope`, { headers: auth(regular.key) })],
      ['own docs', await fetch(`${edge.url}/docs`)],
      ['own YAML', await fetch(`${edge.url}/openapi.yaml`)],
      ['own status page', await fetch(`${edge.url}/status`)],
      ['own status JSON', await fetch(`${edge.url}/status.json`)],
      ['forwarded page', await fetch(`${edge.url}/dashboard`)],
      ['forwarded JSON', await fetch(`${edge.url}/api/v1/history/exports`, { headers: auth(max.key) })],
    ];
    for (const [what, res] of answers) {
      await res.arrayBuffer();
      t.equal(res.headers.get('x-content-type-options'), 'nosniff', `${what}: nosniff`);
      t.notOk((res.headers.get('x-content-type-options') ?? '').includes(','), `${what}: said once`);
    }
    for (const [what, res] of answers.filter(([, r]) => r.headers.get('content-type')?.startsWith('text/html'))) {
      t.match(res.headers.get('content-security-policy'), /frame-ancestors 'none'/, `${what}: CSP`);
      t.equal(res.headers.get('referrer-policy'), 'no-referrer', `${what}: Referrer-Policy`);
    }
  });

  await t.test('a request body goes through; the ingest node stores what the edge was sent', async (t) => {
    const created = await fetch(`${edge.url}/api/v1/webhooks/endpoints`, {
      method: 'POST',
      headers: auth(max.key, { 'content-type': 'application/json' }),
      body: JSON.stringify({ url: 'http://127.0.0.1:9/hooks/transit', filters: { event_types: ['alert.created'] } }),
    });
    const text = await created.text();
    t.equal(created.status, 201, text);
    const id = (JSON.parse(text) as { id: string }).id;
    const listed = (await (
      await fetch(`${ingest!.url}/api/v1/webhooks/endpoints`, { headers: auth(max.key) })
    ).json()) as { data: Array<{ id: string }> };
    t.ok(
      listed.data.some((e) => e.id === id),
      'created on the ingest node',
    );
  });

  await t.test('a forwarded request counts once in the shared window', async (t) => {
    const remaining = async (url: string) =>
      Number((await fetch(url, { headers: auth(regular.key) })).headers.get('x-ratelimit-remaining'));
    const first = await remaining(`${edge.url}/api/v1/account`);
    const second = await remaining(`${edge.url}/api/v1/account/usage?days=1`);
    const local = await remaining(`${edge.url}/api/v1/alerts`);
    const third = await remaining(`${edge.url}/api/v1/history/exports`);
    t.ok(Number.isFinite(first) && first > 0, `remaining ${first}`);
    // account routes never use the window; the others use one request each, wherever they ran.
    // Remaining is read from leases (docs/guides/multi-node.md): a slot returned by an expiring
    // lease may raise it between requests, so the bound is that no request took two.
    t.ok(first - third <= 2, `each request once: none counted twice (${[first, second, local, third]})`);
  });

  await t.test('the ingest node gone: 503 ingest_unavailable with Retry-After; realtime still answers', async (t) => {
    await ingest!.close();
    ingest = null;
    const res = await fetch(`${edge.url}/api/v1/history/exports`, { headers: auth(max.key) });
    t.equal(res.status, 503);
    t.match(res.headers.get('content-type') ?? '', /application\/problem\+json/);
    t.ok(Number(res.headers.get('retry-after')) > 0, 'Retry-After');
    const problem = (await res.json()) as { type: string; status: number };
    t.match(problem.type, /ingest-unavailable$/);
    t.equal(problem.status, 503);
    const realtime = await fetch(`${edge.url}/api/v1/bus/realtime`, { headers: auth(regular.key) });
    t.equal(realtime.status, 200, 'the edge serves its live copy');
  });
});
