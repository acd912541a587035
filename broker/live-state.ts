// The live state (vehicles, arrivals, alerts, feed health) for serving nodes that run no
// pipeline, sent as per-unit changes (broker/live-units.ts) the moment the pipeline moves it.
//
// The ingest node keeps the whole state in one Redis hash, a unit per field, and in the same
// MULTI sets the hash's meta (epoch, sequence, time) and publishes the change itself on a channel:
// `{e, s, t, set: [[key, rows]…], del: [key…]}`. Once a second with nothing to send it publishes a
// beat `{e, s, t}`, so an edge can tell a quiet state from a silent ingest node. After a failure
// or a broker that came back, it rewrites the hash whole and publishes `{e, s, t, reset: true}`.
//
// An edge subscribes, then reads the hash and its meta in one MULTI (a snapshot at sequence s),
// and applies the changes that follow it in order. A change whose sequence is not the next one,
// another epoch (the ingest node restarted), a reset, or a subscription that came back: it reads
// the snapshot again, so a late or disconnected edge always ends up with the whole state. With the
// broker or the ingest node away it serves the last state it had, and the feeds' freshness,
// judged again here every second from their header times, says how old it is.
import type { Redis } from 'ioredis';
import type { Config } from '../core/config.ts';
import type { FeedHealth, LiveSlice, LiveView } from '../core/ports.ts';
import type { Alert, Arrival, Freshness, Mode, VehiclePosition } from '../core/types.ts';
import { freshnessAt } from '../pipeline/freshness.ts';
import {
  PUBLISHED_SLICES,
  sliceOfKey,
  sliceRows,
  UnitMemory,
  type PublishedSlice,
  type UnitChanges,
} from './live-units.ts';
import { within, type Broker } from './redis.ts';

export function liveKeys(broker: Broker): { units: string; meta: string; channel: string } {
  return { units: broker.key('live:units'), meta: broker.key('live:meta'), channel: broker.key('live:changes') };
}

interface LiveMessage {
  e: string;
  s: number;
  /** the ingest node's clock when sent */
  t: number;
  set?: Array<[string, unknown[]]>;
  del?: string[];
  reset?: true;
}

/** The ingest node's side: sends what changed as soon as the LiveView moves, and a beat every second. */
export class LiveStatePublisher {
  private readonly memory = new UnitMemory();
  private readonly sliceSeen = new Map<PublishedSlice, number>();
  private lastVersion = -1;
  private seq = 0;
  /** the broker's copy may differ from what this process sent: rewrite it whole */
  private rewrite = true;
  private busy = false;
  private again = false;
  private soon: NodeJS.Immediate | null = null;
  private timer: NodeJS.Timeout | null = null;
  private beatTimer: NodeJS.Timeout | null = null;
  private stops: Array<() => void> = [];
  /** tells this process's messages from a restarted ingest node's, whose sequence starts again */
  readonly epoch = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  published = 0;
  beats = 0;
  /** units sent (set or deleted), whole rewrites included */
  unitsSent = 0;

  constructor(
    private readonly broker: Broker,
    private readonly live: LiveView,
    private readonly options: { beatMs?: number; intervalMs?: number } = {},
  ) {}

  start(): this {
    if (this.beatTimer) return this;
    const unsubscribe = this.live.onChange?.(() => this.schedule());
    if (unsubscribe) this.stops.push(unsubscribe);
    // a view that cannot tell when it moves is compared on a short timer
    else this.timer = setInterval(() => void this.publish(), this.options.intervalMs ?? 250).unref();
    this.stops.push(
      this.broker.onState((state) => {
        if (state === 'up') {
          this.rewrite = true;
          this.schedule();
        }
      }),
    );
    this.beatTimer = setInterval(() => void this.beat(), this.options.beatMs ?? 1_000).unref();
    this.schedule();
    return this;
  }

  async close(): Promise<void> {
    for (const stop of this.stops) stop();
    this.stops = [];
    if (this.timer) clearInterval(this.timer);
    if (this.beatTimer) clearInterval(this.beatTimer);
    if (this.soon) clearImmediate(this.soon);
    this.timer = this.beatTimer = this.soon = null;
    await within(this.publish());
  }

  /** One send for all the moves of one turn of the event loop (a poll moves several slices). */
  private schedule(): void {
    this.soon ??= setImmediate(() => {
      this.soon = null;
      void this.publish();
    });
  }

