import t from 'tap';
import { Db } from '../store/db.ts';
import { ApiError } from '../core/errors.ts';
import {
  EndpointCreateSchema,
  EndpointUpdateSchema,
  EndpointWithSecretSchema,
  EndpointSchema,
  createEndpoint,
  deleteEndpoint,
  disableEndpoint,
  getEndpoint,
  listEndpoints,
  redeliverMessage,
  rotateSecret,
  signingSecrets,
  updateEndpoint,
  ROTATION_OVERLAP_MS,
  type EndpointDeps,
} from './endpoints.ts';
import { enqueueEvents } from './outbox.ts';
import { MAX_ENDPOINTS_PER_KEY } from './schemas.ts';
import { generateSecret } from './signing.ts';
import { rawEvent } from '../test/support/events.ts';
import { webhookSecrets } from '../test/support/webhooks.ts';

let now = Date.parse('2026-03-01T12:00:00Z');
const deps: EndpointDeps = { policy: { allow: new Set(['loopback']) }, now: () => now, secrets: webhookSecrets };
const body = (url = 'http://127.0.0.1:9/hook', extra: object = {}) => EndpointCreateSchema.parse({ url, ...extra });

async function freshDb(t: { teardown(fn: () => unknown): void }): Promise<Db> {
  const db = await Db.open(':memory:');
  t.teardown(() => db.close());
  return db;
}

async function code(promise: Promise<unknown>): Promise<string | null> {
  return promise.then(
    () => null,
    (err: unknown) => (err instanceof ApiError ? err.code : String(err)),
  );
}

t.test('the create schema validates the body', async (t) => {
  const parsed = EndpointCreateSchema.parse({
    url: 'https://example.com/h',
    filters: { modes: ['rail'], lines: ['RED'] },
  });
  t.same(parsed.filters, { modes: ['rail'], lines: ['RED'] });
  t.same(EndpointCreateSchema.parse({ url: 'https://example.com/h' }).filters, {}, 'filters default to none');
  const bad = EndpointCreateSchema.safeParse({
    url: 'ftp://x/',
    filters: { modes: ['ferry'], colour: 1 },
    extra: true,
  });
  t.notOk(bad.success);
  const paths = bad.error!.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
  t.ok(
    paths.some((p) => p.startsWith('url: scheme ftp:')),
    paths.join(' | '),
  );
  t.ok(
    paths.some((p) => p.startsWith('filters.modes.0')),
    'bad mode named',
  );
  t.ok(
    paths.some((p) => p.startsWith('filters') && /colour/.test(p)),
    'unknown filter named',
  );
  t.ok(
    paths.some((p) => /extra/.test(p)),
    'unknown field named',
  );
  t.notOk(EndpointCreateSchema.safeParse({ url: 'https://e.com', filters: { event_types: ['bogus.type'] } }).success);
  t.notOk(
    EndpointCreateSchema.safeParse({ url: 'https://e.com', filters: { routes: [] } }).success,
    'empty list refused',
  );
  t.notOk(EndpointUpdateSchema.safeParse({}).success, 'an empty update is refused');
  t.ok(EndpointUpdateSchema.safeParse({ description: null }).success);
});

t.test('register shows the secret once; list and get never do', async (t) => {
  const db = await freshDb(t);
  const created = await createEndpoint(
    db,
    'key_a',
    body('http://127.0.0.1:9/hook', {
      description: 'ops',
      filters: { modes: ['bus'], routes: ['504'], event_types: ['alert.created'] },
    }),
    deps,
  );
  t.ok(EndpointWithSecretSchema.safeParse(created).success);
  t.match(created.secret, /^whsec_/);
  t.match(created.id, /^ep_/);
  t.same(created.filters, { modes: ['bus'], routes: ['504'], event_types: ['alert.created'] });
  t.equal(created.enabled, true);
  t.equal(created.created_at, new Date(now).toISOString());
  const listed = await listEndpoints(db, 'key_a', deps);
  t.equal(listed.length, 1);
  t.notOk('secret' in listed[0]!, 'no secret in listings');
  t.ok(EndpointSchema.safeParse(listed[0]).success);
  const got = await getEndpoint(db, 'key_a', created.id, deps);
  t.notOk('secret' in got);
  t.same(got.filters, created.filters);
});

