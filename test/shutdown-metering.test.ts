// Graceful shutdown with requests in flight, and metering persisted in batches: every call
// recorded once, test keys apart, nothing lost at shutdown.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { z } from 'zod';
import { defineRoute } from '../http/route.ts';
import { Db } from '../store/db.ts';
import { bearer, startHarness } from './support/harness.ts';

t.test('graceful shutdown finishes in-flight requests and flushes metering', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'transit-http-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const dbPath = join(dir, 'api.duckdb');
  let release!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  let entered!: () => void;
  const inside = new Promise<void>((resolve) => {
    entered = resolve;
  });
  const slow = defineRoute({
    id: 'slowForTest',
    method: 'GET',
    path: '/api/v1/test/slow',
    summary: 'Waits until the test releases it',
    tags: ['Test'],
    auth: 'key',
    meter: 'request',
    response: z.object({ done: z.boolean() }),
    async handler() {
      entered();
      await gate;
      return { done: true };
    },
  });
  const h = await startHarness({ dbPath, routes: [slow], config: { api: { meter_flush_ms: 60_000 } } });
  const live = await h.key('regular');
  const test = await h.key('free', { test: true });

  for (let i = 0; i < 30; i++) t.equal((await h.get('/api/v1/alerts', bearer(live))).status, 200);
  for (let i = 0; i < 25; i++) await h.get('/api/v1/bus/realtime', bearer(test));
  for (let i = 0; i < 4; i++) t.equal((await h.get('/api/v1/rail')).status, 401);
  await h.get('/docs');

  const pending = fetch(`${h.url}/api/v1/test/slow`, { headers: bearer(live) });
  await inside;
  t.equal(h.server.inFlight, 1);
  const closing = h.server.close();
  let closed = false;
  void closing.then(() => {
    closed = true;
  });
  await new Promise((r) => setTimeout(r, 100));
  t.notOk(closed, 'close waits for the request in flight');
  await t.rejects(
    fetch(`${h.url}/api/v1/alerts`, { headers: { ...bearer(live), connection: 'close' } }),
    'new connections are refused',
  );
  release();
  const res = await pending;
  t.equal(res.status, 200);
  t.same(await res.json(), { done: true });
  await closing;
  t.ok(closed);
  await h.db.close();

  const db = await Db.open(dbPath);
  t.teardown(() => db.close());
  const liveRows = await db.all<{ endpoint: string; status: number; n: bigint }>(
    'SELECT endpoint, status, sum(calls) AS n FROM api_usage WHERE key_id IS NOT NULL GROUP BY ALL ORDER BY ALL',
  );
  t.same(
    liveRows.map((r) => [r.endpoint, r.status, Number(r.n)]),
    [
      ['/api/v1/alerts', 200, 30],
      ['/api/v1/test/slow', 200, 1],
    ],
    'every live call once, the in-flight one included',
  );
  const testRows = await db.all<{ status: number; n: bigint }>(
    'SELECT status, sum(calls) AS n FROM api_usage_test GROUP BY ALL ORDER BY ALL',
  );
  t.same(
    testRows.map((r) => [r.status, Number(r.n)]),
    [
      [200, 20],
      [429, 5],
    ],
    'test-key usage kept apart, 429s included',
  );
  const anonymous = await db.all<{ n: bigint }>(
    "SELECT sum(calls) AS n FROM api_usage WHERE key_id IS NULL AND status = 401 AND endpoint = '/api/v1/rail'",
  );
  t.equal(Number(anonymous[0]!.n), 4, 'unauthenticated calls recorded without a key');
  const docs = await db.all<{ n: bigint }>("SELECT count(*) AS n FROM api_usage WHERE endpoint = '/docs'");
  t.equal(Number(docs[0]!.n), 0, 'public pages are not metered');
  const units = await db.all<{ unit: string; plan: string }>(
    'SELECT DISTINCT unit, plan FROM api_usage WHERE key_id IS NOT NULL',
  );
  t.same(units, [{ unit: 'request', plan: 'regular' }]);
});
