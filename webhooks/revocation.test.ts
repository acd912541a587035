// A revoked key's webhooks: endpoints disabled, queued deliveries cancelled (kept in the audit as
// `cancelled`), an attempt in flight cancelled at its verdict, nothing queued for them again;
// revocations by SQL caught at the next outbox batch and at start, crash leftovers too.
import type http from 'node:http';
import t from 'tap';
import { InMemoryEventBus } from '../core/events.ts';
import { Db } from '../store/db.ts';
import { createEndpoint } from './endpoints.ts';
import { createWebhooks } from './index.ts';
import { enqueueEvents } from './outbox.ts';
import { pruneOutbox } from './delivery-store.ts';
import { endRevokedWebhooks } from './revocation.ts';
import { harness, webhookConfig, webhookSecrets, type ReceivedRequest } from '../test/support/webhooks.ts';
import { rawEvent } from '../test/support/events.ts';
import { ManualClock } from '../test/support/clock.ts';

const HOUR = 3_600_000;

async function addKey(db: Db, id: string): Promise<void> {
  await db.run(
    `INSERT INTO api_keys (id, key_hash, prefix, plan, test, name, created_at, revoked_at)
     VALUES ($1, $1, 'tk_live_xxxx', 'regular', false, NULL, now(), NULL)`,
    [id],
  );
}

/** As `keys revoke` does: the row and the webhooks in one transaction. */
function revoke(db: Db, id: string, nowMs: number) {
  return db.transaction(async (conn) => {
    await conn.run('UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1', [id]);
    return endRevokedWebhooks(conn, nowMs, id);
  });
}

