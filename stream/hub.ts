// The fan-out hub: every open event stream of the process, whatever the transport. Query streams
// share one QueryTopic per distinct query; /events/stream subscribers share one group per
// distinct filter; the status page's viewers share one BroadcastTopic. Timers are shared too: one ping, one sweep
// (lifetime, idle topics), one
// coalescing timer for recomputes; nothing runs per connection.
import type { Logger } from '../core/logger.ts';
import type { Config } from '../core/config.ts';
import type { DomainEvent, EventBus, Unsubscribe } from '../core/events.ts';
import { BroadcastTopic } from './broadcast-topic.ts';
import type { EventLog, StoredEvent } from './event-log.ts';
import { EventFanout } from './event-fanout.ts';
import type { EventFilter } from './event-filter.ts';
import type { TopicSnapshot } from './item-diff.ts';
import { parseEventId } from './event-log.ts';
import { QueryTopic } from './query-topic.ts';
import { frameBytes } from './sse-frame.ts';
import { SSE_HEADERS, type SseSink } from './sse-sink.ts';
import { Subscriber, type CloseReason, type Subscription } from './subscriber.ts';

export interface HubOptions {
  /** bytes a client may fall behind before it is disconnected (sse.buffer_bytes) */
  readonly bufferBytes: number;
  /** a `: ping` for every stream idle this long (sse.ping_interval_s); /events/stream groups with events get none */
  readonly pingIntervalMs: number;
  /** upper bound of a connection's life; each ends between 90% and 100% of it (sse.max_connection_s) */
  readonly maxConnectionMs: number;
  /** frames and changes within this window share one write / one recompute (sse.coalesce_ms) */
  readonly coalesceMs: number;
  /** the `retry:` sent once at the start of every stream */
  readonly retryMs?: number;
  /** a query topic without subscribers is dropped after this long (its history with it) */
  readonly topicIdleMs?: number;
  readonly sweepIntervalMs?: number;
  /** share of the lifetime randomly taken off each deadline, so reconnections spread out */
  readonly lifetimeJitter?: number;
  readonly now?: () => number;
  readonly random?: () => number;
  readonly log?: Logger;
}

export function hubOptionsFromConfig(sse: Config['sse'], extra: Partial<HubOptions> = {}): HubOptions {
  return {
    bufferBytes: sse.buffer_bytes,
    pingIntervalMs: sse.ping_interval_s * 1000,
    maxConnectionMs: sse.max_connection_s * 1000,
    coalesceMs: sse.coalesce_ms,
    ...extra,
  };
}

/** Decided before the response headers are written; start() then runs the stream. */
export interface StreamPlan {
  /** the client's Last-Event-ID cannot be honoured: the stream starts with `reset` */
  readonly tooOld: boolean;
  /** SSE response headers, with `Last-Event-ID: earliest` when tooOld */
  readonly headers: ReadonlyArray<readonly [string, string]>;
  start(sink: SseSink): Subscription;
}

export interface QueryStreamRequest {
  /** path + normalized query, API key excluded (anything else the body depends on included) */
  readonly key: string;
  /** the route's JSON result for this query; used by the first subscriber of the key */
  readonly compute: () => Promise<TopicSnapshot>;
  /** change channels this query depends on; absent or empty: every change */
  readonly channels?: readonly string[];
  /** Last-Event-ID header or last_event_id parameter */
  readonly lastEventId?: string | null;
}

export interface EventStreamRequest {
  readonly filter: EventFilter;
  readonly lastEventId?: string | null;
}

export interface HubStats {
  subscribers: number;
  queryTopics: number;
  eventGroups: number;
  computes: number;
  computeFailures: number;
  eventFlushes: number;
  framesEncoded: number;
  eventWrites: number;
  closed: Record<CloseReason, number>;
}

const EARLIEST_HEADERS = Object.freeze([...SSE_HEADERS, ['Last-Event-ID', 'earliest'] as const]);
const PING = frameBytes({ comment: 'ping' });

