// The webhook API end to end: the real server on a loopback port, the webhooks component on the
// same database, a node:http receiver, and every delivery verified by the standardwebhooks package.
// Every response is checked against the generated OpenAPI document.
import t, { type Test } from 'tap';
import { InMemoryEventBus, type DomainEvent, type EventType } from '../core/events.ts';
import { webhookRoutes } from '../http/routes/webhooks.ts';
import { createWebhooks, type Webhooks } from '../webhooks/index.ts';
import { startReceiver, verifyDelivery, type Receiver, type Reply } from './support/webhooks.ts';
import { checker, expectProblem, loadValidator } from './support/client.ts';
import { bearer, startHarness, type Harness } from './support/harness.ts';
import type { OpenApiValidator } from './support/openapi-validator.ts';
import { rawEvent, type RawEventFields } from './support/events.ts';

const BASE = '/api/v1/webhooks';

interface Server {
  h: Harness;
  bus: InMemoryEventBus;
  webhooks: Webhooks;
  validator: OpenApiValidator;
}

async function webhookServer(t: Test, allowPrivate: boolean): Promise<Server> {
  const bus = new InMemoryEventBus();
  const made: { webhooks?: Webhooks } = {};
  const h = await startHarness({
    config: { webhooks: { allow_private_targets: allowPrivate } },
    routes: ({ db, config }) => {
      made.webhooks = createWebhooks({
        db,
        bus,
        config,
        stopGraceMs: 200,
        onError: (err) => t.fail(`webhooks: ${String(err)}`),
      });
      return webhookRoutes(made.webhooks);
    },
  });
  const webhooks = made.webhooks!;
  await webhooks.start();
  t.teardown(async () => {
    await webhooks.stop();
    await h.close();
  });
  return { h, bus, webhooks, validator: await loadValidator(h) };
}

async function receiver(t: Test, reply?: Reply): Promise<Receiver> {
  const rx = await startReceiver(reply);
  t.teardown(() => rx.close());
  return rx;
}

function event(type: EventType, id: string, extra: RawEventFields = {}): DomainEvent {
  return rawEvent(type, { modes: ['bus'], routes: ['39'], data: { id }, ...extra });
}