async function until(what: string, probe: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (await probe()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

t.test("revoking a key disables its endpoints and cancels what was queued for them; other keys' go on", async (t) => {
  const held: http.ServerResponse[] = [];
  const h = await harness(t, (req: ReceivedRequest, res) => {
    if (req.path === '/failing') res.writeHead(500).end('boom');
    else if (req.path === '/slow') held.push(res);
    else res.writeHead(204).end();
  });
  await addKey(h.db, 'key_a');
  await addKey(h.db, 'key_b');
  const failing = await h.endpoint('failing', {}, 'key_a');
  const slow = await h.endpoint('slow', {}, 'key_a');
  const other = await h.endpoint('other', {}, 'key_b');
  await h.webhooks.enqueue([h.event()]);
  await h.receiver.waitFor(3);
  const stateOf = async (endpointId: string) =>
    (await h.deliveries()).filter((d) => d.endpoint_id === endpointId).map((d) => d.state);
  await until('the failed attempt recorded', async () => (await stateOf(failing.id))[0] === 'retrying');
  await until('the success recorded', async () => (await stateOf(other.id))[0] === 'succeeded');

  const ended = await revoke(h.db, 'key_a', h.clock.now());
  t.same(ended, { endpoints_disabled: 2, deliveries_cancelled: 1 }, 'the retrying one; the one in flight waits');
  for (const ep of await h.webhooks.listEndpoints('key_a')) {
    t.match(ep, { enabled: false, disabled_reason: 'key_revoked' }, ep.id);
    t.ok(ep.disabled_at);
  }
  t.match(await h.webhooks.getEndpoint('key_b', other.id), { enabled: true, disabled_reason: null });
  t.same(await revoke(h.db, 'key_a', h.clock.now()), { endpoints_disabled: 0, deliveries_cancelled: 0 }, 'idempotent');

  // the attempt in flight gets its verdict: it would be retried, so it is cancelled instead
  held.shift()!.writeHead(503).end();
  await h.webhooks.drain();
  t.same(await stateOf(slow.id), ['cancelled'], 'the in-flight attempt ends cancelled');
  const page = await h.webhooks.listDeliveries('key_a', { limit: 10 });
  t.equal(page.data.length, 2);
  for (const d of page.data) {
    t.equal(d.state, 'cancelled', 'cancelled in the audit');
    t.equal(d.next_attempt_at, null);
    t.equal(d.last_error, 'cancelled: the API key was revoked');
    t.equal(d.attempts.length, 1, 'the attempts made before are kept');
  }
  t.same(
    (await h.webhooks.listDeliveries('key_a', { limit: 10, state: 'cancelled' })).data.length,
    2,
    'listed by the cancelled state',
  );

  // later events and the retry schedule reach only the other key
  const seen = h.receiver.requests.length;
  await h.webhooks.enqueue([h.event(), h.event('alert.updated')]);
  for (let i = 0; i < 6; i++) {
    h.clock.advance(HOUR);
    await h.webhooks.drain();
  }
  const later = h.receiver.requests.slice(seen).map((r) => r.path);
  t.same(later, ['/other', '/other'], 'nothing more to the revoked key, everything to the other');
  t.equal((await h.deliveries()).filter((d) => d.endpoint_id !== other.id).length, 2, 'nothing queued for them');

  // finished deliveries, the cancelled ones included, leave with retention
  t.equal(await pruneOutbox(h.db, h.clock.now() + 1), 5);
});

t.test('a key revoked by SQL: the next outbox batch ends its webhooks before matching', async (t) => {
  const db = await Db.open(':memory:');
  t.teardown(() => db.close());
  const at = Date.parse('2026-03-02T08:00:00Z');
  const deps = { policy: { allow: new Set(['loopback'] as const) }, now: () => at, secrets: webhookSecrets };
  await addKey(db, 'key_sql');
  const ep = await createEndpoint(db, 'key_sql', { url: 'http://127.0.0.1:1/a', filters: {} }, deps);
  // an endpoint whose key row is unknown here (another store's key) is not treated as revoked
  await createEndpoint(db, 'key_elsewhere', { url: 'http://127.0.0.1:1/b', filters: {} }, deps);
  const event = (n: number) => rawEvent('alert.created', { at_ms: at, modes: ['bus'], routes: ['1'], data: { n } });
  t.same(await enqueueEvents(db, [event(1)], at), { messages: 1, deliveries: 2, rejected: 0 });
  await db.run('UPDATE api_keys SET revoked_at = now() WHERE id = $1', ['key_sql']);
  t.same(await enqueueEvents(db, [event(2)], at + 1), { messages: 1, deliveries: 1, rejected: 0 });
  const rows = await db.all<{ endpoint_id: string; state: string }>(
    'SELECT endpoint_id, state FROM webhook_deliveries ORDER BY seq',
  );
  t.same(
    rows.filter((r) => r.endpoint_id === ep.id).map((r) => r.state),
    ['cancelled'],
    'the delivery queued before is cancelled, none added',
  );
  const [endpoint] = await db.all<{ enabled: boolean; disabled_reason: string }>(
    'SELECT enabled, disabled_reason FROM webhook_endpoints WHERE endpoint_id = $1',
    [ep.id],
  );
  t.same(endpoint, { enabled: false, disabled_reason: 'key_revoked' });
});

t.test('at start: keys revoked while stopped, and a crash leftover in flight for one, end cancelled', async (t) => {
  const db = await Db.open(':memory:');
  t.teardown(() => db.close());
  const clock = new ManualClock(Date.parse('2026-03-02T08:00:00Z'));
  const deps = { policy: { allow: new Set(['loopback'] as const) }, now: () => clock.now(), secrets: webhookSecrets };
  await addKey(db, 'key_down');
  const ep = await createEndpoint(db, 'key_down', { url: 'http://127.0.0.1:1/a', filters: {} }, deps);
  const events = [1, 2].map((n) =>
    rawEvent('alert.created', { at_ms: clock.now(), modes: ['bus'], routes: ['1'], data: { n } }),
  );
  await enqueueEvents(db, events, clock.now());
  // one attempt was running when the process died; then the key was revoked by SQL
  await db.run(`UPDATE webhook_deliveries SET in_flight = true, attempt_count = 1, attempt_started_at = now()
    WHERE seq = (SELECT min(seq) FROM webhook_deliveries)`);
  await db.run(`UPDATE api_keys SET revoked_at = now() WHERE id = 'key_down'`);
  const webhooks = createWebhooks({
    db,
    bus: new InMemoryEventBus(),
    config: webhookConfig(),
    clock,
    targetPolicy: { allow: new Set(['loopback']) },
    onError: (err) => t.fail(String(err)),
  });
  await webhooks.start();
  t.teardown(() => webhooks.stop());
  const page = await webhooks.listDeliveries('key_down', { limit: 10 });
  t.same(
    page.data.map((d) => d.state),
    ['cancelled', 'cancelled'],
    'neither is left queued for an endpoint that can never be claimed',
  );
  t.same(
    page.data.flatMap((d) => d.attempts.map((a) => a.outcome)),
    ['interrupted'],
    'the interrupted attempt is audited',
  );
  t.match(await webhooks.getEndpoint('key_down', ep.id), { enabled: false, disabled_reason: 'key_revoked' });
  t.same(await webhooks.keyRevoked('key_down'), { endpoints_disabled: 0, deliveries_cancelled: 0 });
});
