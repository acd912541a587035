import t from 'tap';
import { until } from '../test/support/wait.ts';
import { brokerMissing, startBroker } from '../test/support/broker-servers.ts';
import { captureLogs } from '../test/support/logs.ts';
import { heartbeatKey, HeartbeatPublisher, HeartbeatReader } from './node-heartbeats.ts';
import { Broker } from './redis.ts';

const missing = brokerMissing('redis');
const logs = captureLogs('error');

t.test("edges' heartbeats through the broker", { skip: missing }, async (t) => {
  const server = await startBroker('redis');
  const brokers = await Promise.all(
    [0, 1, 2].map(() => new Broker({ url: server.url, prefix: 'hb:', log: logs.logger }).ready()),
  );
  const [ingest, a, b] = brokers as [Broker, Broker, Broker];
  t.teardown(async () => {
    for (const x of brokers) await x.close();
    await server.close();
  });
  let clock = 1_000_000;
  const reader = new HeartbeatReader(ingest, { everyMs: 3_600_000, forgetAfterMs: 60_000, now: () => clock });
  const pa = new HeartbeatPublisher(a, 'a:1', (n) => ({ n, who: 'a' }), 20).start();
  const pb = new HeartbeatPublisher(b, 'b:1', (n) => ({ n, who: 'b' }), 20).start();
  await until('two heartbeats', async () => (await ingest.redis.hlen(heartbeatKey(ingest))) === 2);
  await reader.read();
  t.same(
    reader
      .list()
      .map((h) => h.nodeId)
      .sort(),
    ['a:1', 'b:1'],
  );
  t.ok(reader.list().every((h) => h.heardMs === clock));

  await pb.close();
  clock += 1_000;
  const before = await ingest.redis.hget(heartbeatKey(ingest), 'a:1');
  await until('the next beat of a', async () => (await ingest.redis.hget(heartbeatKey(ingest), 'a:1')) !== before);
  await reader.read();
  t.same(
    reader.list().map((h) => h.nodeId),
    ['a:1'],
    'an edge that stopped cleanly leaves the list',
  );
  const heard = reader.list()[0]!.heardMs;
  t.equal(heard, clock, 'a heartbeat that changed is heard now');

  // a node that died: its last heartbeat stays unchanged, then is forgotten
  await pa.close();
  await ingest.redis.hset(heartbeatKey(ingest), 'dead:1', JSON.stringify({ n: 9 }));
  await reader.read();
  clock += 30_000;
  await reader.read();
  t.equal(reader.list().find((h) => h.nodeId === 'dead:1')?.heardMs, clock - 30_000, 'unchanged: heard back then');
  clock += 60_000;
  await reader.read();
  t.same(reader.list(), [], 'forgotten after forgetAfterMs');
  t.equal(await ingest.redis.hexists(heartbeatKey(ingest), 'dead:1'), 0, 'and deleted from the broker');
  reader.close();
});