t.test('webhook API with loopback targets allowed', async (t) => {
  const s = await webhookServer(t, true);
  const { h, bus, webhooks } = s;
  const rx = await receiver(t);
  const a = bearer(await h.key('regular'));
  const b = bearer(await h.key('regular'));
  const free = bearer(await h.key('free'));
  let endpoint = { id: '', secret: '', oldSecret: '' };

  await t.test('register: 201, the secret shown once', async (t) => {
    const call = checker(t, h, s.validator);
    const created = await call(`${BASE}/endpoints`, a, 'POST', {
      url: `${rx.url}/a`,
      description: 'ops',
      filters: { modes: ['bus'], event_types: ['alert.created', 'alert.updated'] },
    });
    t.equal(created.status, 201);
    t.match(created.json.secret, /^whsec_[A-Za-z0-9+/=]+$/);
    t.equal(created.headers.get('location'), `${BASE}/endpoints/${created.json.id}`);
    t.equal(created.headers.get('cache-control'), 'no-store');
    t.equal(created.headers.get('x-meter-unit'), 'request');
    t.same(created.json.filters, { modes: ['bus'], event_types: ['alert.created', 'alert.updated'] });
    endpoint = { id: created.json.id, secret: created.json.secret, oldSecret: '' };

    const got = await call(`${BASE}/endpoints/${endpoint.id}`, a);
    t.equal(got.status, 200);
    t.notOk('secret' in got.json, 'get never shows the secret');
    t.equal(got.json.url, `${rx.url}/a`);
    const listed = await call(`${BASE}/endpoints`, a);
    t.same(
      listed.json.data.map((e: { id: string }) => e.id),
      [endpoint.id],
    );
    t.notOk('secret' in listed.json.data[0], 'the list never shows the secret');
    t.equal((await call(`${BASE}/endpoints`)).status, 401, 'a key is required');
  });

  await t.test('invalid bodies and parameters are 400 naming the field', async (t) => {
    const call = checker(t, h, s.validator);
    expectProblem(
      t,
      await call(`${BASE}/endpoints`, a, 'POST', { url: 'ftp://example.com/x' }),
      400,
      'invalid_body',
      'url',
    );
    expectProblem(t, await call(`${BASE}/endpoints`, a, 'POST', { description: 'no url' }), 400, 'invalid_body', 'url');
    expectProblem(
      t,
      await call(`${BASE}/endpoints`, a, 'POST', { url: rx.url, filters: { modes: ['plane'] } }),
      400,
      'invalid_body',
      'filters.modes.0',
    );
    expectProblem(
      t,
      await call(`${BASE}/endpoints`, a, 'POST', { url: rx.url, colour: 'red' }),
      400,
      'invalid_body',
      'colour',
    );
    expectProblem(
      t,
      await call(`${BASE}/endpoints`, { ...a, 'content-type': 'application/json' }, 'POST', '{"url":'),
      400,
      'invalid_body',
    );
    expectProblem(t, await call(`${BASE}/endpoints`, a, 'POST', `{"url":"${rx.url}"}`), 415, 'unsupported_media_type');
    expectProblem(t, await call(`${BASE}/endpoints/${endpoint.id}`, a, 'PATCH', {}), 400, 'invalid_body', '(body)');
    expectProblem(
      t,
      await call(`${BASE}/endpoints/${endpoint.id}/redeliver`, a, 'POST', {}),
      400,
      'invalid_body',
      'message_id',
    );
    expectProblem(t, await call(`${BASE}/deliveries?state=lost`, a), 400, 'invalid_parameter', 'state');
    expectProblem(t, await call(`${BASE}/deliveries?colour=red`, a), 400, 'invalid_parameter', 'colour');
    expectProblem(t, await call(`${BASE}/deliveries?limit=0`, a), 400, 'invalid_parameter', 'limit');
    // allowing private networks never opens the cloud metadata service
    const metadata = await call(`${BASE}/endpoints`, a, 'POST', { url: 'http://169.254.169.254/latest/meta-data/' });
    expectProblem(t, metadata, 400, 'unsafe_target', 'url');
    t.match(metadata.json.detail, /metadata/);
    t.equal((await call(`${BASE}/endpoints`, a)).json.data.length, 1, 'nothing refused was stored');
  });

  await t.test('an event published on the bus reaches the receiver, signed', async (t) => {
    // same tick: the rail alert does not match the endpoint's mode filter, the bus one does
    bus.publish(event('alert.created', 'rail-1', { modes: ['rail'], lines: ['Red'] }));
    bus.publish(event('alert.created', 'bus-1'));
    bus.publish(event('alert.updated', 'bus-1'));
    await rx.waitFor(2);
    await webhooks.drain();
    t.equal(rx.requests.length, 2, 'the filtered event was not sent');
    for (const req of rx.requests) {
      const payload = verifyDelivery(endpoint.secret, req) as { type: string; data: { id: string } };
      t.equal(payload.data.id, 'bus-1', 'verified by standardwebhooks');
      t.match(req.headers['webhook-id'], /\S/);
    }
    t.same(rx.requests.map((r) => (JSON.parse(r.body) as { type: string }).type).sort(), [
      'alert.created',
      'alert.updated',
    ]);
  });

  await t.test('deliveries: attempts, one delivery, filters', async (t) => {
    const call = checker(t, h, s.validator);
    const list = await call(`${BASE}/deliveries`, a);
    t.equal(list.status, 200);
    t.equal(list.json.data.length, 2);
    t.equal(list.json.meta.limit, 20);
    t.equal(list.json.meta.next_cursor, null);
    t.equal(list.json.links.next, null);
    t.equal(list.json.links.self, `${BASE}/deliveries`);
    const ids = new Set(rx.requests.map((r) => r.headers['webhook-id']));
    for (const d of list.json.data) {
      t.equal(d.state, 'succeeded');
      t.equal(d.endpoint_id, endpoint.id);
      t.ok(ids.has(d.message_id), 'message_id is the webhook-id received');
      t.equal(d.attempts.length, 1);
      t.match(d.attempts[0], { attempt: 1, outcome: 'succeeded', status_code: 204, error: null });
      t.type(d.attempts[0].latency_ms, 'number');
    }
    const one = await call(`${BASE}/deliveries/${list.json.data[0].id}`, a);
    t.same(one.json, list.json.data[0]);
    t.equal((await call(`${BASE}/deliveries?endpoint_id=${endpoint.id}`, a)).json.data.length, 2);
    const updated = await call(`${BASE}/deliveries?event_type=alert.updated`, a);
    t.same(
      updated.json.data.map((d: { event_type: string }) => d.event_type),
      ['alert.updated'],
    );
    t.equal((await call(`${BASE}/deliveries?state=failed`, a)).json.data.length, 0);
  });

  await t.test('rotate-secret: both signatures during the overlap', async (t) => {
    const call = checker(t, h, s.validator);
    const rotated = await call(`${BASE}/endpoints/${endpoint.id}/rotate-secret`, a, 'POST');
    t.equal(rotated.status, 200);
    t.match(rotated.json.secret, /^whsec_/);
    t.not(rotated.json.secret, endpoint.secret);
    t.equal(rotated.headers.get('cache-control'), 'no-store');
    t.ok(Date.parse(rotated.json.previous_secret_expires_at) > Date.now(), 'the old secret still signs for a while');
    endpoint = { ...endpoint, oldSecret: endpoint.secret, secret: rotated.json.secret };
    bus.publish(event('alert.created', 'bus-2'));
    await rx.waitFor(3);
    const req = rx.requests[2]!;
    t.equal(String(req.headers['webhook-signature']).split(' ').length, 2, 'two signatures');
    t.match(verifyDelivery(endpoint.secret, req), { data: { id: 'bus-2' } }, 'the new secret verifies');
    t.match(verifyDelivery(endpoint.oldSecret, req), { data: { id: 'bus-2' } }, 'the old secret verifies');
    await webhooks.drain();
  });

  await t.test('redeliver: the same webhook-id again', async (t) => {
    const call = checker(t, h, s.validator);
    const first = rx.requests[0]!;
    const messageId = String(first.headers['webhook-id']);
    const queued = await call(`${BASE}/endpoints/${endpoint.id}/redeliver`, a, 'POST', { message_id: messageId });
    t.equal(queued.status, 202);
    t.equal(queued.json.message_id, messageId);
    t.equal(queued.json.endpoint_id, endpoint.id);
    t.equal(queued.json.state, 'pending');
    const numbers = (queued.json.attempts as Array<{ attempt: number }>).map((x) => x.attempt);
    t.same(numbers, [...new Set(numbers)], 'no attempt listed twice (issue 15)');
    await rx.waitFor(4);
    const again = rx.requests[3]!;
    t.equal(again.headers['webhook-id'], messageId);
    t.equal(again.body, first.body, 'the same body');
    t.ok(verifyDelivery(endpoint.secret, again));
    await webhooks.drain();
    const done = await call(`${BASE}/deliveries/${queued.json.id}`, a);
    t.equal(done.json.state, 'succeeded');
    expectProblem(
      t,
      await call(`${BASE}/endpoints/${endpoint.id}/redeliver`, a, 'POST', { message_id: 'msg_never' }),
      404,
      'not_found',
    );
  });

  await t.test('failures: 410 disables the endpoint, 503 with Retry-After waits', async (t) => {
    const call = checker(t, h, s.validator);
    const gone = await receiver(t, (_req, res) => void res.writeHead(410).end());
    const busy = await receiver(t, (_req, res) => void res.writeHead(503, { 'Retry-After': '3600' }).end());
    const only = { event_types: ['feed.stale'] };
    const goneEp = (await call(`${BASE}/endpoints`, a, 'POST', { url: `${gone.url}/g`, filters: only })).json;
    const busyEp = (await call(`${BASE}/endpoints`, a, 'POST', { url: `${busy.url}/b`, filters: only })).json;
    // feed.stale is outside the first endpoint's event types
    bus.publish(event('feed.stale', 'mbta-vehicles', { modes: [], routes: [] }));
    await gone.waitFor(1);
    await busy.waitFor(1);
    await webhooks.drain();
    t.ok(verifyDelivery(goneEp.secret, gone.requests[0]!), 'the 410 receiver got a valid delivery');
    const failed = await call(`${BASE}/deliveries?state=failed`, a);
    t.equal(failed.json.data.length, 1);
    t.match(failed.json.data[0], {
      endpoint_id: goneEp.id,
      event_type: 'feed.stale',
      last_status_code: 410,
      next_attempt_at: null,
    });
    t.match(failed.json.data[0].attempts, [{ outcome: 'gone', status_code: 410 }]);
    t.match((await call(`${BASE}/endpoints/${goneEp.id}`, a)).json, { enabled: false, disabled_reason: 'gone' });
    const retrying = await call(`${BASE}/deliveries?state=retrying`, a);
    t.equal(retrying.json.data.length, 1);
    t.match(retrying.json.data[0], { endpoint_id: busyEp.id, last_status_code: 503 });
    t.ok(Date.parse(retrying.json.data[0].next_attempt_at) > Date.now() + 3000_000, 'Retry-After honoured');
    t.equal((await call(`${BASE}/deliveries?event_type=feed.stale`, a)).json.data.length, 2);
    t.equal(rx.requests.length, 4, 'the filtered endpoint got nothing');
  });

  await t.test('pagination: keyset cursor walked to the end', async (t) => {
    const call = checker(t, h, s.validator);
    for (let i = 0; i < 5; i++) bus.publish(event('alert.created', `bus-page-${i}`));
    await rx.waitFor(9);
    await webhooks.drain();
    const all = (await call(`${BASE}/deliveries?limit=100`, a)).json.data.map((d: { id: string }) => d.id) as string[];
    t.equal(all.length, 11);
    const walk = async (first: string, insertDuring = false): Promise<{ seen: string[]; pages: number }> => {
      const seen: string[] = [];
      let next: string | null = first;
      let pages = 0;
      while (next) {
        const page = await call(next, a);
        t.equal(page.status, 200);
        seen.push(...page.json.data.map((d: { id: string }) => d.id));
        t.equal(page.json.meta.next_cursor === null, page.json.links.next === null);
        next = page.json.links.next;
        pages++;
        if (insertDuring && pages === 1) bus.publish(event('alert.created', `bus-during-walk-${seen.length}`));
      }
      return { seen, pages };
    };
    const { seen, pages } = await walk(`${BASE}/deliveries?limit=3`, true);
    t.equal(pages, 4);
    t.same(seen, all, 'newest first, no duplicates, no gaps, rows added during the walk do not shift it');
    await rx.waitFor(10);
    await webhooks.drain();
    const filtered = await walk(`${BASE}/deliveries?endpoint_id=${endpoint.id}&state=succeeded&limit=2`);
    t.equal(filtered.seen.length, 10, 'every succeeded delivery of the endpoint');

    const firstPage = await call(`${BASE}/deliveries?limit=2`, a);
    const cursor = firstPage.json.meta.next_cursor as string;
    expectProblem(
      t,
      await call(`${BASE}/deliveries?limit=2&state=failed&cursor=${encodeURIComponent(cursor)}`, a),
      400,
      'invalid_cursor',
      'cursor',
    );
    const tampered = `${cursor.slice(0, 4)}${cursor[4] === 'A' ? 'B' : 'A'}${cursor.slice(5)}`;
    expectProblem(
      t,
      await call(`${BASE}/deliveries?limit=2&cursor=${encodeURIComponent(tampered)}`, a),
      400,
      'invalid_cursor',
      'cursor',
    );
    expectProblem(
      t,
      await call(`${BASE}/deliveries?limit=2&cursor=${encodeURIComponent(cursor)}`, b),
      400,
      'invalid_cursor',
      'cursor',
    );
    expectProblem(t, await call(`${BASE}/deliveries?limit=101`, a), 400, 'limit_exceeds_plan', 'limit');
    expectProblem(t, await call(`${BASE}/deliveries?limit=21`, free), 400, 'limit_exceeds_plan', 'limit');
    t.equal((await call(`${BASE}/deliveries?limit=20`, free)).status, 200);
  });

  await t.test('another key can neither see nor touch the endpoint', async (t) => {
    const call = checker(t, h, s.validator);
    const before = (await call(`${BASE}/endpoints/${endpoint.id}`, a)).json;
    const delivery = (await call(`${BASE}/deliveries?limit=1`, a)).json.data[0];
    const ep = `${BASE}/endpoints/${endpoint.id}`;
    t.same((await call(`${BASE}/endpoints`, b)).json.data, []);
    expectProblem(t, await call(ep, b), 404, 'not_found');
    expectProblem(t, await call(ep, b, 'PATCH', { description: 'mine now' }), 404, 'not_found');
    expectProblem(t, await call(`${ep}/disable`, b, 'POST'), 404, 'not_found');
    expectProblem(t, await call(`${ep}/rotate-secret`, b, 'POST'), 404, 'not_found');
    expectProblem(t, await call(`${ep}/redeliver`, b, 'POST', { message_id: delivery.message_id }), 404, 'not_found');
    expectProblem(t, await call(ep, b, 'DELETE'), 404, 'not_found');
    expectProblem(t, await call(`${BASE}/deliveries/${delivery.id}`, b), 404, 'not_found');
    t.same((await call(`${BASE}/deliveries`, b)).json.data, []);
    t.same((await call(`${BASE}/deliveries?endpoint_id=${endpoint.id}`, b)).json.data, []);
    t.same((await call(ep, a)).json, before, 'unchanged for its owner');
  });

  await t.test('update, disable, enable, delete; unknown ids are 404', async (t) => {
    const call = checker(t, h, s.validator);
    const ep = `${BASE}/endpoints/${endpoint.id}`;
    const patched = await call(ep, a, 'PATCH', {
      description: 'changed',
      filters: { modes: ['rail'], lines: ['Red'] },
    });
    t.equal(patched.status, 200);
    t.match(patched.json, { description: 'changed', filters: { modes: ['rail'], lines: ['Red'] } });
    t.equal(
      (await call(ep, a, 'PATCH', { url: 'http://10.0.0.1/hook' })).json.url,
      'http://10.0.0.1/hook',
      'private targets allowed here',
    );
    expectProblem(t, await call(ep, a, 'PATCH', { url: 'http://169.254.169.254/' }), 400, 'unsafe_target', 'url');
    t.equal((await call(ep, a, 'PATCH', { url: `${rx.url}/a` })).json.url, `${rx.url}/a`);

    const disabled = await call(`${ep}/disable`, a, 'POST');
    t.match(disabled.json, { enabled: false, disabled_reason: 'user' });
    t.ok(disabled.json.disabled_at);
    const message = String(rx.requests[0]!.headers['webhook-id']);
    expectProblem(t, await call(`${ep}/redeliver`, a, 'POST', { message_id: message }), 409, 'conflict');
    t.match((await call(ep, a, 'PATCH', { enabled: true })).json, {
      enabled: true,
      disabled_reason: null,
      disabled_at: null,
    });

    const deleted = await call(ep, a, 'DELETE');
    t.equal(deleted.status, 200);
    t.same(deleted.json, { id: endpoint.id, deleted: true });
    expectProblem(t, await call(ep, a), 404, 'not_found');
    expectProblem(t, await call(ep, a, 'DELETE'), 404, 'not_found');
    t.notOk((await call(`${BASE}/endpoints`, a)).json.data.some((e: { id: string }) => e.id === endpoint.id));
    t.equal(
      (await call(`${BASE}/deliveries?endpoint_id=${endpoint.id}`, a)).json.data.length,
      10,
      'the audit outlives the endpoint',
    );

    expectProblem(t, await call(`${BASE}/endpoints/ep_unknown`, a), 404, 'not_found');
    expectProblem(t, await call(`${BASE}/endpoints/ep_unknown/rotate-secret`, a, 'POST'), 404, 'not_found');
    expectProblem(t, await call(`${BASE}/deliveries/dlv_unknown`, a), 404, 'not_found');
  });

  await t.test('hostile input never reaches a 5xx', async (t) => {
    const call = checker(t, h, s.validator);
    const deep = JSON.parse(`${'{"a":'.repeat(200)}1${'}'.repeat(200)}`) as unknown;
    const bodies: unknown[] = [
      null,
      [],
      'just text',
      42,
      { url: null },
      { url: ['http://x/'] },
      { url: 'x'.repeat(5000) },
      { url: 'http://user:pw@example.com/' },
      { url: 'javascript:alert(1)' },
      { url: rx.url, filters: null },
      { url: rx.url, filters: { routes: [''] } },
      { url: rx.url, filters: { event_types: ['alert.*'] } },
      { url: rx.url, description: 'd'.repeat(501) },
      JSON.parse('{"__proto__":{"admin":true},"url":1}'),
      { url: rx.url, filters: deep },
    ];
    for (const body of bodies) {
      const got = await call(
        `${BASE}/endpoints`,
        { ...a, 'content-type': 'application/json' },
        'POST',
        JSON.stringify(body),
      );
      t.equal(got.status, 400, `POST ${JSON.stringify(body).slice(0, 60)} → 400 ${got.json?.code}`);
    }
    for (const id of ['%00', '%E0%A4%A', 'a%2Fb', '..', 'x'.repeat(300), '%F0%9F%92%A9']) {
      const got = await call(`${BASE}/endpoints/${id}`, a);
      t.ok(got.status === 400 || got.status === 404, `GET endpoints/${id.slice(0, 20)} → ${got.status}`);
    }
    t.same(h.errors, [], 'nothing was logged as an internal error');
  });

  await t.test('metered as API requests', async (t) => {
    const call = checker(t, h, s.validator);
    const first = await call(`${BASE}/endpoints`, a);
    const second = await call(`${BASE}/deliveries?limit=1`, a);
    t.equal(first.headers.get('x-meter-unit'), 'request');
    t.equal(second.headers.get('x-meter-unit'), 'request');
    t.equal(
      Number(second.headers.get('x-ratelimit-remaining')),
      Number(first.headers.get('x-ratelimit-remaining')) - 1,
    );
  });
});

