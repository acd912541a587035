import t from 'tap';
import { Db } from '../store/db.ts';
import { InMemoryEventBus, type DomainEvent } from '../core/events.ts';
import { createEndpoint } from './endpoints.ts';
import { Outbox, enqueueEvents, matchesFilters, payloadOf } from './outbox.ts';
import { DEFAULT_EVENT_TYPES } from './schemas.ts';
import { rawEvent } from '../test/support/events.ts';
import { webhookSecrets } from '../test/support/webhooks.ts';

const at = Date.parse('2026-03-01T10:00:00Z');
const ev = (type: DomainEvent['type'], modes: DomainEvent['modes'], routes: string[]): DomainEvent =>
  rawEvent(type, { at_ms: at, modes, routes, data: { n: 1 } });

t.test('filters: every given dimension must match; service-wide events pass mode and route filters', async (t) => {
  const alert504 = ev('alert.created', ['bus'], ['504']);
  const railRed = ev('alert.updated', ['rail'], ['RED']);
  const exportReady = ev('export.ready', [], []);
  const feedStale = ev('feed.stale', ['bus'], []);
  t.ok(matchesFilters({}, alert504));
  t.ok(matchesFilters({ modes: ['bus'] }, alert504));
  t.notOk(matchesFilters({ modes: ['rail'] }, alert504));
  t.ok(matchesFilters({ routes: ['504', '29'] }, alert504));
  t.notOk(matchesFilters({ routes: ['29'] }, alert504));
  t.ok(matchesFilters({ lines: ['RED'] }, railRed));
  t.ok(matchesFilters({ routes: ['504'], lines: ['RED'] }, railRed), 'routes and lines are one dimension');
  t.notOk(matchesFilters({ modes: ['rail'], lines: ['BLUE'] }, railRed));
  t.ok(matchesFilters({ routes: ['504'] }, feedStale), 'a feed-wide event passes a route filter');
  t.notOk(matchesFilters({ modes: ['rail'] }, feedStale));
  t.ok(matchesFilters({ modes: ['rail'], routes: ['RED'] }, exportReady), 'exports concern no mode or route');
  t.notOk(matchesFilters({ event_types: ['alert.created'] }, exportReady));
  t.ok(matchesFilters({ event_types: ['export.ready'] }, exportReady));
  // the per-vehicle firehose only when named
  t.notOk(matchesFilters({}, ev('vehicle.position', ['bus'], ['504'])));
  t.ok(matchesFilters({ event_types: ['vehicle.position'] }, ev('vehicle.position', ['bus'], ['504'])));
  t.notOk(DEFAULT_EVENT_TYPES.includes('arrival.updated'));
});

t.test("the payload is the event envelope, holding Standard Webhooks' {type, timestamp, data}", async (t) => {
  const event = { ...ev('trip.canceled', ['bus'], ['7']), id: 'evt_1' };
  t.equal(
    payloadOf(event),
    '{"version":1,"id":"evt_1","type":"trip.canceled","timestamp":"2026-03-01T10:00:00.000Z","modes":["bus"],' +
      '"routes":["7"],"lines":[],"data":{"n":1}}',
  );
});

t.test('matched events are stored as a message plus one pending delivery per endpoint', async (t) => {
  const db = await Db.open(':memory:');
  t.teardown(() => db.close());
  const deps = { policy: { allow: new Set(['loopback'] as const) }, now: () => at, secrets: webhookSecrets };
  const a = await createEndpoint(db, 'k1', { url: 'http://127.0.0.1:1/a', filters: {} }, deps);
  const b = await createEndpoint(db, 'k2', { url: 'http://127.0.0.1:1/b', filters: { modes: ['rail'] } }, deps);
  const result = await enqueueEvents(
    db,
    [
      ev('alert.created', ['bus'], ['1']),
      ev('alert.created', ['rail'], ['RED']),
      ev('vehicle.position', ['bus'], ['1']),
    ],
    at + 5,
  );
  t.same(result, { messages: 2, deliveries: 3, rejected: 0 });
  const rows = await db.all<Record<string, unknown>>(
    `SELECT d.endpoint_id, d.key_id, d.state, d.attempt_count, d.in_flight, epoch_ms(d.next_attempt_at) AS next_ms,
       m.event_type, epoch_ms(m.occurred_at) AS occurred_ms, m.body
     FROM webhook_deliveries d JOIN webhook_messages m USING (message_id) ORDER BY d.seq`,
  );
  t.same(rows.map((r) => `${r.endpoint_id} ${r.key_id}`).sort(), [`${a.id} k1`, `${a.id} k1`, `${b.id} k2`].sort());
  t.ok(rows.every((r) => r.state === 'pending' && r.attempt_count === 0 && r.in_flight === false));
  t.ok(
    rows.every((r) => Number(r.next_ms) === at + 5),
    'due at once',
  );
  t.ok(rows.every((r) => Number(r.occurred_ms) === at));
  t.same(await enqueueEvents(db, [], at), { messages: 0, deliveries: 0, rejected: 0 });
  t.same(await enqueueEvents(db, [ev('arrival.updated', ['rail'], ['RED'])], at), {
    messages: 0,
    deliveries: 0,
    rejected: 0,
  });
  const bad = rawEvent('alert.created', { at_ms: at, modes: ['bus'], routes: ['1'], data: { n: 1n } });
  const rejectedEvents: unknown[] = [];
  t.same(
    await enqueueEvents(db, [bad, ev('alert.created', ['bus'], ['1'])], at, undefined, (e) => rejectedEvents.push(e)),
    { messages: 1, deliveries: 1, rejected: 1 },
    'a bad event is dropped, its batch mates stored',
  );
  t.same(rejectedEvents, [bad]);
});

t.test('the bus subscription stores batches in order and counts failures', async (t) => {
  const db = await Db.open(':memory:');
  const bus = new InMemoryEventBus();
  const stored: number[] = [];
  const errors: unknown[] = [];
  const outbox = new Outbox({
    db,
    bus,
    now: () => at,
    onStored: (r) => stored.push(r.deliveries),
    onError: (e) => errors.push(e),
  });
  outbox.start();
  outbox.start();
  await createEndpoint(
    db,
    'k',
    { url: 'http://127.0.0.1:1/', filters: {} },
    { policy: { allow: new Set(['loopback']) }, secrets: webhookSecrets },
  );
  bus.publish(ev('alert.created', ['bus'], ['1']));
  bus.publish(ev('alert.resolved', ['bus'], ['1']));
  await new Promise((r) => setImmediate(r));
  await outbox.stop();
  t.same(stored, [2], 'one batch per tick');
  bus.publish(ev('alert.created', ['bus'], ['1']));
  await new Promise((r) => setImmediate(r));
  t.same(stored, [2], 'nothing after stop');
  await db.close();
  await outbox.enqueue([ev('alert.created', ['bus'], ['1'])]);
  t.equal(outbox.failedBatches, 1);
  t.match(String(errors[0]), /closed/);
});