export class StreamHub {
  private readonly subscribers = new Map<number, Subscriber>();
  private readonly topics = new Map<string, QueryTopic>();
  /** channel → topics depending on it; '' holds topics that depend on every change */
  private readonly byChannel = new Map<string, Set<QueryTopic>>();
  private readonly dirtyTopics = new Set<QueryTopic>();
  private readonly broadcasts = new Map<string, BroadcastTopic>();
  private recomputeTimer: NodeJS.Timeout | null = null;
  private pingTimer: NodeJS.Timeout | null = null;
  /** when query topics and broadcasts were last pinged (they are pinged every interval) */
  private lastPingMs: number;
  /** no stream's lifetime ends before this: the sweep looks at streams only from then on */
  private nextDeadlineMs = Number.POSITIVE_INFINITY;
  private sweepTimer: NodeJS.Timeout | null = null;
  private nextSubscriberId = 1;
  private readonly fanout: EventFanout;
  private readonly retryFrame: Buffer;
  private readonly now: () => number;
  private readonly closedBy: Record<CloseReason, number> = {
    client: 0,
    slow: 0,
    lifetime: 0,
    replay_partial: 0,
    error: 0,
    revoked: 0,
    shutdown: 0,
  };
  private retiredComputes = 0;
  private retiredFailures = 0;
  private closing = false;

  constructor(
    private readonly options: HubOptions,
    readonly eventLog: EventLog,
  ) {
    this.now = options.now ?? Date.now;
    this.lastPingMs = this.now();
    this.retryFrame = frameBytes({ retry: options.retryMs ?? 3000 });
    this.fanout = new EventFanout({
      log: eventLog,
      retryFrame: this.retryFrame,
      maxReplayBytes: options.bufferBytes,
      coalesceMs: options.coalesceMs,
      nowMs: this.now,
    });
  }

  /** Starts the shared ping and sweep timers. */
  start(): this {
    if (!this.pingTimer) {
      // a quarter of the interval: an event group falls idle at any time, and its first ping comes
      // at most a quarter interval late
      this.pingTimer = setInterval(() => this.keepAlive(), this.options.pingIntervalMs / 4).unref();
      this.sweepTimer = setInterval(() => this.sweep(), this.options.sweepIntervalMs ?? 1000).unref();
    }
    return this;
  }

  /**
   * Domain events from the bus become the persistent /events/stream (one batch per tick).
   * With `channelsOf`, the same batch also marks the query streams that depend on them dirty
   * (one recompute per topic per batch, whatever the number of events).
   */
  attachBus(bus: EventBus, channelsOf?: (event: DomainEvent) => readonly string[]): Unsubscribe {
    return bus.subscribe((events) => {
      this.publish(events);
      if (!channelsOf || events.length === 0) return;
      const channels = new Set<string>();
      for (const event of events) for (const channel of channelsOf(event)) channels.add(channel);
      if (channels.size) this.changed([...channels]);
    });
  }

  publish(events: readonly DomainEvent[]): void {
    // after close the events still reach the log (nothing is sent): what producers publish
    // while the process shuts down is replayed to clients that resume after the restart
    if (this.closing) this.eventLog.append(events);
    else this.fanout.ingest(events);
  }

  /** Events already in the log with their ids (a broker-fed log: broker/event-log.ts). */
  publishStored(stored: readonly StoredEvent[]): void {
    if (!this.closing) this.fanout.ingestStored(stored);
  }

  openEvents(request: EventStreamRequest): StreamPlan {
    const { tooOld } = this.fanout.resolveResume(request.lastEventId);
    return {
      tooOld,
      headers: tooOld ? EARLIEST_HEADERS : SSE_HEADERS,
      start: (sink) => {
        const subscriber = this.register(sink);
        if (!subscriber.closed) this.fanout.attach(subscriber, request.filter, request.lastEventId);
        return subscriber;
      },
    };
  }

