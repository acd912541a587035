// Delivery and retries against a real loopback receiver, with time driven by a manual clock.
import t from 'tap';
import { harness, verifyDelivery, type Reply } from '../test/support/webhooks.ts';

const MIN = 60_000;
const HOUR = 60 * MIN;

/** Answers with the listed statuses in turn, then 204. */
function statuses(...codes: (number | [number, Record<string, string>])[]): Reply {
  let i = 0;
  return (_req, res) => {
    const next = codes[i++];
    if (next === undefined) return void res.writeHead(204).end();
    const [status, headers] = Array.isArray(next) ? next : [next, {}];
    res.writeHead(status, headers).end(status >= 400 ? 'boom' : '');
  };
}

t.test('an event arrives signed, verified by standardwebhooks, and is audited', async (t) => {
  const h = await harness(t);
  const ep = await h.endpoint();
  h.bus.publish(h.event('alert.created', { data: { id: 'a:1', header: 'Detour' } }));
  await h.receiver.waitFor(1);
  await h.webhooks.drain();
  const [req] = h.receiver.requests;
  t.equal(req!.path, '/hook');
  t.equal(req!.headers['content-type'], 'application/json');
  const payload = verifyDelivery(ep.secret, req!, req!.at) as Record<string, unknown>;
  // the envelope (core/event-schemas.ts): Standard Webhooks' {type, timestamp, data} and the event's scope
  t.match(payload, {
    version: 1,
    type: 'alert.created',
    timestamp: new Date(h.clock.now()).toISOString(),
    modes: ['bus'],
    routes: ['504'],
    lines: [],
    data: { id: 'a:1', header: 'Detour' },
  });
  t.equal(req!.headers['webhook-timestamp'], String(Math.floor(h.clock.now() / 1000)));
  t.match(req!.headers['webhook-id'], /^evt_/);
  t.equal(payload.id, req!.headers['webhook-id'], 'webhook-id is the event id');
  const [delivery] = await h.deliveries();
  t.equal(delivery!.state, 'succeeded');
  t.equal(delivery!.message_id, req!.headers['webhook-id']);
  t.equal(delivery!.next_ms, null);
  const [attempt] = await h.attempts();
  t.equal(attempt!.outcome, 'succeeded');
  t.equal(attempt!.status_code, 204);
  t.ok((attempt!.latency_ms as number) >= 0);
  t.equal(attempt!.error, null);
  t.equal(h.webhooks.stats.succeeded, 1);
});

t.test('a failing receiver is retried on the schedule with the same webhook-id', async (t) => {
  const h = await harness(t, statuses(500, 500, 500));
  const ep = await h.endpoint();
  const t0 = h.clock.now();
  await h.webhooks.enqueue([h.event()]);
  await h.webhooks.drain();
  t.equal(h.receiver.requests.length, 1, 'first attempt immediately');
  let [d] = await h.deliveries();
  t.equal(d!.state, 'retrying');
  t.equal(Number(d!.next_ms), t0 + 5_000, 'second attempt after 5 s (jitter source at its midpoint)');
  t.equal(d!.last_status_code, 500);
  h.clock.advance(4_999);
  await h.webhooks.drain();
  t.equal(h.receiver.requests.length, 1, 'not before its time');
  h.clock.advance(1);
  await h.webhooks.drain();
  t.equal(h.receiver.requests.length, 2);
  [d] = await h.deliveries();
  t.equal(Number(d!.next_ms), t0 + 5_000 + 5 * MIN, 'third after 5 min');
  h.clock.advance(5 * MIN);
  await h.webhooks.drain();
  [d] = await h.deliveries();
  t.equal(Number(d!.next_ms), t0 + 5_000 + 35 * MIN, 'fourth after 30 min');
  h.clock.advance(30 * MIN);
  await h.webhooks.drain();
  t.equal(h.receiver.requests.length, 4);
  [d] = await h.deliveries();
  t.equal(d!.state, 'succeeded');
  t.equal(d!.attempt_count, 4);
  const ids = new Set(h.receiver.requests.map((r) => r.headers['webhook-id']));
  t.equal(ids.size, 1, 'one webhook-id across retries');
  for (const req of h.receiver.requests) t.ok(verifyDelivery(ep.secret, req, req.at), 'every attempt verifies');
  const timestamps = h.receiver.requests.map((r) => Number(r.headers['webhook-timestamp']));
  t.same(
    timestamps,
    [t0, t0 + 5e3, t0 + 5e3 + 5 * MIN, t0 + 5e3 + 35 * MIN].map((ms) => Math.floor(ms / 1000)),
    'each attempt is signed at its own time',
  );
  const attempts = await h.attempts();
  t.same(
    attempts.map((a) => a.outcome),
    ['http_error', 'http_error', 'http_error', 'succeeded'],
  );
  t.same(
    attempts.map((a) => a.status_code),
    [500, 500, 500, 204],
  );
  t.equal(attempts[0]!.error, 'HTTP 500: boom');
});

t.test('after the eighth failure the delivery is failed', async (t) => {
  const h = await harness(t, statuses(...new Array(20).fill(500)));
  await h.endpoint();
  await h.webhooks.enqueue([h.event()]);
  await h.webhooks.drain();
  const delays = [5_000, 5 * MIN, 30 * MIN, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR];
  for (const delay of delays) {
    h.clock.advance(delay);
    await h.webhooks.drain();
  }
  t.equal(h.receiver.requests.length, 8);
  const [d] = await h.deliveries();
  t.equal(d!.state, 'failed');
  t.equal(d!.attempt_count, 8);
  t.equal(d!.next_ms, null);
  h.clock.advance(24 * HOUR);
  await h.webhooks.drain();
  t.equal(h.receiver.requests.length, 8, 'nothing after failed');
  t.equal((await h.attempts()).length, 8, 'every attempt audited');
});

