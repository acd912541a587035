import t from 'tap';
import { parseSseText } from '../test/support/sse-parse.ts';
import type { DomainEvent } from '../core/events.ts';
import { InMemoryEventBus } from '../core/events.ts';
import { MemoryEventLog } from './event-log.ts';
import { StreamHub, type HubOptions } from './hub.ts';
import type { TopicItem, TopicSnapshot } from './item-diff.ts';
import type { SinkWriteResult, SseSink } from './sse-sink.ts';
import { logInto } from '../test/support/logs.ts';
import { rawEvent, type RawEventFields } from '../test/support/events.ts';

/** A sink that drains at once (or never), as a socket layer would report it. */
class FakeSink implements SseSink {
  chunks: Buffer[] = [];
  buffered = 0;
  closedWith: 'end' | 'abort' | null = null;
  constructor(public draining = true) {}
  write(chunk: Buffer): SinkWriteResult {
    if (this.closedWith) return 'closed';
    this.chunks.push(chunk);
    if (this.draining) return 'ok';
    this.buffered += chunk.length;
    return 'backpressure';
  }
  bufferedBytes(): number {
    return this.buffered;
  }
  close(mode: 'end' | 'abort'): void {
    this.closedWith = mode;
  }
  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
  events(): Array<{ id?: string; event: string; data: string }> {
    return parseSseText(this.text()).events;
  }
}