  /** Sends what changed since the last send; resolves when the broker has it (or it failed). */
  async publish(): Promise<void> {
    if (this.busy) {
      this.again = true;
      return;
    }
    // commands would wait for the reconnect; the broker's return rewrites it all anyway
    if (this.broker.state !== 'up') {
      this.rewrite = true;
      return;
    }
    if (!this.rewrite && this.live.version === this.lastVersion) return;
    this.busy = true;
    try {
      const version = this.live.version;
      const changes = this.changes();
      if (this.rewrite) await this.sendWhole();
      else if (changes.set.length || changes.del.length) await this.sendChanges(changes);
      this.lastVersion = version;
    } catch (err) {
      this.rewrite = true;
      this.broker.log.warn({ err }, 'publishing the live state failed; the next send rewrites it whole');
    } finally {
      this.busy = false;
    }
    if (this.again) {
      this.again = false;
      this.schedule();
    }
  }

  private changes(): UnitChanges {
    const changes: UnitChanges = { set: [], del: [] };
    if (this.rewrite) this.sliceSeen.clear();
    for (const slice of PUBLISHED_SLICES) {
      const version = this.live.sliceVersion ? this.live.sliceVersion(slice) : this.live.version;
      if (this.sliceSeen.get(slice) === version) continue;
      this.sliceSeen.set(slice, version);
      this.memory.diff(slice, sliceRows(this.live, slice), changes);
    }
    return changes;
  }

  private async sendWhole(): Promise<void> {
    const { units, meta, channel } = liveKeys(this.broker);
    const all = this.memory.all();
    const s = this.seq + 1;
    const t = Date.now();
    const multi = this.broker.redis.multi().del(units);
    if (all.length) multi.hset(units, ...all.flat());
    await multi
      .hset(meta, 'e', this.epoch, 's', s, 't', t)
      .publish(channel, JSON.stringify({ e: this.epoch, s, t, reset: true }))
      .exec()
      .then(throwOnError);
    this.seq = s;
    this.rewrite = false;
    this.published++;
    this.unitsSent += all.length;
  }

  private async sendChanges(changes: UnitChanges): Promise<void> {
    const { units, meta, channel } = liveKeys(this.broker);
    const s = this.seq + 1;
    const t = Date.now();
    // the unit texts go in as they are: one JSON.parse on the edge reads the whole message
    const set = changes.set.map(([key, text]) => `[${JSON.stringify(key)},${text}]`).join(',');
    const message =
      `{"e":${JSON.stringify(this.epoch)},"s":${s},"t":${t},"set":[${set}],` + `"del":${JSON.stringify(changes.del)}}`;
    const multi = this.broker.redis.multi();
    if (changes.set.length) multi.hset(units, ...changes.set.flat());
    if (changes.del.length) multi.hdel(units, ...changes.del);
    await multi.hset(meta, 's', s, 't', t).publish(channel, message).exec().then(throwOnError);
    this.seq = s;
    this.published++;
    this.unitsSent += changes.set.length + changes.del.length;
  }

  /** Nothing to send: says the state is still current (edges measure their copy's age from it). */
  private async beat(): Promise<void> {
    if (this.busy || this.broker.state !== 'up') return;
    if (this.rewrite || this.live.version !== this.lastVersion) return this.publish();
    const { meta, channel } = liveKeys(this.broker);
    const t = Date.now();
    try {
      await this.broker.redis
        .multi()
        .hset(meta, 't', t)
        .publish(channel, JSON.stringify({ e: this.epoch, s: this.seq, t }))
        .exec()
        .then(throwOnError);
      this.beats++;
    } catch (err) {
      this.rewrite = true;
      this.broker.log.debug({ err }, 'the live state beat failed');
    }
  }
}

function throwOnError(results: Array<[Error | null, unknown]> | null): void {
  if (!results) throw new Error('the transaction was discarded');
  for (const [err] of results) if (err) throw err;
}

const RANK: Record<Freshness, number> = { fresh: 0, stale: 1, expired: 2 };

function verdicts(feeds: readonly FeedHealth[]): string {
  return feeds.map((f) => `${f.feed_id}\u0000${f.freshness}`).join('\u0001');
}

export interface BrokerLiveViewOptions {
  /** the config's thresholds: each feed's verdict is the worse of the ingest node's and this node's */
  freshness?: Config['freshness'];
  ageEveryMs?: number;
  now?: () => number;
}

