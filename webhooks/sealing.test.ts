import t from 'tap';
import { Db } from '../store/db.ts';
import { rawEvent } from '../test/support/events.ts';
import { harness, startReceiver, verifyDelivery, webhookSecrets } from '../test/support/webhooks.ts';
import { createEndpoint, rotateSecret, ROTATION_OVERLAP_MS, type EndpointDeps } from './endpoints.ts';
import { createWebhooks } from './index.ts';
import { InMemoryEventBus } from '../core/events.ts';
import { isSealed, SecretBox } from './secret-box.ts';
import { sealStoredSecrets, UnreadableSecretsError } from './sealing.ts';
import { silentLogger } from '../test/support/logs.ts';
import { ManualClock } from '../test/support/clock.ts';

const now = Date.parse('2026-03-01T12:00:00Z');
const policy = { allow: new Set(['loopback'] as const) };

async function stored(db: Db, id: string) {
  const [row] = await db.all<{ secret: string; previous_secret: string | null }>(
    'SELECT secret, previous_secret FROM webhook_endpoints WHERE endpoint_id = $1',
    [id],
  );
  return row!;
}

t.test('a new endpoint secret is stored encrypted, never as the secret itself', async (t) => {
  const db = await Db.open(':memory:');
  t.teardown(() => db.close());
  const deps: EndpointDeps = { policy, now: () => now, secrets: webhookSecrets };
  const ep = await createEndpoint(db, 'k', { url: 'http://127.0.0.1:9/a', filters: {} }, deps);
  const row = await stored(db, ep.id);
  t.ok(isSealed(row.secret), row.secret.slice(0, 24));
  t.not(row.secret, ep.secret);
  t.notMatch(row.secret, ep.secret.slice('whsec_'.length));
  t.equal(webhookSecrets.open(row.secret, ep.id), ep.secret);
  const rotated = await rotateSecret(db, 'k', ep.id, deps);
  const after = await stored(db, ep.id);
  t.equal(after.previous_secret, row.secret, 'the replaced secret moves as stored');
  t.equal(webhookSecrets.open(after.secret, ep.id), rotated.secret);
});

t.test('plaintext secrets of an older database are sealed at start, and deliveries still verify', async (t) => {
  const h = await harness(t);
  const ep = await h.endpoint('plain');
  // as a database from before encryption at rest holds it
  await h.db.run('UPDATE webhook_endpoints SET secret = $1 WHERE endpoint_id = $2', [ep.secret, ep.id]);
  const summary = await sealStoredSecrets(h.db, webhookSecrets, h.clock.now());
  t.same(summary, { sealed: 1, resealed: 0 });
  const row = await stored(h.db, ep.id);
  t.ok(isSealed(row.secret));
  t.notMatch(row.secret, ep.secret.slice('whsec_'.length));
  t.same(await sealStoredSecrets(h.db, webhookSecrets, h.clock.now()), { sealed: 0, resealed: 0 }, 'idempotent');
  await h.webhooks.enqueue([h.event()]);
  await h.webhooks.drain();
  t.equal(h.receiver.requests.length, 1);
  t.ok(verifyDelivery(ep.secret, h.receiver.requests[0]!, h.receiver.requests[0]!.at), 'signed with the secret');
});

t.test('rotating signing_secret: previous_signing_secrets re-encrypts, endpoints keep their secrets', async (t) => {
  const db = await Db.open(':memory:');
  t.teardown(() => db.close());
  const clock = new ManualClock(now);
  const receiver = await startReceiver(undefined, () => clock.now());
  t.teardown(() => receiver.close());
  const config = (signing_secret: string, previous: string[] = []) => ({
    signing_secret,
    previous_signing_secrets: previous,
    webhooks: { allow_private_targets: true, timeout_ms: 5_000, max_concurrency: 4, max_concurrency_per_endpoint: 2 },
  });
  const OLD = 'the-old-signing-secret-0123';
  const NEW = 'the-new-signing-secret-4567';
  const first = createWebhooks({ db, bus: new InMemoryEventBus(), config: config(OLD), clock, stopGraceMs: 100 });
  await first.start();
  const ep = await first.createEndpoint('k', { url: `${receiver.url}/a`, filters: {} });
  const rotated = await first.rotateSecret('k', ep.id);
  await first.stop();
  const before = await stored(db, ep.id);

  // the new secret alone: the start is refused, naming the fix, and nothing is changed
  const alone = createWebhooks({ db, bus: new InMemoryEventBus(), config: config(NEW), clock, stopGraceMs: 100 });
  const refused = await alone.start().then(
    () => null,
    (err: unknown) => err,
  );
  t.type(refused, UnreadableSecretsError);
  t.match(String(refused), new RegExp(`1 webhook endpoint \\(${ep.id}\\).*key id ${new SecretBox(OLD).keyId}`));
  t.match(String(refused), /previous_signing_secrets/);
  t.same(await stored(db, ep.id), before, 'a refused start changes nothing');

  const next = createWebhooks({
    db,
    bus: new InMemoryEventBus(),
    config: config(NEW, [OLD]),
    clock,
    stopGraceMs: 100,
    log: silentLogger,
  });
  await next.start();
  t.teardown(() => next.stop());
  const after = await stored(db, ep.id);
  const fresh = new SecretBox(NEW);
  t.ok(fresh.canOpen(after.secret) && fresh.canOpen(after.previous_secret!), 'both re-encrypted with the new key');
  t.equal(fresh.open(after.secret, ep.id), rotated.secret);
  t.equal(fresh.open(after.previous_secret!, ep.id), ep.secret);
  await next.enqueue([rawEvent('alert.created', { at_ms: clock.now(), modes: ['bus'], routes: ['1'] })]);
  await next.drain();
  const req = receiver.requests[0]!;
  t.ok(verifyDelivery(rotated.secret, req, req.at), 'the endpoint secret signs as before');
  t.ok(verifyDelivery(ep.secret, req, req.at), 'and the one it replaced, within its overlap');

  // once the overlap is over, the replaced secret is erased at the next start
  clock.advance(ROTATION_OVERLAP_MS + 1);
  await sealStoredSecrets(db, new SecretBox(NEW), clock.now());
  t.equal((await stored(db, ep.id)).previous_secret, null);
});
