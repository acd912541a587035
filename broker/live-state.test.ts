// The live state through a real redis-server: per-unit changes as the state moves, a late edge's
// snapshot, a missed change, a restarted ingest node, a broker that went away, and the beat
// that tells an edge how old its copy is.
import t from 'tap';
import { until } from '../test/support/wait.ts';
import { brokerMissing, startBroker } from '../test/support/broker-servers.ts';
import { FakeLive, makeAlert, makeFeed, makeVehicle } from '../test/support/fake-live.ts';
import { captureLogs } from '../test/support/logs.ts';
import { BrokerLiveView, liveKeys, LiveStatePublisher } from './live-state.ts';
import { Broker } from './redis.ts';

const missing = brokerMissing('redis');
const logs = captureLogs('error');

/** A FakeLive that says when it moved, as the pipeline's LiveState does. */
class NotifyingLive extends FakeLive {
  private readonly listeners = new Set<() => void>();
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  override change(fn: (live: this) => void): void {
    super.change(fn);
    for (const listener of this.listeners) listener();
  }
}

const ids = (rows: readonly { vehicle_id: string }[]) => rows.map((v) => v.vehicle_id).sort();

t.test('live state as per-unit changes', { skip: missing }, async (t) => {
  const server = await startBroker('redis');
  const open: Array<{ close(): Promise<void> }> = [];
  const broker = async () => {
    const b = await new Broker({ url: server.url, prefix: 'ls:', log: logs.logger }).ready();
    open.push(b);
    return b;
  };
  t.teardown(async () => {
    for (const x of open.reverse()) await x.close().catch(() => undefined);
    await server.close();
  });
  const ingest = await broker();
  const live = new NotifyingLive();
  live.change((l) => {
    l.vehicleList = ['v1', 'v2', 'v3'].map((id) => makeVehicle({ vehicle_id: id }));
    l.alertList = [makeAlert({ id: 'a1' })];
    l.feedList = [makeFeed({ feed_id: 'f2' }), makeFeed({ feed_id: 'f1' })];
  });
  // no interval: with onChange the publisher sends when the state moves, and beats rarely here
  let publisher = new LiveStatePublisher(ingest, live, { beatMs: 3_600_000 }).start();
  open.push(publisher);
  await until('the first send', () => publisher.published >= 1);

  const watcher = (await broker()).redis.duplicate();
  const messages: Array<{ set?: Array<[string, unknown[]]>; del?: string[]; reset?: boolean }> = [];
  watcher.on('message', (_ch: string, text: string) => messages.push(JSON.parse(text)));
  await watcher.subscribe(liveKeys(ingest).channel);
  t.teardown(() => watcher.disconnect());

  const edge = await broker();
  const view = await BrokerLiveView.open(edge);
  open.push(view);

  await t.test('an edge that starts reads the whole state', async (t) => {
    t.same(ids(view.vehicles('bus')), ['v1', 'v2', 'v3']);
    t.same(
      view.alerts().map((a) => a.id),
      ['a1'],
    );
    t.same(
      view.feeds().map((f) => f.feed_id),
      ['f2', 'f1'],
      'feeds in the order the ingest node has them',
    );
  });

  await t.test('a change sends only the units that changed, as soon as the state moves', async (t) => {
    const before = view.vehicles('bus').find((v) => v.vehicle_id === 'v1');
    const busVersion = view.sliceVersion('vehicles:bus');
    const alertsVersion = view.sliceVersion('alerts');
    messages.length = 0;
    live.change((l) => {
      l.vehicleList = [l.vehicleList[0]!, { ...l.vehicleList[1]!, lat: 42.5 }, makeVehicle({ vehicle_id: 'v4' })];
    });
    await until('the change on the edge', () => ids(view.vehicles('bus')).includes('v4'));
    t.same(ids(view.vehicles('bus')), ['v1', 'v2', 'v4']);
    t.equal(view.vehicles('bus').find((v) => v.vehicle_id === 'v2')!.lat, 42.5);
    t.equal(messages.length, 1, 'one message for the move');
    const [m] = messages;
    t.same(
      m!.set!.map(([key]) => key.split('\u001f').at(-1)),
      ['v2', 'v4'],
      'the moved vehicle and the new one',
    );
    t.same(
      m!.del!.map((key) => key.split('\u001f').at(-1)),
      ['v3'],
      'the one gone',
    );
    t.equal(
      view.vehicles('bus').find((v) => v.vehicle_id === 'v1'),
      before,
      'an unchanged vehicle is the row the edge already held',
    );
    t.ok(view.sliceVersion('vehicles:bus') > busVersion, 'its slice moved');
    t.equal(view.sliceVersion('alerts'), alertsVersion, 'the alerts did not');
    t.equal(view.resyncs, 1, 'no snapshot read since the start');
  });

  await t.test('a missed change (a gap in the sequence) reads the snapshot again', async (t) => {
    const resyncs = view.resyncs;
    // a message from the future: this edge missed the ones between
    await ingest.redis.publish(
      liveKeys(ingest).channel,
      JSON.stringify({ e: view.epoch, s: view.seq + 5, t: Date.now(), set: [], del: [] }),
    );
    await until('the resync', () => view.resyncs > resyncs);
    t.same(ids(view.vehicles('bus')), ['v1', 'v2', 'v4'], 'the same state, read whole');
  });

  await t.test('a restarted ingest node (another epoch) replaces the state, old units gone', async (t) => {
    await publisher.close();
    const next = new NotifyingLive();
    next.change((l) => {
      l.vehicleList = [makeVehicle({ vehicle_id: 'v9' })];
      l.feedList = [makeFeed({ feed_id: 'f1' })];
    });
    publisher = new LiveStatePublisher(ingest, next, { beatMs: 3_600_000 }).start();
    open.push(publisher);
    await until('the new state', () => ids(view.vehicles('bus')).join() === 'v9');
    t.same(view.alerts(), [], 'the alert of the old state is gone');
    t.equal(view.epoch, publisher.epoch);
    t.equal(await ingest.redis.hlen(liveKeys(ingest).units), 2, 'the hash holds the new units only');
  });

  await t.test('a late edge gets the full state after many changes', async (t) => {
    const late = await BrokerLiveView.open(await broker());
    open.push(late);
    t.same(ids(late.vehicles('bus')), ['v9']);
    t.same(
      late.feeds().map((f) => f.feed_id),
      ['f1'],
    );
  });
  await publisher.close();
});

