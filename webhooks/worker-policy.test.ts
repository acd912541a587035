// Delivery-time safety and fairness: SSRF rechecks, address pinning, redirects, rotation,
// concurrency bounds, interruption and redelivery.
import t from 'tap';
import type http from 'node:http';
import { createWebhooks } from './index.ts';
import { harness, startReceiver, verifyDelivery, webhookConfig, type Reply } from '../test/support/webhooks.ts';
import type { Resolver } from './ssrf.ts';

t.test('a name is checked again at delivery: rebinding to a private address is refused', async (t) => {
  const table: Record<string, string> = { 'hooks.example': '93.184.216.34' };
  const resolve: Resolver = async (host) => [{ address: table[host] ?? '0.0.0.0', family: 4 }];
  const h = await harness(t, undefined, { resolve });
  const ep = await h.webhooks.createEndpoint('key_test', { url: 'http://hooks.example/in', filters: {} });
  t.ok(ep.id, 'public at registration');
  table['hooks.example'] = '10.0.0.5';
  await h.webhooks.enqueue([h.event()]);
  await h.webhooks.drain();
  const [attempt] = await h.attempts();
  t.equal(attempt!.outcome, 'unsafe_target');
  t.match(attempt!.error, /hooks\.example resolves to 10\.0\.0\.5/);
  t.equal((await h.deliveries())[0]!.state, 'retrying', 'counted as a failed attempt');
});

t.test('the connection goes to the checked address, not a fresh lookup', async (t) => {
  // `receiver.test` exists only in this resolver; the system resolver would fail on it
  const resolve: Resolver = async (host) => (host === 'receiver.test' ? [{ address: '127.0.0.1', family: 4 }] : []);
  const h = await harness(t, undefined, { resolve });
  const ep = await h.webhooks.createEndpoint('key_test', {
    url: `http://receiver.test:${h.receiver.port}/pinned`,
    filters: {},
  });
  await h.webhooks.enqueue([h.event()]);
  await h.webhooks.drain();
  const [req] = h.receiver.requests;
  t.equal(req!.headers.host, `receiver.test:${h.receiver.port}`, 'Host names the endpoint');
  t.ok(verifyDelivery(ep.secret, req!, req!.at));
  t.equal((await h.deliveries())[0]!.state, 'succeeded');
});

t.test('a redirect to a private address is not followed, and the audit says why', async (t) => {
  const h = await harness(t, (_req, res) => res.writeHead(302, { location: 'http://10.0.0.1/steal' }).end());
  await h.endpoint();
  await h.webhooks.enqueue([h.event()]);
  await h.webhooks.drain();
  t.equal(h.receiver.requests.length, 1);
  const [attempt] = await h.attempts();
  t.equal(attempt!.outcome, 'redirect');
  t.equal(attempt!.status_code, 302);
  t.match(attempt!.error, /HTTP 302 redirect to http:\/\/10\.0\.0\.1\/steal not followed/);
  t.match(attempt!.error, /redirect target is refused too: url: 10\.0\.0\.1 is a private network address/);
  t.equal((await h.deliveries())[0]!.state, 'retrying');
});

t.test('during a rotation both secrets verify; after the overlap only the new one', async (t) => {
  const h = await harness(t);
  const ep = await h.endpoint();
  const rotated = await h.webhooks.rotateSecret('key_test', ep.id);
  await h.webhooks.enqueue([h.event()]);
  await h.webhooks.drain();
  const during = h.receiver.requests[0]!;
  t.equal(String(during.headers['webhook-signature']).split(' ').length, 2);
  t.ok(verifyDelivery(rotated.secret, during, during.at), 'new secret verifies');
  t.ok(verifyDelivery(ep.secret, during, during.at), 'old secret verifies');
  h.clock.advance(24 * 3600_000 + 1);
  await h.webhooks.enqueue([h.event()]);
  await h.webhooks.drain();
  const after = h.receiver.requests[1]!;
  t.ok(verifyDelivery(rotated.secret, after, after.at));
  t.throws(() => verifyDelivery(ep.secret, after, after.at), /No matching signature/);
});

t.test('concurrency stays within the overall and per-endpoint bounds', async (t) => {
  let open = 0;
  let maxOpen = 0;
  const openPer = new Map<string, number>();
  let maxPer = 0;
  const slow: Reply = (req, res) => {
    open++;
    maxOpen = Math.max(maxOpen, open);
    const n = (openPer.get(req.path) ?? 0) + 1;
    openPer.set(req.path, n);
    maxPer = Math.max(maxPer, n);
    setTimeout(() => {
      open--;
      openPer.set(req.path, (openPer.get(req.path) ?? 1) - 1);
      res.writeHead(200).end();
    }, 15);
  };
  const h = await harness(t, slow, { config: { max_concurrency: 3, max_concurrency_per_endpoint: 2 } });
  for (const name of ['a', 'b', 'c']) await h.endpoint(name);
  await h.webhooks.enqueue(Array.from({ length: 5 }, () => h.event()));
  await h.webhooks.drain();
  t.equal(h.receiver.requests.length, 15);
  t.ok(maxOpen <= 3, `at most 3 at once overall (saw ${maxOpen})`);
  t.ok(maxPer <= 2, `at most 2 at once per endpoint (saw ${maxPer})`);
  t.ok(maxOpen >= 2, 'and it does run in parallel');
  t.same(
    (await h.deliveries()).filter((d) => d.state !== 'succeeded'),
    [],
  );
});