t.test('SSRF through the API: private targets refused when not allowed', async (t) => {
  const s = await webhookServer(t, false);
  const call = checker(t, s.h, s.validator);
  const key = bearer(await s.h.key('regular'));
  const refused: Array<[string, RegExp]> = [
    ['http://127.0.0.1:8080/hook', /loopback/],
    ['http://10.0.0.1/hook', /private network/],
    ['http://169.254.169.254/latest/meta-data/', /metadata/],
    ['http://localhost:8080/hook', /localhost resolves to 127\.0\.0\.1.*loopback|loopback.*localhost/],
    ['http://[::1]:8080/hook', /loopback/],
    ['https://[::ffff:10.1.2.3]/hook', /private network/],
  ];
  for (const [url, why] of refused) {
    const got = await call(`${BASE}/endpoints`, key, 'POST', { url });
    expectProblem(t, got, 400, 'unsafe_target', 'url');
    t.match(got.json.detail, why, `${url}: ${got.json.detail}`);
    t.match(got.json.detail, /webhook targets must be public/);
  }
  // a public literal needs no DNS and is never contacted here: no event is published
  const created = await call(`${BASE}/endpoints`, key, 'POST', { url: 'https://93.184.216.34/hook' });
  t.equal(created.status, 201);
  expectProblem(
    t,
    await call(`${BASE}/endpoints/${created.json.id}`, key, 'PATCH', { url: 'http://[::1]/hook' }),
    400,
    'unsafe_target',
    'url',
  );
  t.equal(
    (await call(`${BASE}/endpoints/${created.json.id}`, key)).json.url,
    'https://93.184.216.34/hook',
    'unchanged',
  );
  t.same(
    (await call(`${BASE}/endpoints`, key)).json.data.map((e: { id: string }) => e.id),
    [created.json.id],
    'nothing refused was stored',
  );
});