t.test('the broker away: the last state served, its age growing, caught up after', { skip: missing }, async (t) => {
  const server = await startBroker('redis');
  const ingest = await new Broker({ url: server.url, prefix: 'la:', log: logs.logger }).ready();
  const edgeBroker = await new Broker({ url: server.url, prefix: 'la:', log: logs.logger }).ready();
  const live = new NotifyingLive();
  live.change((l) => {
    l.alertList = [makeAlert({ id: 'a1' }), makeAlert({ id: 'a2' })];
  });
  const publisher = new LiveStatePublisher(ingest, live, { beatMs: 50 }).start();
  await until('the first send', () => publisher.published >= 1);
  const view = await BrokerLiveView.open(edgeBroker);
  t.teardown(async () => {
    await view.close();
    await publisher.close();
    await ingest.close();
    await edgeBroker.close();
    await server.close();
  });
  await until('a beat heard', () => publisher.beats > 2 && (view.ageMs() ?? Infinity) < 1_000);

  await server.stop();
  live.change((l) => {
    l.alertList = [];
  });
  await new Promise((r) => setTimeout(r, 300));
  t.equal(view.alerts().length, 2, 'the broker away: the last state is served');
  t.ok(view.ageMs()! >= 250, `its age grows (${view.ageMs()} ms)`);
  await server.restart();
  await until('the state after the broker returns', () => view.alerts().length === 0);
  await until('beats again', () => view.ageMs()! < 250);
  t.pass('current again');
});