t.test('unsafe targets are refused at registration and update', async (t) => {
  const db = await freshDb(t);
  t.equal(await code(createEndpoint(db, 'k', body('http://10.0.0.8/x'), deps)), 'unsafe_target');
  t.equal(await code(createEndpoint(db, 'k', body('http://169.254.169.254/'), deps)), 'unsafe_target');
  const ep = await createEndpoint(db, 'k', body(), deps);
  t.equal(await code(updateEndpoint(db, 'k', ep.id, { url: 'http://192.168.1.1/' }, deps)), 'unsafe_target');
  t.equal((await getEndpoint(db, 'k', ep.id)).url, 'http://127.0.0.1:9/hook', 'unchanged');
  t.same(await listEndpoints(db, 'k'), [await getEndpoint(db, 'k', ep.id)]);
});

t.test('with the default policy every unsafe target is a 400 unsafe_target at registration', async (t) => {
  const db = await freshDb(t);
  const strict: EndpointDeps = { policy: { allow: new Set() }, secrets: webhookSecrets };
  const cases: [string, RegExp][] = [
    ['http://127.0.0.1:8080/in', /loopback/],
    ['http://10.20.30.40/in', /private network/],
    ['http://169.254.169.254/latest/meta-data/', /cloud metadata/],
    ['http://localhost:8080/in', /localhost resolves to .* loopback|loopback .*localhost resolves/],
    ['http://[::1]:8080/in', /loopback/],
  ];
  for (const [url, why] of cases) {
    const err = await createEndpoint(db, 'k', body(url), strict).then(
      () => null,
      (e: unknown) => e,
    );
    t.ok(err instanceof ApiError, url);
    t.equal((err as ApiError).status, 400, `${url}: 400`);
    t.equal((err as ApiError).code, 'unsafe_target');
    t.match((err as ApiError).detail, why, `${url}: ${(err as ApiError).detail}`);
  }
  t.same(await listEndpoints(db, 'k'), [], 'nothing stored');
});

t.test('keys are isolated from each other', async (t) => {
  const db = await freshDb(t);
  const ep = await createEndpoint(db, 'key_a', body(), deps);
  t.same(await listEndpoints(db, 'key_b'), []);
  t.equal(await code(getEndpoint(db, 'key_b', ep.id)), 'not_found');
  t.equal(await code(updateEndpoint(db, 'key_b', ep.id, { description: 'x' }, deps)), 'not_found');
  t.equal(await code(deleteEndpoint(db, 'key_b', ep.id)), 'not_found');
  t.equal(await code(rotateSecret(db, 'key_b', ep.id, deps)), 'not_found');
  t.equal((await getEndpoint(db, 'key_a', ep.id)).description, null);
});

t.test('update changes url, description, filters and enabled', async (t) => {
  const db = await freshDb(t);
  const ep = await createEndpoint(db, 'k', body('http://127.0.0.1:9/a', { filters: { modes: ['rail'] } }), deps);
  now += 1_000;
  const updated = await updateEndpoint(
    db,
    'k',
    ep.id,
    {
      url: 'http://127.0.0.1:9/b',
      description: 'new',
      filters: { event_types: ['export.ready', 'export.failed'] },
    },
    deps,
  );
  t.equal(updated.url, 'http://127.0.0.1:9/b');
  t.equal(updated.description, 'new');
  t.same(updated.filters, { event_types: ['export.ready', 'export.failed'] }, 'filters replaced as a whole');
  t.equal(updated.updated_at, new Date(now).toISOString());
  t.equal((await updateEndpoint(db, 'k', ep.id, { description: null }, deps)).description, null);
  const off = await disableEndpoint(db, 'k', ep.id, deps);
  t.equal(off.enabled, false);
  t.equal(off.disabled_reason, 'user');
  const on = await updateEndpoint(db, 'k', ep.id, { enabled: true }, deps);
  t.equal(on.enabled, true);
  t.equal(on.disabled_reason, null);
});