function options(overrides: Partial<HubOptions> = {}): HubOptions {
  return {
    bufferBytes: 64 * 1024,
    pingIntervalMs: 15_000,
    maxConnectionMs: 3_600_000,
    coalesceMs: 0,
    now: () => 1_000,
    ...overrides,
  };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

function vehicles(list: Array<[string, number]>): TopicSnapshot {
  const items: TopicItem[] = list.map(([id, lat]) => ({ id, type: 'vehicle', lat }));
  return { items, body: { data: items, meta: { count: items.length } } };
}

function busEvent(n: number, overrides: RawEventFields & { type?: DomainEvent['type'] } = {}): DomainEvent {
  return rawEvent(overrides.type ?? 'vehicle.position', {
    at_ms: n,
    modes: ['bus'],
    routes: ['7'],
    data: { n },
    ...overrides,
  });
}

t.test(
  'a query stream: reset once, then add/update/remove, identical bytes to every subscriber, one compute per burst',
  async (t) => {
    const hub = new StreamHub(options(), new MemoryEventLog({ capacity: 100 }));
    let state: Array<[string, number]> = [
      ['a', 1],
      ['b', 2],
      ['c', 3],
    ];
    let computes = 0;
    const compute = async () => {
      computes++;
      return vehicles(state);
    };
    const sinks = Array.from({ length: 200 }, () => new FakeSink());
    t.notOk(hub.hasQuery('/api/v1/bus/7/realtime?'), 'no stream of the query yet');
    for (const sink of sinks) {
      const plan = hub.openQuery({ key: '/api/v1/bus/7/realtime?', compute, channels: ['realtime:bus'] });
      t.equal(plan.tooOld, false);
      t.same(
        plan.headers.find(([name]) => name === 'Cache-Control'),
        ['Cache-Control', 'no-store'],
      );
      plan.start(sink);
    }
    await tick();
    t.ok(hub.hasQuery('/api/v1/bus/7/realtime?'));
    t.equal(computes, 1, 'one compute for 200 subscribers');
    const first = sinks[0]!.events();
    t.equal(first.length, 1);
    t.equal(first[0]!.event, 'reset');
    t.same(JSON.parse(first[0]!.data), vehicles(state).body, 'reset carries the JSON endpoint body');
    t.ok(sinks[0]!.text().startsWith('retry: 3000\n\n'), 'retry once at the start');

    state = [
      ['a', 1],
      ['b', 20],
      ['d', 4],
    ];
    for (let i = 0; i < 10; i++) hub.changed('realtime:bus');
    hub.changed('alerts');
    await tick();
    t.equal(computes, 2, 'a burst of 11 change notifications is one recompute');
    const events = sinks[0]!.events().slice(1);
    t.same(
      events.map((e) => e.event),
      ['remove', 'update', 'add'],
    );
    t.same(JSON.parse(events[0]!.data), { id: 'c', type: 'vehicle' }, 'remove carries only id and type');
    t.same(JSON.parse(events[1]!.data), { id: 'b', type: 'vehicle', lat: 20 });
    t.same(JSON.parse(events[2]!.data), { id: 'd', type: 'vehicle', lat: 4 });
    const ids = [first[0]!.id, ...events.map((e) => e.id)].map(Number);
    t.ok(
      ids.every((id, i) => i === 0 || id === ids[i - 1]! + 1),
      'ids increase by one per event',
    );
    const diffChunk = sinks[0]!.chunks.at(-1)!;
    for (const sink of sinks) {
      t.equal(sink.chunks.length, sinks[0]!.chunks.length);
      if (sink.chunks.at(-1) !== diffChunk) t.fail('every subscriber gets the very same encoded buffer');
    }
    t.ok(
      sinks.every((s) => s.text() === sinks[0]!.text()),
      'identical bytes everywhere',
    );

    hub.changed('alerts');
    await tick();
    t.equal(computes, 2, 'a change on another channel does not recompute this query');
    hub.changed();
    await tick();
    t.equal(computes, 3, 'a change of everything does');
    t.equal(sinks[0]!.events().length, 4, 'an unchanged result sends nothing');
    t.equal(hub.stats().queryTopics, 1);
    hub.close();
    t.ok(
      sinks.every((s) => s.closedWith === 'end'),
      'shutdown ends every stream gracefully',
    );
  },
);

t.test(
  'a query stream resumes from its history, and an unknown id gets reset with Last-Event-ID: earliest',
  async (t) => {
    const hub = new StreamHub(options(), new MemoryEventLog({ capacity: 10 }));
    let state: Array<[string, number]> = [['a', 1]];
    const compute = async () => vehicles(state);
    const key = 'k';
    const first = new FakeSink();
    const sub = hub.openQuery({ key, compute }).start(first);
    await tick();
    const resetId = first.events()[0]!.id!;
    state = [['a', 2]];
    hub.changed();
    await tick();
    sub.close();

    const resumed = new FakeSink();
    const plan = hub.openQuery({ key, compute, lastEventId: resetId });
    t.equal(plan.tooOld, false);
    plan.start(resumed);
    t.same(
      resumed.events().map((e) => e.event),
      ['update'],
      'the missed update is replayed, nothing else',
    );
    t.equal(resumed.events()[0]!.id, String(Number(resetId) + 1));

    // changes while nobody listens are picked up when the next client attaches
    resumed.closedWith = 'end';
    state = [
      ['a', 3],
      ['b', 1],
    ];
    hub.changed();
    await tick();
    const again = new FakeSink();
    hub.openQuery({ key, compute, lastEventId: String(Number(resetId) + 1) }).start(again);
    await tick();
    t.same(
      again.events().map((e) => e.event),
      ['update', 'add'],
      'an idle topic catches up with a diff',
    );

    for (const lastEventId of ['1', 'garbage', String(Number(resetId) + 99)]) {
      const stale = new FakeSink();
      const p = hub.openQuery({ key, compute, lastEventId });
      t.equal(p.tooOld, true, `id ${lastEventId} cannot be resumed`);
      t.same(
        p.headers.find(([name]) => name === 'Last-Event-ID'),
        ['Last-Event-ID', 'earliest'],
      );
      p.start(stale);
      t.same(
        stale.events().map((e) => e.event),
        ['reset'],
      );
    }
    const fresh = hub.openQuery({ key: 'other', compute, lastEventId: '5' });
    t.equal(fresh.tooOld, true, 'a topic that does not exist yet has no history');
    hub.close();
  },
);

t.test('bus events drive both the event stream and the query streams that depend on them', async (t) => {
  const bus = new InMemoryEventBus();
  const hub = new StreamHub(options(), new MemoryEventLog({ capacity: 10 }));
  hub.attachBus(bus, (e) => (e.type.startsWith('alert.') ? ['alerts'] : [`realtime:${e.modes[0]}`]));
  let computes = 0;
  const sink = new FakeSink();
  hub
    .openQuery({
      key: 'alerts',
      channels: ['alerts'],
      compute: async () => {
        computes++;
        return vehicles([]);
      },
    })
    .start(sink);
  await tick();
  for (let i = 0; i < 5; i++) bus.publish(busEvent(i));
  await tick();
  t.equal(computes, 1, 'vehicle events do not touch the alerts query');
  for (let i = 0; i < 5; i++) bus.publish(busEvent(i, { type: 'alert.updated' }));
  // waited for rather than one fixed tick: on a loaded machine the recompute can come after it
  for (const deadline = Date.now() + 5_000; computes < 2 && Date.now() < deadline; ) await tick();
  await tick();
  t.equal(computes, 2, 'five alert events in one tick: one recompute');
  hub.close();
});

t.test('query history is bounded; a resume inside a trimmed diff still gets exactly the missed events', async (t) => {
  const hub = new StreamHub(options({ bufferBytes: 600 }), new MemoryEventLog({ capacity: 10 }));
  let state: Array<[string, number]> = [];
  const compute = async () => vehicles(state);
  const first = new FakeSink();
  hub.openQuery({ key: 'k', compute }).start(first);
  await tick();
  for (let round = 1; round <= 6; round++) {
    state = [
      ['a', round],
      ['b', round],
      ['c', round],
    ];
    hub.changed();
    await tick();
  }
  const events = first.events();
  t.equal(events.length, 1 + 3 + 5 * 3, 'reset, 3 adds, then 3 updates per round');
  const ids = events.map((e) => Number(e.id));
  // the oldest diffs were trimmed: resuming from the reset id is no longer possible
  t.equal(hub.openQuery({ key: 'k', compute, lastEventId: String(ids[0]) }).tooOld, true);
  // resuming from the middle of the newest diff replays just its tail
  const resumeFrom = ids.at(-2)!;
  const plan = hub.openQuery({ key: 'k', compute, lastEventId: String(resumeFrom) });
  t.equal(plan.tooOld, false);
  const sink = new FakeSink();
  plan.start(sink);
  t.same(
    sink.events().map((e) => Number(e.id)),
    [ids.at(-1)],
    'only the one event after the id',
  );
  hub.close();
});

t.test('a first compute that fails closes its waiting clients so they retry', async (t) => {
  const messages: string[] = [];
  const hub = new StreamHub(options({ log: logInto((m) => messages.push(m)) }), new MemoryEventLog({ capacity: 10 }));
  let fail = true;
  const compute = async () => {
    if (fail) throw new Error('store down');
    return vehicles([['a', 1]]);
  };
  const sink = new FakeSink();
  const sub = hub.openQuery({ key: 'k', compute }).start(sink);
  const reasons: string[] = [];
  sub.onClose((r) => reasons.push(r));
  await tick();
  t.same(reasons, ['error']);
  t.equal(sink.closedWith, 'end');
  t.ok(messages.some((m) => m.includes('recompute failed')));
  fail = false;
  const retry = new FakeSink();
  hub.openQuery({ key: 'k', compute }).start(retry);
  await tick();
  t.same(
    retry.events().map((e) => e.event),
    ['reset'],
  );
  t.equal(hub.stats().computeFailures, 1);
  hub.close();
});

t.test('a slow reader is cut when its buffer fills while 100 others keep receiving every event', async (t) => {
  const bus = new InMemoryEventBus();
  const hub = new StreamHub(options({ bufferBytes: 4096 }), new MemoryEventLog({ capacity: 10_000 }));
  hub.attachBus(bus);
  const fast = Array.from({ length: 100 }, () => new FakeSink());
  for (const sink of fast) hub.openEvents({ filter: {} }).start(sink);
  const slow = new FakeSink(false);
  const slowSub = hub.openEvents({ filter: {} }).start(slow);
  let cutReason = '';
  slowSub.onClose((r) => {
    cutReason = r;
  });
  for (let round = 0; round < 50; round++) {
    for (let i = 0; i < 5; i++)
      bus.publish(busEvent(round * 5 + i, { data: { n: round * 5 + i, pad: 'x'.repeat(100) } }));
    await tick();
  }
  t.equal(cutReason, 'slow');
  t.equal(slow.closedWith, 'abort', 'the slow client is aborted, its queue dropped');
  t.ok(
    slow.buffered < 4096 + 5 * 500,
    'memory stays bounded: the cut came at the first write past the bound (one tick: 5 frames under 500 B)',
  );
  for (const sink of fast) {
    const events = sink.events();
    if (events.length !== 250) t.fail(`a fast client got ${events.length} of 250 events`);
  }
  t.equal(fast[0]!.events().length, 250, 'every fast client got all 250 events');
  t.same(
    fast[0]!.events().map((e) => JSON.parse(e.data).data.n),
    Array.from({ length: 250 }, (_, i) => i),
    'in order',
  );
  const stats = hub.stats();
  t.equal(stats.closed.slow, 1);
  t.equal(stats.subscribers, 100);
  t.equal(stats.framesEncoded, 250, 'each event encoded once for 101 subscribers');
  t.ok(stats.eventFlushes <= 50, 'events of one tick share one write');
  hub.close();
});

t.test(
  'the event stream: filters, one encode per event, resume with no gap and no duplicate, too-old reset',
  async (t) => {
    let clock = 10;
    const log = new MemoryEventLog({ capacity: 20, now: () => clock });
    const hub = new StreamHub(options({ now: () => clock, bufferBytes: 2_000 }), log);
    const all = new FakeSink();
    const railOnly = new FakeSink();
    const alerts = new FakeSink();
    const route7 = new FakeSink();
    hub.openEvents({ filter: {} }).start(all);
    hub.openEvents({ filter: { modes: ['rail'] } }).start(railOnly);
    hub.openEvents({ filter: { types: ['alert.created', 'alert.created'] } }).start(alerts);
    hub.openEvents({ filter: { routes: ['7'], modes: ['bus', 'rail'] } }).start(route7);
    hub.publish([
      busEvent(1),
      busEvent(2, { type: 'alert.created', modes: ['rail'], routes: ['RED'] }),
      busEvent(3, { routes: ['9'] }),
    ]);
    hub.flushEvents();
    t.same(
      all.events().map((e) => e.event),
      ['vehicle.position', 'alert.created', 'vehicle.position'],
    );
    t.same(
      railOnly.events().map((e) => e.event),
      ['alert.created'],
    );
    t.same(
      alerts.events().map((e) => e.event),
      ['alert.created'],
    );
    t.same(
      route7.events().map((e) => JSON.parse(e.data).data.n),
      [1],
    );
    t.equal(hub.stats().framesEncoded, 3, 'each event encoded once across four filter groups');
    t.equal(hub.stats().eventGroups, 4);

    const seen = all.events();
    const resumed = new FakeSink();
    hub.publish([busEvent(4), busEvent(5)]);
    const plan = hub.openEvents({ filter: {}, lastEventId: seen[0]!.id });
    t.equal(plan.tooOld, false);
    plan.start(resumed);
    hub.flushEvents();
    t.same(
      resumed.events().map((e) => JSON.parse(e.data).data.n),
      [2, 3, 4, 5],
      'replay then live: no gap, no duplicate',
    );

    hub.ping();
    t.match(resumed.text(), /: ping\nid: \d+\n\n$/, 'pings carry the newest id so a sparse filter resumes from it');

    for (let i = 0; i < 30; i++) hub.publish([busEvent(10 + i)]);
    hub.flushEvents();
    const old = hub.openEvents({ filter: {}, lastEventId: seen[0]!.id });
    t.equal(old.tooOld, true, 'evicted from the log');
    t.same(
      old.headers.find(([n]) => n === 'Last-Event-ID'),
      ['Last-Event-ID', 'earliest'],
    );
    const oldSink = new FakeSink();
    old.start(oldSink);
    t.equal(oldSink.events()[0]!.event, 'reset');
    t.equal(oldSink.events()[0]!.id, String(log.latestId), 'the reset carries the newest id to resume from');
    t.equal(hub.openEvents({ filter: {}, lastEventId: 'abc' }).tooOld, true);
    t.equal(hub.openEvents({ filter: {}, lastEventId: '' }).tooOld, false, 'an empty id is a fresh start');

    // a replay larger than one buffer goes in parts, each ending the response; reconnects continue
    const earliest = log.earliestId!;
    const parts: number[] = [];
    let lastId = String(earliest - 1);
    for (let attempt = 0; attempt < 20; attempt++) {
      const sink = new FakeSink();
      const sub = hub.openEvents({ filter: {}, lastEventId: lastId }).start(sink);
      const got = sink.events();
      parts.push(...got.map((e) => Number(e.id)));
      if (!sub.closed) break;
      t.equal(sink.closedWith, 'end');
      lastId = got.at(-1)!.id!;
    }
    t.same(
      parts,
      Array.from({ length: 20 }, (_, i) => earliest + i),
      'all 20 retained events, in parts, no gap, no duplicate',
    );
    t.ok(hub.stats().closed.replay_partial >= 1);
    clock += 1;
    hub.close();
  },
);

t.test('one shared ping and a lifetime sweep with a controlled clock', async (t) => {
  let clock = 0;
  const hub = new StreamHub(
    options({ now: () => clock, maxConnectionMs: 60_000, random: () => 0.5, topicIdleMs: 30_000 }),
    new MemoryEventLog({ capacity: 5 }),
  );
  hub.start();
  const a = new FakeSink();
  const a2 = new FakeSink();
  const b = new FakeSink();
  hub.openQuery({ key: 'q', compute: async () => vehicles([]) }).start(a);
  hub.openQuery({ key: 'q', compute: async () => vehicles([]) }).start(a2);
  hub.openEvents({ filter: {} }).start(b);
  await tick();
  hub.ping();
  t.ok(a.text().endsWith(': ping\n\n'));
  t.ok(b.text().endsWith(': ping\n\n'), 'no id before the first event');
  t.equal(a.chunks.at(-1), a2.chunks.at(-1), 'one shared ping buffer');
  clock = 56_000;
  hub.sweep();
  t.equal(a.closedWith, null, 'deadline is jittered within 90–100% of the maximum');
  clock = 57_000;
  hub.sweep();
  t.equal(a.closedWith, 'end');
  t.equal(b.closedWith, 'end');
  t.equal(hub.stats().closed.lifetime, 3);
  t.equal(hub.stats().queryTopics, 1, 'the idle topic is kept for a while for resumes');
  clock = 57_000 + 30_000;
  hub.sweep();
  t.equal(hub.stats().queryTopics, 0, 'then dropped');
  t.equal(hub.stats().computes, 1, 'its computes stay counted');
  hub.close();
  const late = new FakeSink();
  const sub = hub.openEvents({ filter: {} }).start(late);
  t.ok(sub.closed, 'a stream opened during shutdown is ended at once');
});

t.test('events published after close still reach the log, for resume after a restart', async (t) => {
  const log = new MemoryEventLog({ capacity: 10 });
  const hub = new StreamHub(options(), log);
  hub.publish([busEvent(1)]);
  hub.close();
  const before = log.latestId!;
  hub.publish([busEvent(2), busEvent(3)]);
  t.equal(log.size, 3);
  const after = log.since(before);
  t.same(after === 'too_old' ? after : after.map((e) => JSON.parse(e.payload).data.n), [2, 3]);
});

t.test('a sink that throws or reports closed is removed, and the server can report a gone client', async (t) => {
  const hub = new StreamHub(options(), new MemoryEventLog({ capacity: 5 }));
  const throwing: SseSink = {
    write: () => {
      throw new Error('boom');
    },
    bufferedBytes: () => 0,
    close: () => undefined,
  };
  const sub = hub.openEvents({ filter: {} }).start(throwing);
  t.ok(sub.closed);
  const gone = new FakeSink();
  const goneSub = hub.openEvents({ filter: {} }).start(gone);
  gone.closedWith = 'abort';
  hub.publish([busEvent(1)]);
  hub.flushEvents();
  t.ok(goneSub.closed, "a write answered 'closed' removes the subscriber");
  const live = new FakeSink();
  const liveSub = hub.openEvents({ filter: {} }).start(live);
  let reason = '';
  liveSub.onClose((r) => {
    reason = r;
  });
  liveSub.close();
  t.equal(reason, 'client');
  t.equal(live.closedWith, null, 'a gone client is not closed again by the hub');
  liveSub.onClose(() => t.fail('listeners added after close never run'));
  t.equal(hub.stats().subscribers, 0);
  hub.close();
});

// issue 28 pt 5: a ping to every stream is as long a stall as an event's fan-out; streams that
// have events need none
t.test('the keep-alive pings event groups only once idle for an interval; topics every interval', async (t) => {
  let clock = 1_000;
  const hub = new StreamHub(
    options({ now: () => clock, pingIntervalMs: 10_000 }),
    new MemoryEventLog({ capacity: 50 }),
  );
  const busy = new FakeSink();
  const quiet = new FakeSink();
  const query = new FakeSink();
  hub.openEvents({ filter: { types: ['vehicle.position'] } }).start(busy);
  hub.openEvents({ filter: { types: ['alert.created'] } }).start(quiet);
  hub.openQuery({ key: 'q', compute: async () => vehicles([]) }).start(query);
  await tick();
  const pings = (sink: FakeSink) => (sink.text().match(/: ping/g) ?? []).length;
  for (let i = 1; i <= 8; i++) {
    clock += 2_500;
    hub.publish([busEvent(i)]);
    hub.flushEvents();
    hub.keepAlive();
  }
  t.equal(pings(busy), 0, 'a group with events every 2.5 s is never pinged');
  t.equal(pings(quiet), 2, 'an idle group once per interval (at most a quarter late)');
  t.match(quiet.text(), /: ping\nid: \d+\n\n/, 'with the newest id, so its clients resume from a recent one');
  t.equal(pings(query), 2, 'query topics every interval');
  clock += 12_000;
  hub.keepAlive();
  t.equal(pings(busy), 1, 'the busy group, once idle for an interval, is pinged too');
  hub.close();
});

t.test(
  'the sweep looks at streams only once the earliest deadline passed, and still ends each at its own',
  async (t) => {
    let clock = 0;
    let random = 0;
    const hub = new StreamHub(
      options({ now: () => clock, maxConnectionMs: 100_000, random: () => random }),
      new MemoryEventLog({ capacity: 5 }),
    );
    const first = new FakeSink();
    const second = new FakeSink();
    hub.openEvents({ filter: {} }).start(first); // deadline 100 s
    random = 1;
    clock = 5_000;
    hub.openEvents({ filter: {} }).start(second); // 5 s + 90 s = 95 s
    clock = 94_999;
    hub.sweep();
    t.equal(second.closedWith, null);
    clock = 95_000;
    hub.sweep();
    t.equal(second.closedWith, 'end', 'the earliest deadline');
    t.equal(first.closedWith, null);
    clock = 100_000;
    hub.sweep();
    t.equal(first.closedWith, 'end', 'then the next one, found while looking');
    hub.close();
  },
);

t.test('the coalescing window counts from the start of a flush: a long fan-out adds no wait', async (t) => {
  let clock = 0;
  const hub = new StreamHub(options({ now: () => clock, coalesceMs: 10 }), new MemoryEventLog({ capacity: 50 }));
  const slow: SseSink = {
    write: () => {
      clock += 30; // writing to this stream takes longer than the window
      return 'ok';
    },
    bufferedBytes: () => 0,
    close: () => undefined,
  };
  const sink = new FakeSink();
  hub.openEvents({ filter: {} }).start(slow);
  hub.openEvents({ filter: {} }).start(sink);
  hub.publish([busEvent(1)]);
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(sink.events().length, 1, 'the first event, at once');
  hub.publish([busEvent(2)]);
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(sink.events().length, 2, 'the next one too: the flush before it took longer than the window');
  hub.publish([busEvent(3)]);
  hub.publish([busEvent(4)]);
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(sink.events().length, 4);
  hub.close();
});