t.test('stop interrupts running attempts; the next start delivers them again', async (t) => {
  const held: http.ServerResponse[] = [];
  const h = await harness(t);
  const receiver = await startReceiver(
    (_req, res) => void held.push(res),
    () => h.clock.now(),
  );
  t.teardown(() => receiver.close());
  const ep = await h.webhooks.createEndpoint('key_test', { url: `${receiver.url}/slow`, filters: {} });
  await h.webhooks.enqueue([h.event()]);
  await receiver.waitFor(1);
  await h.webhooks.stop();
  let [attempt] = await h.attempts();
  t.equal(attempt!.outcome, 'interrupted');
  let [d] = await h.deliveries();
  t.equal(d!.state, 'pending', 'no verdict yet, so still pending');
  t.equal(d!.interrupted_count, 1);
  receiver.reply = (_req, res) => res.writeHead(200).end();
  const again = createWebhooks({
    db: h.db,
    bus: h.bus,
    config: webhookConfig(),
    clock: h.clock,
    targetPolicy: { allow: new Set(['loopback']) },
  });
  await again.start();
  await again.drain();
  await again.stop();
  [d] = await h.deliveries();
  t.equal(d!.state, 'succeeded');
  t.equal(d!.attempt_count, 2);
  [, attempt] = await h.attempts();
  t.equal(attempt!.outcome, 'succeeded');
  t.equal(receiver.requests[0]!.headers['webhook-id'], receiver.requests[1]!.headers['webhook-id']);
  t.ok(verifyDelivery(ep.secret, receiver.requests[1]!, receiver.requests[1]!.at));
});

t.test('redeliver sends the same message again with the same webhook-id', async (t) => {
  const h = await harness(t);
  const ep = await h.endpoint();
  await h.webhooks.enqueue([h.event('export.ready', { modes: [], routes: [], data: { dataset: 'alerts' } })]);
  await h.webhooks.drain();
  const first = h.receiver.requests[0]!;
  const delivery = await h.webhooks.redeliver('key_test', ep.id, String(first.headers['webhook-id']));
  t.equal(delivery.state, 'pending');
  // issue 15: the 202 said pending and listed attempt 1 twice (succeeded, and in flight)
  t.equal(delivery.attempt_count, 0, 'the answer shows the delivery as queued');
  t.same(delivery.attempts, []);
  await h.webhooks.drain();
  const second = h.receiver.requests[1]!;
  t.equal(second.headers['webhook-id'], first.headers['webhook-id']);
  t.equal(second.body, first.body, 'byte-identical body');
  t.same(
    verifyDelivery(ep.secret, second, second.at),
    {
      version: 1,
      id: first.headers['webhook-id'],
      type: 'export.ready',
      timestamp: new Date(h.clock.now()).toISOString(),
      modes: [],
      routes: [],
      lines: [],
      data: { dataset: 'alerts' },
    },
    'the whole envelope, its id the webhook-id',
  );
});

t.test('bus events reach only the endpoints whose filters match', async (t) => {
  const h = await harness(t);
  const bus504 = await h.endpoint('bus504', { modes: ['bus'], routes: ['504'] });
  const rail = await h.endpoint('rail', { modes: ['rail'] });
  const exports = await h.endpoint('exports', { event_types: ['export.ready', 'export.failed'] });
  h.bus.publish(h.event('alert.created', { modes: ['bus'], routes: ['504'] }));
  h.bus.publish(h.event('alert.created', { modes: ['bus'], routes: ['29'] }));
  h.bus.publish(h.event('export.failed', { modes: [], routes: [], data: { dataset: 'realtime' } }));
  await h.receiver.waitFor(4);
  await h.webhooks.drain();
  const got = h.receiver.requests.map((r) => `${r.path} ${JSON.parse(r.body).type}`).sort();
  t.same(got, ['/bus504 alert.created', '/bus504 export.failed', '/exports export.failed', '/rail export.failed']);
  const secrets: Record<string, string> = {
    '/bus504': bus504.secret,
    '/rail': rail.secret,
    '/exports': exports.secret,
  };
  for (const req of h.receiver.requests) t.ok(verifyDelivery(secrets[req.path]!, req, req.at), `${req.path} verifies`);
});

t.test('a delivery read as its verdict lands lists each attempt once', async (t) => {
  const h = await harness(t);
  await h.endpoint();
  await h.webhooks.enqueue([h.event()]);
  await h.webhooks.drain();
  const [row] = (await h.deliveries()) as Array<{ delivery_id: string }>;
  // the state a read straddling a verdict used to combine: the audit row of attempt 1, and the
  // delivery row from before the verdict (in flight on attempt 1)
  await h.db.run(
    `UPDATE webhook_deliveries SET in_flight = true, attempt_started_at = now(), state = 'pending'
    WHERE delivery_id = $1`,
    [row!.delivery_id],
  );
  const delivery = await h.webhooks.getDelivery('key_test', row!.delivery_id);
  t.same(
    delivery.attempts.map((a) => [a.attempt, a.outcome]),
    [[1, 'succeeded']],
    'attempt 1 once, with its verdict',
  );
  const page = await h.webhooks.listDeliveries('key_test', { limit: 10 });
  t.same(
    page.data[0]!.attempts.map((a) => a.attempt),
    [1],
  );
});