t.test('a receiver that never answers times out after timeout_ms', async (t) => {
  let answer = false;
  const h = await harness(t, (_req, res) => {
    if (answer) res.writeHead(200).end('ok');
  });
  const ep = await h.endpoint();
  await h.webhooks.enqueue([h.event()]);
  const drained = h.webhooks.drain();
  await h.receiver.waitFor(1);
  h.clock.advance(14_999);
  const [running] = (await h.webhooks.listDeliveries('key_test', { limit: 1 })).data;
  t.same(
    running!.attempts.map((a) => a.outcome),
    ['in_flight'],
    'still waiting just before the timeout',
  );
  t.equal((await h.attempts()).length, 0, 'its audit row is written with the verdict');
  h.clock.advance(1);
  await drained;
  let [attempt] = await h.attempts();
  t.equal(attempt!.outcome, 'timeout');
  t.equal(attempt!.status_code, null);
  t.equal(attempt!.error, 'no complete response within 15000 ms');
  answer = true;
  h.clock.advance(5_000);
  await h.webhooks.drain();
  const [d] = await h.deliveries();
  t.equal(d!.state, 'succeeded');
  t.equal(h.receiver.requests[0]!.headers['webhook-id'], h.receiver.requests[1]!.headers['webhook-id']);
  t.ok(verifyDelivery(ep.secret, h.receiver.requests[1]!, h.receiver.requests[1]!.at));
  [, attempt] = await h.attempts();
  t.equal(attempt!.status_code, 200);
});

t.test('410 Gone disables the endpoint and fails what it had queued', async (t) => {
  const h = await harness(t, statuses(410), { config: { max_concurrency_per_endpoint: 1 } });
  const gone = await h.endpoint('gone');
  await h.webhooks.enqueue([h.event(), h.event('alert.updated')]);
  await h.webhooks.drain();
  t.equal(h.receiver.requests.length, 1, 'the queued second delivery is never sent');
  const ds = await h.deliveries();
  t.same(
    ds.map((d) => d.state),
    ['failed', 'failed'],
  );
  t.equal(ds[0]!.last_status_code, 410);
  t.equal(ds[1]!.last_error, 'endpoint disabled (gone)');
  const ep = await h.webhooks.getEndpoint('key_test', gone.id);
  t.equal(ep.enabled, false);
  t.equal(ep.disabled_reason, 'gone');
  t.equal(ep.disabled_at, new Date(h.clock.now()).toISOString());
  await h.webhooks.enqueue([h.event()]);
  t.equal((await h.deliveries()).length, 2, 'a disabled endpoint gets no new deliveries');
});

t.test('429 and 503 honour Retry-After', async (t) => {
  const h = await harness(t, statuses([429, { 'retry-after': '120' }], [503, { 'retry-after': '3600' }]));
  const ep = await h.endpoint();
  const t0 = h.clock.now();
  await h.webhooks.enqueue([h.event()]);
  await h.webhooks.drain();
  let [d] = await h.deliveries();
  t.equal(Number(d!.next_ms), t0 + 120_000, '120 s, not the scheduled 5 s');
  h.clock.advance(5_000);
  await h.webhooks.drain();
  t.equal(h.receiver.requests.length, 1, 'the 5 s retry does not happen');
  h.clock.advance(115_000);
  await h.webhooks.drain();
  t.equal(h.receiver.requests.length, 2);
  [d] = await h.deliveries();
  t.equal(Number(d!.next_ms), t0 + 120_000 + 3_600_000, 'the 503 asked for an hour, longer than the 5 min step');
  h.clock.advance(3_600_000);
  await h.webhooks.drain();
  [d] = await h.deliveries();
  t.equal(d!.state, 'succeeded');
  t.same(
    (await h.attempts()).map((a) => a.status_code),
    [429, 503, 204],
  );
  for (const req of h.receiver.requests) t.ok(verifyDelivery(ep.secret, req, req.at));
});

t.test('an endpoint failing for 5 days is disabled; a success resets the clock', async (t) => {
  let healthy = false;
  const h = await harness(t, (_req, res) => res.writeHead(healthy ? 200 : 500).end());
  const ep = await h.endpoint();
  const day = 24 * HOUR;
  await h.webhooks.enqueue([h.event()]);
  await h.webhooks.drain();
  const since = (await h.webhooks.getEndpoint('key_test', ep.id)).failing_since;
  t.equal(since, new Date(h.clock.now()).toISOString());
  for (let n = 1; n <= 4; n++) {
    h.clock.advance(day);
    await h.webhooks.enqueue([h.event()]);
    await h.webhooks.drain();
  }
  t.equal((await h.webhooks.getEndpoint('key_test', ep.id)).enabled, true, 'four days: still enabled');
  h.clock.advance(day);
  await h.webhooks.enqueue([h.event()]);
  await h.webhooks.drain();
  const off = await h.webhooks.getEndpoint('key_test', ep.id);
  t.equal(off.enabled, false, 'five days: disabled');
  t.equal(off.disabled_reason, 'failing');
  const open = (await h.deliveries()).filter((d) => d.state === 'pending' || d.state === 'retrying');
  t.same(open, [], 'nothing left queued');

  // re-enabled, a success clears the failure clock
  await h.webhooks.updateEndpoint('key_test', ep.id, { enabled: true });
  healthy = true;
  await h.webhooks.enqueue([h.event()]);
  await h.webhooks.drain();
  t.equal((await h.webhooks.getEndpoint('key_test', ep.id)).failing_since, null);
});