t.test('disabling or deleting fails what was queued', async (t) => {
  const db = await freshDb(t);
  const a = await createEndpoint(db, 'k', body(), deps);
  const b = await createEndpoint(db, 'k', body('http://127.0.0.1:9/b'), deps);
  await enqueueEvents(db, [rawEvent('alert.created', { at_ms: now, modes: ['bus'], routes: ['1'] })], now);
  await disableEndpoint(db, 'k', a.id, deps);
  await deleteEndpoint(db, 'k', b.id);
  const states = await db.all<{ endpoint_id: string; state: string; last_error: string }>(
    'SELECT endpoint_id, state, last_error FROM webhook_deliveries ORDER BY endpoint_id',
  );
  t.same(
    states.map((s) => s.state),
    ['failed', 'failed'],
  );
  t.same(new Set(states.map((s) => s.last_error)), new Set(['endpoint disabled by its owner', 'endpoint deleted']));
  t.same(
    (await listEndpoints(db, 'k')).map((e) => e.id),
    [a.id],
    'deleted endpoint gone from the list',
  );
  t.equal(await code(getEndpoint(db, 'k', b.id)), 'not_found');
  const [erased] = await db.all<{ secret: string }>('SELECT secret FROM webhook_endpoints WHERE endpoint_id = $1', [
    b.id,
  ]);
  t.equal(erased!.secret, '', 'secret erased on delete');
});

t.test('rotation: new secret shown once, old one signs during the overlap', async (t) => {
  const db = await freshDb(t);
  const ep = await createEndpoint(db, 'k', body(), deps);
  const rotated = await rotateSecret(db, 'k', ep.id, deps);
  t.not(rotated.secret, ep.secret);
  t.equal(rotated.previous_secret_expires_at, new Date(now + ROTATION_OVERLAP_MS).toISOString());
  const [row] = await db.all<Record<string, unknown>>(
    'SELECT secret, previous_secret, epoch_ms(previous_secret_until) AS until FROM webhook_endpoints',
  );
  const record = {
    secret: row!.secret as string,
    previous_secret: row!.previous_secret as string,
    previous_until_ms: Number(row!.until),
  };
  const opened = (stored: string[]) => stored.map((s) => webhookSecrets.open(s, ep.id));
  t.same(opened(signingSecrets(record, now)), [rotated.secret, ep.secret]);
  t.same(opened(signingSecrets(record, now + ROTATION_OVERLAP_MS)), [rotated.secret], 'overlap over: one signature');
  t.equal(
    (await getEndpoint(db, 'k', ep.id, { now: () => now + ROTATION_OVERLAP_MS + 1 })).previous_secret_expires_at,
    null,
  );
});

t.test('a key holds a bounded number of endpoints', async (t) => {
  const db = await freshDb(t);
  const secret = generateSecret();
  await db.run(
    `INSERT INTO webhook_endpoints (endpoint_id, key_id, url, enabled, secret, created_at, updated_at)
    SELECT 'ep_' || i, 'k', 'http://127.0.0.1/', true, $1, now(), now() FROM range(${MAX_ENDPOINTS_PER_KEY}) t(i)`,
    [secret],
  );
  t.equal(await code(createEndpoint(db, 'k', body(), deps)), 'conflict');
  t.equal(await code(createEndpoint(db, 'other', body(), deps)), null);
});

t.test('redelivery queues the same message again for an endpoint that had it', async (t) => {
  const db = await freshDb(t);
  const a = await createEndpoint(db, 'k', body(), deps);
  const b = await createEndpoint(db, 'k2', body(), deps);
  await enqueueEvents(db, [rawEvent('alert.updated', { at_ms: now, data: { id: 1 } })], now);
  await db.run(`UPDATE webhook_endpoints SET filter_event_types = ['export.ready'] WHERE endpoint_id = $1`, [b.id]);
  const [msg] = await db.all<{ message_id: string }>('SELECT message_id FROM webhook_messages');
  const id = await redeliverMessage(db, 'k', a.id, msg!.message_id, deps);
  const rows = await db.all<{ delivery_id: string; message_id: string; state: string }>(
    'SELECT delivery_id, message_id, state FROM webhook_deliveries WHERE endpoint_id = $1 ORDER BY seq',
    [a.id],
  );
  t.equal(rows.length, 2);
  t.equal(rows[1]!.delivery_id, id);
  t.equal(rows[1]!.message_id, msg!.message_id, 'same webhook-id');
  t.equal(rows[1]!.state, 'pending');
  t.equal(await code(redeliverMessage(db, 'k', a.id, 'msg_unknown', deps)), 'not_found');
  t.equal(await code(redeliverMessage(db, 'k', b.id, msg!.message_id, deps)), 'not_found', 'other key');
  await disableEndpoint(db, 'k', a.id, deps);
  t.equal(await code(redeliverMessage(db, 'k', a.id, msg!.message_id, deps)), 'conflict');
});
