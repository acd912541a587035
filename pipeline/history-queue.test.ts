import t from 'tap';
import { InMemoryEventBus } from '../core/events.ts';
import type { HistoryBatch } from '../core/ports.ts';
import { sha256, type FetchFn } from './fetch-feed.ts';
import { HistoryQueue } from './history-queue.ts';
import { createPipeline } from './ingest.ts';
import { encodeFeed, header, MemoryHistory, testConfig } from '../test/support/pipeline-fakes.ts';
import { silentLogger } from '../test/support/logs.ts';

/** A MemoryHistory whose writes wait until released: the store falling behind, on demand. */
class GatedHistory extends MemoryHistory {
  private gate: Promise<void> = Promise.resolve();
  private open: () => void = () => undefined;
  writesStarted = 0;

  hold(): void {
    this.gate = new Promise((resolve) => {
      this.open = resolve;
    });
  }

  release(): void {
    this.open();
    this.gate = Promise.resolve();
  }

  override async write(batch: HistoryBatch): Promise<number> {
    this.writesStarted++;
    await this.gate;
    return super.write(batch);
  }
}

const batch = (feed: string, hash?: string): HistoryBatch => ({
  vehicles: [],
  arrivals: [],
  trips: [],
  alertVersions: [],
  polls: [],
  ...(hash
    ? {
        snapshot: {
          feed_id: feed,
          body_sha256: hash,
          header_timestamp_ms: null,
          observed_ms: 0,
          source: 'poll' as const,
        },
      }
    : {}),
});
const tick = () => new Promise((r) => setImmediate(r));

t.test('batches are written one at a time in order; room() waits while the queue is full; idle() drains', async (t) => {
  const history = new GatedHistory();
  const queue = new HistoryQueue(history, 2);
  history.hold();
  const settled: string[] = [];
  const pushes = ['a', 'b', 'c'].map((h) =>
    queue.push(batch('f', h), async (outcome) => {
      settled.push(`${h}:${outcome instanceof Error ? 'failed' : 'ok'}`);
    }),
  );
  await tick();
  t.equal(history.writesStarted, 1, 'one write at a time');
  t.match(queue.figures(), { depth: 3, capacity: 2 });
  t.ok(queue.hasPending({ feed_id: 'f', body_sha256: 'b' }), 'a queued snapshot is known as pending');
  let roomy = false;
  const room = queue.room().then(() => {
    roomy = true;
  });
  await tick();
  t.notOk(roomy, 'no room while full');
  history.release();
  await Promise.all(pushes);
  await room;
  await queue.idle();
  t.same(settled, ['a:ok', 'b:ok', 'c:ok'], 'settled in order');
  t.same(
    history.batches.map((b) => b.snapshot?.body_sha256),
    ['a', 'b', 'c'],
  );
  t.match(queue.figures(), { depth: 0, lag_ms: 0 });
  t.notOk(queue.hasPending({ feed_id: 'f', body_sha256: 'b' }), 'stored: no longer pending');
});

t.test('a failed write reaches its settle and the queue goes on', async (t) => {
  const history = new MemoryHistory();
  history.failNext = 1;
  const queue = new HistoryQueue(history, 4);
  const outcomes: string[] = [];
  await Promise.all(
    [1, 2].map((n) =>
      queue.push(batch('f', `h${n}`), async (o) => {
        outcomes.push(o instanceof Error ? o.message : `stored ${o}`);
      }),
    ),
  );
  t.same(outcomes, ['disk full', 'stored 0']);
  t.equal(history.batches.length, 1);
});

const feedBody = (tsS: number, lat: number) =>
  encodeFeed({
    header: header(tsS),
    entity: [
      {
        id: '1',
        vehicle: {
          vehicle: { id: 'bus-1' },
          trip: { route_id: '66' },
          position: { latitude: lat, longitude: -73 },
          timestamp: tsS,
        },
      },
    ],
  });

t.test(
  'the live state moves before the history is stored; a slow store pauses timed polls, drops nothing, ' +
    'and stop() drains',
  async (t) => {
    const base = Math.floor(Date.now() / 1000);
    let n = 0;
    const fetch: FetchFn = async () => {
      n++;
      return { kind: 'body', body: feedBody(base, 40 + n / 1000), http_status: 200, etag: null, last_modified: null };
    };
    const history = new GatedHistory();
    const bus = new InMemoryEventBus();
    let events = 0;
    bus.subscribe((b) => {
      events += b.length;
    });
    const pipeline = createPipeline({
      config: testConfig({ feeds: [{ id: 'vp', kind: 'gtfs-rt', url: 'http://feed.invalid/', interval_s: 0.01 }] }),
      bus,
      history,
      scheduleFor: () => undefined,
      fetch,
      log: silentLogger,
      history_queue_polls: 2,
    });
    history.hold();
    pipeline.start();
    for (let i = 0; i < 500 && pipeline.historyQueue().depth < 2; i++) await new Promise((r) => setTimeout(r, 10));
    // polls 1 and 2 fill the queue; poll 2 waits for room, so no third poll starts while the store is held
    // (ten poll intervals pass meanwhile)
    await new Promise((r) => setTimeout(r, 100));
    t.equal(n, 2, 'polling paused at the queue capacity');
    t.equal(history.batches.length, 0, 'nothing stored yet');
    t.equal(pipeline.state.feed('vp')?.polls, 2, 'both polls are live');
    t.ok(events > 0, 'their events are published');
    t.match(pipeline.historyQueue(), { depth: 2, capacity: 2 });
    t.ok(pipeline.historyQueue().lag_ms > 0, 'the oldest batch has waited');
    history.release();
    for (let i = 0; i < 200 && n < 4; i++) await new Promise((r) => setTimeout(r, 10));
    t.ok(n >= 4, 'polling resumes once there is room');
    history.hold();
    for (let i = 0; i < 200 && pipeline.historyQueue().depth === 0; i++) await new Promise((r) => setTimeout(r, 10));
    t.ok(pipeline.historyQueue().depth > 0, 'a poll waits to be stored');
    const stopping = pipeline.stop();
    let stopped = false;
    void stopping.then(() => {
      stopped = true;
    });
    await new Promise((r) => setTimeout(r, 50));
    t.notOk(stopped, 'stop() waits for the queued history');
    history.release();
    await stopping;
    t.equal(history.polls.length, n, 'every poll stored, none dropped');
    t.same(
      history.polls.map((p) => p.status),
      Array(n).fill('ok'),
    );
    t.match(pipeline.historyQueue(), { depth: 0 });
  },
);

