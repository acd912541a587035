import t from 'tap';
import { until } from '../test/support/wait.ts';
import { InMemoryEventBus, type DomainEvent } from '../core/events.ts';
import type { StoredEvent } from '../stream/event-log.ts';
import { brokerMissing, startBroker } from '../test/support/broker-servers.ts';
import { BrokerEventLog, BrokerEventPublisher } from './event-log.ts';
import { Broker, type BrokerOptions } from './redis.ts';
import { captureLogs } from '../test/support/logs.ts';
import { rawEvent } from '../test/support/events.ts';

const missing = brokerMissing('redis');
const logs = captureLogs('warn');
const open = (options: BrokerOptions) => new Broker({ log: logs.logger, ...options });

function event(n: number): DomainEvent {
  return rawEvent('vehicle.position', { at_ms: 1_700_000_000_000 + n, modes: ['bus'], routes: ['7'], data: { n } });
}

const ids = (list: StoredEvent[] | 'too_old') => (list === 'too_old' ? list : list.map((e) => e.id));
const ns = (list: StoredEvent[] | 'too_old') =>
  list === 'too_old' ? list : list.map((e) => (JSON.parse(e.payload) as { data: { n: number } }).data.n);

t.test(
  'one dense id sequence for every node; resume on another node with no gap or duplicate',
  { skip: missing },
  async (t) => {
    const server = await startBroker('redis');
    t.teardown(() => server.close());
    const ingest = await open({ url: server.url, prefix: 't1:' });
    const edgeA = await open({ url: server.url, prefix: 't1:' });
    const edgeB = await open({ url: server.url, prefix: 't1:' });
    t.teardown(async () => {
      await ingest.close();
      await edgeA.close();
      await edgeB.close();
    });
    const bounds = { capacity: 50, maxBytes: 1 << 20, maxAgeMs: 3_600_000, blockMs: 200 };
    const bus = new InMemoryEventBus();
    const publisher = new BrokerEventPublisher(ingest, bounds);
    publisher.attach(bus);
    const seenA: StoredEvent[] = [];
    const a = (await BrokerEventLog.open(edgeA, { ...bounds, onEvents: (e) => seenA.push(...e) })).start();
    const b = (await BrokerEventLog.open(edgeB, bounds)).start();
    t.teardown(async () => {
      await a.close();
      await b.close();
    });

    for (let i = 1; i <= 30; i++) bus.publish(event(i));
    await publisher.flush();
    await until('both mirrors', () => a.size === 30 && b.size === 30);
    const first = a.earliestId!;
    t.same(
      ids(a.since(first - 1)),
      Array.from({ length: 30 }, (_, i) => first + i),
      'dense ids in publish order',
    );
    t.same(ids(b.since(first - 1)), ids(a.since(first - 1)), 'the other node holds the same ids');
    t.same(
      ns(b.since(first + 9)),
      Array.from({ length: 20 }, (_, i) => 11 + i),
      'an id from node A resumes on node B after it',
    );
    t.same(
      seenA.map((e) => e.id),
      ids(a.since(first - 1)),
      'followed events reach the hub once each, in order',
    );
    t.ok(first > Date.now() * 1000 - 60_000_000, 'the sequence starts at the clock in µs, above ids of an older log');

    // a node that starts later reads the same retained tail
    const lateBroker = await open({ url: server.url, prefix: 't1:' });
    const late = await BrokerEventLog.open(lateBroker, bounds);
    t.same(ids(late.since(first + 4)), ids(a.since(first + 4)));
    await late.close();
    await lateBroker.close();

    // the count bound trims the broker's stream; an id before what is kept gets the reset
    for (let i = 31; i <= 80; i++) bus.publish(event(i));
    await publisher.flush();
    await until('the next 50', () => a.latestId === first + 79 && b.latestId === first + 79);
    t.equal(a.earliestId, first + 30, 'the mirror keeps capacity events');
    t.equal(a.since(first + 5), 'too_old');
    t.equal(b.since(first + 5), 'too_old', 'the same answer on every node');
    t.same(ids(b.since(first + 29)), ids(a.since(first + 29)));
    t.equal(await ingest.redis.xlen('t1:events'), 50, 'the broker keeps capacity entries');
    t.equal(a.since(first + 200), 'too_old', 'an id never issued is not trusted');
  },
);

t.test(
  'a broker restart loses nothing after resume; a broker that lost its data resets old ids',
  { skip: missing },
  async (t) => {
    const server = await startBroker('redis');
    t.teardown(() => server.close());
    const ingest = await open({ url: server.url, prefix: 't2:' });
    const edge = await open({ url: server.url, prefix: 't2:' });
    t.teardown(async () => {
      await ingest.close();
      await edge.close();
    });
    const bounds = { capacity: 1000, blockMs: 200 };
    const publisher = new BrokerEventPublisher(ingest, bounds);
    const mirror = (await BrokerEventLog.open(edge, bounds)).start();
    t.teardown(() => mirror.close());
    publisher.publish([1, 2, 3, 4, 5].map(event));
    await publisher.flush();
    await until('five events', () => mirror.size === 5);
    const held = mirror.latestId!;

    await server.stop();
    // events published while the broker is down wait in the publisher
    publisher.publish([6, 7, 8].map(event));
    await server.restart();
    await publisher.flush();
    await until('the three published while the broker was down', () => mirror.size === 8);
    t.same(ns(mirror.since(held)), [6, 7, 8], 'resume after the restart: no gap, no duplicate');
    t.equal(mirror.rebuilds, 0);

    // the broker loses everything (crash without its append-only file)
    await server.stop({ crash: true });
    const { rmSync, readdirSync } = await import('node:fs');
    for (const f of readdirSync(server.dir)) rmSync(`${server.dir}/${f}`, { recursive: true, force: true });
    await server.restart();
    publisher.publish([9].map(event));
    await publisher.flush();
    await until('the rebuilt mirror', () => mirror.rebuilds === 1 && mirror.size === 1);
    t.equal(mirror.since(held), 'too_old', 'ids from before the loss get the reset');
    t.ok(mirror.latestId! > held, 'new ids stay above every old one');
  },
);
