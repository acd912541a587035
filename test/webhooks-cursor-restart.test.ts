// A delivery-audit cursor is one flat signed cursor (the API's), so with `signing_secret` set it
// keeps working when the service restarts on the same database; it stays bound to its key.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { InMemoryEventBus } from '../core/events.ts';
import { webhookRoutes } from '../http/routes/webhooks.ts';
import { createWebhooks, type Webhooks } from '../webhooks/index.ts';
import { rawEvent } from './support/events.ts';
import { bearer, startHarness, type Harness } from './support/harness.ts';
import { startReceiver } from './support/webhooks.ts';

const BASE = '/api/v1/webhooks';
const SECRET = 'restart-secret-0123456789abcdef';

async function start(
  dbPath: string,
  secret: string,
  previous: string[] = [],
): Promise<{ h: Harness; bus: InMemoryEventBus; webhooks: Webhooks; stop(): Promise<void> }> {
  const bus = new InMemoryEventBus();
  const made: { webhooks?: Webhooks } = {};
  const h = await startHarness({
    dbPath,
    config: { signing_secret: secret, previous_signing_secrets: previous, webhooks: { allow_private_targets: true } },
    routes: ({ db, config }) => {
      made.webhooks = createWebhooks({ db, bus, config, stopGraceMs: 200 });
      return webhookRoutes(made.webhooks);
    },
  });
  const webhooks = made.webhooks!;
  await webhooks.start();
  return {
    h,
    bus,
    webhooks,
    async stop() {
      await webhooks.stop();
      await h.close();
    },
  };
}

t.test('a delivery cursor survives a restart when signing_secret is set', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'webhook-cursor-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const dbPath = join(dir, 'db.duckdb');
  const rx = await startReceiver();
  t.teardown(() => rx.close());

  const first = await start(dbPath, SECRET);
  const a = bearer(await first.h.key('regular'));
  const b = bearer(await first.h.key('regular'));
  const created = await fetch(`${first.h.url}${BASE}/endpoints`, {
    method: 'POST',
    headers: { ...a, 'content-type': 'application/json' },
    body: JSON.stringify({ url: `${rx.url}/hook` }),
  });
  t.equal(created.status, 201);
  for (let i = 0; i < 3; i++)
    first.bus.publish(rawEvent('alert.created', { modes: ['bus'], routes: ['39'], data: { id: `a${i}` } }));
  await rx.waitFor(3);
  await first.webhooks.drain();
  const all = (await (await first.h.get(`${BASE}/deliveries?limit=10`, a)).json()).data.map(
    (d: { id: string }) => d.id,
  );
  t.equal(all.length, 3);
  const page1 = await (await first.h.get(`${BASE}/deliveries?limit=1`, a)).json();
  const cursor = page1.meta.next_cursor as string;
  t.ok(cursor, 'a next cursor');
  const [payload, signature, extra] = cursor.split('.');
  t.ok(signature && extra === undefined, 'one signature');
  const key = JSON.parse(Buffer.from(payload!, 'base64url').toString('utf8')) as unknown[];
  t.match(key, [String, /^\d+$/], 'the key that listed it and a plain position: no cursor inside the cursor');
  await first.stop();

  const second = await start(dbPath, SECRET);
  t.teardown(() => second.stop());
  const next = await second.h.get(`${BASE}/deliveries?limit=10&cursor=${encodeURIComponent(cursor)}`, a);
  t.equal(next.status, 200, 'the cursor is accepted after the restart');
  t.same(
    (await next.json()).data.map((d: { id: string }) => d.id),
    all.slice(1),
    'and continues where the first page ended',
  );
  const stolen = await second.h.get(`${BASE}/deliveries?limit=10&cursor=${encodeURIComponent(cursor)}`, b);
  t.equal(stolen.status, 400, 'another key cannot use it');
  t.equal((await stolen.json()).code, 'invalid_cursor');
});

t.test('without the same signing_secret the cursor is refused after a restart', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'webhook-cursor-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const dbPath = join(dir, 'db.duckdb');
  const rx = await startReceiver();
  t.teardown(() => rx.close());
  const first = await start(dbPath, SECRET);
  const a = bearer(await first.h.key('regular'));
  await fetch(`${first.h.url}${BASE}/endpoints`, {
    method: 'POST',
    headers: { ...a, 'content-type': 'application/json' },
    body: JSON.stringify({ url: `${rx.url}/hook` }),
  });
  for (let i = 0; i < 2; i++)
    first.bus.publish(rawEvent('alert.created', { modes: ['bus'], routes: ['39'], data: { id: `b${i}` } }));
  await rx.waitFor(2);
  await first.webhooks.drain();
  const cursor = (await (await first.h.get(`${BASE}/deliveries?limit=1`, a)).json()).meta.next_cursor as string;
  await first.stop();
  // the old secret still opens the endpoint secrets it encrypted (they are re-encrypted), but
  // cursors are verified with signing_secret alone
  const second = await start(dbPath, 'another-secret-0123456789abcdef', [SECRET]);
  t.teardown(() => second.stop());
  const res = await second.h.get(`${BASE}/deliveries?limit=10&cursor=${encodeURIComponent(cursor)}`, a);
  t.equal(res.status, 400);
  t.equal((await res.json()).code, 'invalid_cursor');
});