/** An edge's copy of the live state, read-only, as the API reads it in one process. */
export class BrokerLiveView implements LiveView {
  private readonly slices = new Map<PublishedSlice, Map<string, readonly unknown[]>>();
  private readonly lists = new Map<PublishedSlice, { version: number; list: readonly unknown[] }>();
  private readonly versions = new Map<LiveSlice, number>();
  private versionCounter = 0;
  private readonly sub: Redis;
  private readonly now: () => number;
  /** the feeds as received, before this node judged their age again */
  private received: readonly FeedHealth[] = [];
  private judged: readonly FeedHealth[] = [];
  private ager: NodeJS.Timeout | null = null;
  private retry: NodeJS.Timeout | null = null;
  private syncing: Promise<void> | null = null;
  /** messages that arrived while a snapshot was being read */
  private buffered: LiveMessage[] | null = null;
  private closed = false;
  epoch: string | null = null;
  seq = 0;
  /** when this node last heard from the ingest node (a snapshot, a change or a beat), by its own clock */
  heardMs: number | null = null;
  /** the ingest node's clock at its last change or beat this node holds */
  publishedMs: number | null = null;
  resyncs = 0;
  changesApplied = 0;

  private constructor(
    private readonly broker: Broker,
    private readonly options: BrokerLiveViewOptions,
  ) {
    this.now = options.now ?? Date.now;
    this.sub = broker.connection('live-state');
    for (const slice of PUBLISHED_SLICES) this.slices.set(slice, new Map());
  }

  static async open(broker: Broker, options: BrokerLiveViewOptions = {}): Promise<BrokerLiveView> {
    const view = new BrokerLiveView(broker, options);
    if (options.freshness) view.ager = setInterval(() => view.age(), options.ageEveryMs ?? 1000).unref();
    const { channel } = liveKeys(broker);
    view.sub.on('message', (ch: string, text: string) => {
      if (ch === channel) view.receive(text);
    });
    await view.sub.subscribe(channel);
    await view.resync();
    // changes may have been missed while the subscription was down: read the whole state again.
    // Listened for only now: the first connection's ready could land after the read above and read it twice
    view.sub.on('ready', () => void view.resync());
    return view;
  }

  get version(): number {
    return this.versionCounter;
  }

  sliceVersion(slice: LiveSlice): number {
    return this.versions.get(slice) ?? 0;
  }

  vehicles(mode: Mode): readonly VehiclePosition[] {
    return this.list(`vehicles:${mode}`) as readonly VehiclePosition[];
  }

  arrivals(): readonly Arrival[] {
    return this.list('arrivals') as readonly Arrival[];
  }

  alerts(): readonly Alert[] {
    return this.list('alerts') as readonly Alert[];
  }

  feeds(): readonly FeedHealth[] {
    return this.judged;
  }

