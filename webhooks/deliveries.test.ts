import t from 'tap';
import { Db } from '../store/db.ts';
import { ApiError } from '../core/errors.ts';
import type { DomainEvent } from '../core/events.ts';
import { createEndpoint } from './endpoints.ts';
import { getDelivery, listDeliveries } from './deliveries.ts';
import { enqueueEvents } from './outbox.ts';
import { DeliveryListQuerySchema, DeliveryPageSchema } from './schemas.ts';
import { harness, webhookSecrets } from '../test/support/webhooks.ts';
import { rawEvent } from '../test/support/events.ts';

const at = Date.parse('2026-03-01T10:00:00Z');
const ev = (type: DomainEvent['type'] = 'alert.created'): DomainEvent =>
  rawEvent(type, { at_ms: at, modes: ['bus'], routes: ['1'] });
const deps = { policy: { allow: new Set(['loopback'] as const) }, now: () => at, secrets: webhookSecrets };

async function setup(t: { teardown(fn: () => unknown): void }) {
  const db = await Db.open(':memory:');
  t.teardown(() => db.close());
  const a = await createEndpoint(db, 'k', { url: 'http://127.0.0.1:1/a', filters: {} }, deps);
  const b = await createEndpoint(
    db,
    'k',
    { url: 'http://127.0.0.1:1/b', filters: { event_types: ['alert.updated'] } },
    deps,
  );
  const other = await createEndpoint(db, 'other', { url: 'http://127.0.0.1:1/o', filters: {} }, deps);
  return { db, a, b, other };
}

t.test('pages walk newest first with no gaps or repeats while rows are added', async (t) => {
  const { db } = await setup(t);
  for (let i = 0; i < 7; i++) await enqueueEvents(db, [ev(i % 2 ? 'alert.updated' : 'alert.created')], at + i);
  const before = (await listDeliveries(db, 'k', { limit: 1000 })).data.map((d) => d.id);
  t.equal(before.length, 10);
  const seen: string[] = [];
  let after: string | undefined;
  let pages = 0;
  do {
    const page = await listDeliveries(db, 'k', { limit: 3, ...(after ? { after } : {}) });
    t.ok(DeliveryPageSchema.safeParse(page).success, 'page matches its schema');
    seen.push(...page.data.map((d) => d.id));
    after = page.next_after ?? undefined;
    // new rows arriving mid-walk land before the first page and never shift later ones
    if (pages++ === 0) await enqueueEvents(db, [ev('alert.updated')], at + 100);
  } while (after);
  t.same(seen, before, 'exactly the rows present when the walk began, in order');
  t.equal(pages, 4);
});

t.test('filters by endpoint, state and event type, scoped to the key', async (t) => {
  const { db, a, b, other } = await setup(t);
  await enqueueEvents(db, [ev('alert.created'), ev('alert.updated')], at);
  await db.run(`UPDATE webhook_deliveries SET state = 'failed' WHERE endpoint_id = $1`, [b.id]);
  t.equal((await listDeliveries(db, 'k', { limit: 20, endpoint_id: a.id })).data.length, 2);
  t.equal((await listDeliveries(db, 'k', { limit: 20, state: 'failed' })).data.length, 1);
  t.equal((await listDeliveries(db, 'k', { limit: 20, event_type: 'alert.updated' })).data.length, 2);
  t.equal(
    (await listDeliveries(db, 'k', { limit: 20, event_type: 'alert.updated', state: 'pending' })).data[0]!.endpoint_id,
    a.id,
  );
  t.same(
    (await listDeliveries(db, 'k', { limit: 20, endpoint_id: other.id })).data,
    [],
    "another key's endpoint shows nothing",
  );
  t.equal((await listDeliveries(db, 'other', { limit: 20 })).data.length, 2);
  const mine = (await listDeliveries(db, 'k', { limit: 1 })).data[0]!;
  t.equal((await getDelivery(db, 'k', mine.id)).id, mine.id);
  const err = await getDelivery(db, 'other', mine.id).catch((e: unknown) => e);
  t.equal((err as ApiError).code, 'not_found');
});

t.test(
  'positions are plain sequence numbers (the API signs them in its cursor); anything else is refused',
  async (t) => {
    const { db } = await setup(t);
    for (let i = 0; i < 3; i++) await enqueueEvents(db, [ev()], at);
    const { next_after } = await listDeliveries(db, 'k', { limit: 1 });
    t.match(next_after, /^\d+$/);
    t.equal((await listDeliveries(db, 'k', { limit: 5, after: next_after! })).data.length, 2);
    for (const bad of ['', 'garbage', '-1', '1.5', '9'.repeat(20)]) {
      const err = await listDeliveries(db, 'k', { limit: 5, after: bad }).catch((e: unknown) => e);
      t.ok(err instanceof ApiError && err.code === 'invalid_cursor', `refused: ${JSON.stringify(bad)}`);
    }
    const badLimit = await listDeliveries(db, 'k', { limit: 0 }).catch((e: unknown) => e);
    t.equal((badLimit as ApiError).code, 'invalid_parameter');
  },
);

t.test('the query schema validates listing parameters', async (t) => {
  t.same(DeliveryListQuerySchema.parse({}), { limit: 20 });
  t.same(DeliveryListQuerySchema.parse({ limit: '50', state: 'retrying' }), { limit: 50, state: 'retrying' });
  t.notOk(DeliveryListQuerySchema.safeParse({ state: 'lost' }).success);
  t.notOk(DeliveryListQuerySchema.safeParse({ limit: '0' }).success);
  t.notOk(DeliveryListQuerySchema.safeParse({ colour: 'x' }).success);
});

t.test('each delivery lists its attempts with time, status, latency and error', async (t) => {
  let n = 0;
  const h = await harness(t, (_req, res) => res.writeHead(n++ === 0 ? 500 : 200).end());
  const ep = await h.endpoint();
  await h.webhooks.enqueue([h.event()]);
  await h.webhooks.drain();
  let [d] = (await h.webhooks.listDeliveries('key_test', { limit: 5 })).data;
  t.equal(d!.state, 'retrying');
  t.equal(d!.next_attempt_at, new Date(h.clock.now() + 5_000).toISOString());
  h.clock.advance(5_000);
  await h.webhooks.drain();
  [d] = (await h.webhooks.listDeliveries('key_test', { limit: 5, endpoint_id: ep.id })).data;
  t.equal(d!.state, 'succeeded');
  t.equal(d!.next_attempt_at, null);
  t.equal(d!.attempt_count, 2);
  t.same(
    d!.attempts.map((a) => [a.attempt, a.outcome, a.status_code]),
    [
      [1, 'http_error', 500],
      [2, 'succeeded', 200],
    ],
  );
  t.ok(d!.attempts.every((a) => a.finished_at && typeof a.latency_ms === 'number'));
  t.equal(d!.attempts[0]!.error, 'HTTP 500');
  t.equal(d!.attempts[1]!.started_at, new Date(h.clock.now()).toISOString());
  t.equal((await h.webhooks.getDelivery('key_test', d!.id)).attempts.length, 2);
  // pruning drops finished deliveries past retention
  t.equal(await h.webhooks.prune(h.clock.now() + 1), 1);
  t.same((await h.webhooks.listDeliveries('key_test', { limit: 5 })).data, []);
  t.same(await h.db.all('SELECT * FROM webhook_attempts'), []);
  t.same(await h.db.all('SELECT * FROM webhook_messages'), []);
});