  openQuery(request: QueryStreamRequest): StreamPlan {
    const lastId = parseEventId(request.lastEventId);
    const given = request.lastEventId != null && request.lastEventId !== '';
    const existing = this.topics.get(request.key);
    const tooOld = given && !(existing?.canResume(lastId) ?? false);
    return {
      tooOld,
      headers: tooOld ? EARLIEST_HEADERS : SSE_HEADERS,
      start: (sink) => {
        const subscriber = this.register(sink);
        if (!subscriber.closed) this.topicFor(request).attach(subscriber, lastId);
        return subscriber;
      },
    };
  }

  /** The broadcast topic `name` (created on first use); its frames are `event` events. */
  broadcast(name: string, event: string = name): BroadcastTopic {
    let topic = this.broadcasts.get(name);
    if (!topic) {
      topic = new BroadcastTopic(name, event, this.retryFrame);
      this.broadcasts.set(name, topic);
    }
    return topic;
  }

  /** One more reader of a broadcast topic; it gets `current()` at once. */
  openBroadcast(name: string, current: () => string): StreamPlan {
    return {
      tooOld: false,
      headers: SSE_HEADERS,
      start: (sink) => {
        const subscriber = this.register(sink);
        if (!subscriber.closed) this.broadcast(name).attach(subscriber, current());
        return subscriber;
      },
    };
  }

  /** Whether a stream for this query key exists (its first result was or is being computed). */
  hasQuery(key: string): boolean {
    return this.topics.has(key);
  }

  /** Something a query may depend on changed; every affected topic recomputes once per window. */
  changed(channels?: string | readonly string[]): void {
    if (channels === undefined) {
      for (const topic of this.topics.values()) topic.markDirty();
      return;
    }
    const list = typeof channels === 'string' ? [channels] : channels;
    const hit = new Set<QueryTopic>(this.byChannel.get('') ?? []);
    for (const channel of list) for (const topic of this.byChannel.get(channel) ?? []) hit.add(topic);
    for (const topic of hit) topic.markDirty();
  }

  /** Writes pending events now instead of at the end of the coalescing window. */
  flushEvents(): void {
    this.fanout.flush();
  }

  /** Pings every stream now. */
  ping(): void {
    this.lastPingMs = this.now();
    for (const topic of this.topics.values()) {
      for (const subscriber of topic.subscribers) subscriber.write(PING);
    }
    this.fanout.ping();
    for (const topic of this.broadcasts.values()) topic.writeAll(PING);
  }

  /**
   * The shared keep-alive: /events/stream groups idle for an interval (one with events needs
   * none), query topics and broadcasts every interval.
   */
  keepAlive(nowMs = this.now()): void {
    const interval = this.options.pingIntervalMs;
    this.fanout.pingIdle(nowMs, interval);
    if (nowMs - this.lastPingMs < interval) return;
    this.lastPingMs = nowMs;
    for (const topic of this.topics.values()) {
      for (const subscriber of topic.subscribers) subscriber.write(PING);
    }
    for (const topic of this.broadcasts.values()) topic.writeAll(PING);
  }

  /** Ends streams past their lifetime and forgets idle topics. */
  sweep(nowMs = this.now()): void {
    // every stream is looked at only once the earliest deadline passed, not every second
    if (nowMs >= this.nextDeadlineMs) {
      let next = Number.POSITIVE_INFINITY;
      for (const subscriber of this.subscribers.values()) {
        if (nowMs >= subscriber.deadlineMs) subscriber.close('lifetime');
        else if (subscriber.deadlineMs < next) next = subscriber.deadlineMs;
      }
      this.nextDeadlineMs = next;
    }
    const idleMs = this.options.topicIdleMs ?? 60_000;
    for (const topic of this.topics.values()) {
      if (topic.subscriberCount === 0 && !topic.computing && nowMs - topic.idleSinceMs >= idleMs) this.dropTopic(topic);
    }
  }