  /**
   * How old the state held is: since the ingest node last said it was current (a change or a
   * beat, by the ingest node's clock); null before this node ever read it.
   */
  ageMs(nowMs = this.now()): number | null {
    return this.publishedMs === null ? null : Math.max(0, nowMs - this.publishedMs);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.ager) clearInterval(this.ager);
    if (this.retry) clearTimeout(this.retry);
    this.sub.disconnect();
    // a snapshot read queued for a broker that is down would wait for its return: not awaited
    // (it catches its own failure and applies nothing once closed)
  }

  /** Judges the received feeds' age now; moves the version when a verdict changes. */
  age(nowMs = this.now()): void {
    const next = this.judge(nowMs);
    if (verdicts(next) === verdicts(this.judged)) return;
    this.judged = next;
    this.bump('feeds');
    this.bump('freshness');
  }

  private judge(nowMs: number): readonly FeedHealth[] {
    const cfg = this.options.freshness;
    if (!cfg) return this.received;
    return this.received.map((h) => {
      const own = freshnessAt({ header_ms: h.header_timestamp_ms, changed_ms: h.last_success_ms }, nowMs, cfg);
      return RANK[own] > RANK[h.freshness] ? { ...h, freshness: own } : h;
    });
  }

  /** Reads the whole state again (one read at a time; messages meanwhile are applied after it). */
  resync(): Promise<void> {
    this.syncing ??= this.readSnapshot().finally(() => {
      this.syncing = null;
    });
    return this.syncing;
  }

  private receive(text: string): void {
    let message: LiveMessage;
    try {
      message = JSON.parse(text) as LiveMessage;
    } catch (err) {
      this.broker.log.warn({ err }, 'an unreadable live state message; reading the whole state again');
      void this.resync();
      return;
    }
    if (this.buffered) this.buffered.push(message);
    else this.apply(message);
  }

  /** Applies a change or beat that follows what this node holds; anything else reads the snapshot. */
  private apply(m: LiveMessage): void {
    const isChange = m.set !== undefined || m.del !== undefined;
    const follows = m.e === this.epoch && !m.reset && m.s === (isChange ? this.seq + 1 : this.seq);
    if (!follows) {
      void this.resync();
      return;
    }
    if (isChange) {
      const touched = new Set<PublishedSlice>();
      for (const [key, rows] of m.set ?? []) this.put(key, rows, touched);
      for (const key of m.del ?? []) this.put(key, null, touched);
      this.touch(touched);
      this.seq = m.s;
      this.changesApplied++;
    }
    this.heardMs = this.now();
    this.publishedMs = m.t;
  }

  private async readSnapshot(): Promise<void> {
    if (this.closed) return;
    this.buffered = [];
    const { units, meta } = liveKeys(this.broker);
    try {
      const results = await this.broker.redis.multi().hgetall(meta).hgetall(units).exec();
      if (!results) throw new Error('the snapshot read was discarded');
      for (const [err] of results) if (err) throw err;
      if (this.closed) return;
      const head = results[0]![1] as Record<string, string>;
      const all = results[1]![1] as Record<string, string>;
      // nothing published yet (or a broker that lost its data): keep what this node holds until the ingest node sends
      if (head.e) {
        this.replace(all);
        this.epoch = head.e;
        this.seq = Number(head.s);
        this.publishedMs = Number(head.t) || null;
        this.heardMs = this.now();
        this.resyncs++;
      }
      const pending = this.buffered;
      this.buffered = null;
      for (const m of pending) {
        // what the snapshot already holds (a beat at its sequence still says it is current)
        const isBeat = !m.reset && m.set === undefined && m.del === undefined;
        if (m.e === this.epoch && (m.s < this.seq || (m.s === this.seq && !isBeat))) continue;
        this.apply(m);
      }
    } catch (err) {
      this.buffered = null;
      if (this.closed) return;
      this.broker.log.warn({ err }, 'reading the live state from the broker failed; serving the last copy');
      // tried again once the broker answers (its subscription's return also asks)
      this.retry ??= setTimeout(() => {
        this.retry = null;
        if (this.broker.state === 'up') void this.resync();
      }, 1_000).unref();
    }
  }

  private replace(all: Record<string, string>): void {
    const next = new Map<PublishedSlice, Map<string, readonly unknown[]>>();
    for (const slice of PUBLISHED_SLICES) next.set(slice, new Map());
    for (const [key, text] of Object.entries(all)) {
      const slice = sliceOfKey(key);
      if (!slice) continue;
      try {
        next.get(slice)!.set(key, JSON.parse(text) as unknown[]);
      } catch (err) {
        this.broker.log.warn({ err, key }, 'an unreadable live state unit; left out');
      }
    }
    const touched = new Set<PublishedSlice>();
    for (const slice of PUBLISHED_SLICES) {
      const before = this.slices.get(slice)!;
      const after = next.get(slice)!;
      if (before.size || after.size) touched.add(slice);
      this.slices.set(slice, after);
    }
    this.touch(touched);
  }

  private put(key: string, rows: readonly unknown[] | null, touched: Set<PublishedSlice>): void {
    const slice = sliceOfKey(key);
    if (!slice) return;
    const units = this.slices.get(slice)!;
    if (rows === null) units.delete(key);
    else units.set(key, rows);
    touched.add(slice);
  }

  private touch(touched: ReadonlySet<PublishedSlice>): void {
    for (const slice of touched) {
      if (slice === 'feeds') {
        this.received = (this.slices.get('feeds')!.get('feeds') ?? []) as readonly FeedHealth[];
        const next = this.judge(this.now());
        // a feed added or removed, or a verdict that changed
        if (verdicts(next) !== verdicts(this.judged)) this.bump('freshness');
        this.judged = next;
        this.bump('feeds');
      } else {
        this.bump(slice);
      }
    }
  }

  private bump(slice: LiveSlice): void {
    this.versions.set(slice, (this.versions.get(slice) ?? 0) + 1);
    this.versionCounter++;
  }

  private list(slice: PublishedSlice): readonly unknown[] {
    const version = this.sliceVersion(slice);
    let cached = this.lists.get(slice);
    if (!cached || cached.version !== version) {
      const list: unknown[] = [];
      for (const rows of this.slices.get(slice)!.values()) for (const row of rows) list.push(row);
      cached = { version, list };
      this.lists.set(slice, cached);
    }
    return cached.list;
  }
}