t.test(
  'pollOnce resolves once stored; the same body polled while its batch waits is a duplicate, stored once',
  async (t) => {
    const body = feedBody(Math.floor(Date.now() / 1000), 41);
    const fetch: FetchFn = async () => ({ kind: 'body', body, http_status: 200, etag: null, last_modified: null });
    const history = new GatedHistory();
    const pipeline = createPipeline({
      config: testConfig({ feeds: [{ id: 'vp', kind: 'gtfs-rt', url: 'http://feed.invalid/' }] }),
      bus: new InMemoryEventBus(),
      history,
      scheduleFor: () => undefined,
      fetch,
      log: silentLogger,
    });
    history.hold();
    const first = pipeline.pollOnce('vp');
    for (let i = 0; i < 100 && pipeline.historyQueue().depth === 0; i++) await tick();
    const second = pipeline.pollOnce('vp');
    for (let i = 0; i < 100 && pipeline.historyQueue().depth < 2; i++) await tick();
    t.equal(history.batches.length, 0);
    history.release();
    const [a, b] = await Promise.all([first, second]);
    t.equal(a.status, 'ok');
    t.equal(a.stored, 1);
    t.equal(b.status, 'duplicate');
    t.equal(b.stored, 0);
    t.equal(history.batches.filter((x) => x.vehicles.length > 0).length, 1, 'the rows stored once');
    await pipeline.stop();
  },
);

t.test("the writer's idle upkeep runs once the queue has drained, not between batches waiting together", async (t) => {
  const history = new GatedHistory();
  const calls: string[] = [];
  Object.assign(history, {
    idle: async () => {
      calls.push(`idle after ${history.batches.length}`);
    },
  });
  const queue = new HistoryQueue(history, 4);
  history.hold();
  const pushes = ['a', 'b', 'c'].map((h) => queue.push(batch('f', h), async () => undefined));
  history.release();
  await Promise.all(pushes);
  await queue.idle();
  t.same(calls, ['idle after 3']);
});

t.test(
  'a snapshot lookup held up by the store does not hold up the live state; a duplicate found late is stored as one',
  async (t) => {
    const body = feedBody(Math.floor(Date.now() / 1000), 42);
    const fetch: FetchFn = async () => ({ kind: 'body', body, http_status: 200, etag: null, last_modified: null });
    let answer: () => void = () => undefined;
    const lookupHeld = new Promise<void>((resolve) => {
      answer = resolve;
    });
    class SlowLookup extends MemoryHistory {
      override async hasSnapshot(key: { feed_id: string; body_sha256: string }): Promise<boolean> {
        await lookupHeld;
        return super.hasSnapshot(key);
      }
    }
    const history = new SlowLookup();
    history.snapshots.add(`vp ${sha256(body)}`); // stored by an earlier process
    const pipeline = createPipeline({
      config: testConfig({ feeds: [{ id: 'vp', kind: 'gtfs-rt', url: 'http://feed.invalid/' }] }),
      bus: new InMemoryEventBus(),
      history,
      scheduleFor: () => undefined,
      fetch,
      log: silentLogger,
    });
    const polled = pipeline.pollOnce('vp');
    for (let i = 0; i < 100 && pipeline.state.feed('vp')?.polls !== 1; i++) await tick();
    t.equal(pipeline.state.feed('vp')?.polls, 1, 'live before the lookup answered');
    t.equal(pipeline.state.feed('vp')?.entities, 1, 'its entity is live');
    t.equal(history.batches.length, 0, 'nothing written while the lookup waits');
    answer();
    const poll = await polled;
    t.equal(poll.status, 'duplicate');
    t.equal(poll.stored, 0);
    t.same(
      history.batches.map((b) => [b.vehicles.length, b.snapshot === undefined, b.polls[0]?.status]),
      [[0, true, 'duplicate']],
    );
    t.equal(pipeline.state.feed('vp')?.last_status, 'duplicate', 'the live health says so too');
    await pipeline.stop();
  },
);