  stats(): HubStats {
    let computes = this.retiredComputes;
    let failures = this.retiredFailures;
    for (const topic of this.topics.values()) {
      computes += topic.computes;
      failures += topic.failures;
    }
    return {
      subscribers: this.subscribers.size,
      queryTopics: this.topics.size,
      eventGroups: this.fanout.groupCount,
      computes,
      computeFailures: failures,
      eventFlushes: this.fanout.flushes,
      framesEncoded: [...this.broadcasts.values()].reduce(
        (n, topic) => n + topic.framesEncoded,
        this.fanout.framesEncoded,
      ),
      eventWrites: this.fanout.writes,
      closed: { ...this.closedBy },
    };
  }

  /** Delivers pending events, ends every stream gracefully and stops the timers. */
  close(): void {
    if (this.closing) return;
    this.fanout.flush();
    this.closing = true;
    for (const timer of [this.pingTimer, this.sweepTimer, this.recomputeTimer]) if (timer) clearInterval(timer);
    this.pingTimer = this.sweepTimer = this.recomputeTimer = null;
    this.fanout.stop();
    this.fanout.closeAll('shutdown');
    for (const topic of this.topics.values()) topic.closeAll('shutdown');
    for (const topic of this.broadcasts.values()) topic.closeAll('shutdown');
    for (const subscriber of [...this.subscribers.values()]) subscriber.close('shutdown');
  }

  private register(sink: SseSink): Subscriber {
    const openedAt = this.now();
    const jitter = this.options.lifetimeJitter ?? 0.1;
    const lifetime = this.options.maxConnectionMs * (1 - jitter * (this.options.random ?? Math.random)());
    const subscriber = new Subscriber(
      this.nextSubscriberId++,
      sink,
      this.options.bufferBytes,
      openedAt,
      openedAt + lifetime,
      (s, reason) => {
        this.subscribers.delete(s.id);
        this.closedBy[reason]++;
      },
      this.options.log,
    );
    this.subscribers.set(subscriber.id, subscriber);
    if (subscriber.deadlineMs < this.nextDeadlineMs) this.nextDeadlineMs = subscriber.deadlineMs;
    if (this.closing) subscriber.close('shutdown');
    return subscriber;
  }

  private topicFor(request: QueryStreamRequest): QueryTopic {
    let topic = this.topics.get(request.key);
    if (topic) return topic;
    topic = new QueryTopic({
      key: request.key,
      compute: request.compute,
      channels: request.channels ?? [],
      historyBytes: this.options.bufferBytes,
      retryFrame: this.retryFrame,
      nowMs: this.now,
      requestRecompute: (t) => this.requestRecompute(t),
      log: this.options.log,
    });
    this.topics.set(request.key, topic);
    for (const channel of topic.channels.length ? topic.channels : ['']) {
      let set = this.byChannel.get(channel);
      if (!set) {
        set = new Set();
        this.byChannel.set(channel, set);
      }
      set.add(topic);
    }
    return topic;
  }

  private dropTopic(topic: QueryTopic): void {
    this.topics.delete(topic.key);
    this.dirtyTopics.delete(topic);
    this.retiredComputes += topic.computes;
    this.retiredFailures += topic.failures;
    for (const channel of topic.channels.length ? topic.channels : ['']) {
      const set = this.byChannel.get(channel);
      set?.delete(topic);
      if (set?.size === 0) this.byChannel.delete(channel);
    }
  }

  private requestRecompute(topic: QueryTopic): void {
    if (this.closing) return;
    this.dirtyTopics.add(topic);
    if (this.recomputeTimer) return;
    this.recomputeTimer = setTimeout(() => {
      this.recomputeTimer = null;
      const due = [...this.dirtyTopics];
      this.dirtyTopics.clear();
      // a topic still computing stays dirty and asks again when its compute ends
      for (const t of due) if (!t.computing && t.subscriberCount > 0) void t.recompute();
    }, this.options.coalesceMs);
  }
}
