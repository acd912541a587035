// One event log for every node: the ingest node appends each domain event to a Redis stream whose
// entry ids are the SSE event ids (`<id>-0`, one dense sequence from a counter, assigned inside a
// Lua script); every serving node mirrors the stream's retained tail in a MemoryEventLog and
// follows it. A Last-Event-ID issued by one edge then resumes on any other with no gap and no
// duplicate, and an id older than what is retained gets the same `reset` as in one process.
import type { Redis } from 'ioredis';
import type { DomainEvent, EventBus, Unsubscribe } from '../core/events.ts';
import {
  decodeStoredEvent,
  encodeEventPayload,
  EVENT_OVERHEAD_BYTES,
  MemoryEventLog,
  type EventLog,
  type StoredEvent,
} from '../stream/event-log.ts';
import { LoopStop, type Broker } from './redis.ts';

/**
 * KEYS[1] stream, KEYS[2] id counter; ARGV: capacity, maxAgeMs (0: none), payload…
 * Returns {firstId, loggedMs}. The counter starts at the clock in µs (idFloor), so after a broker
 * that lost its data every new id is above the ids clients hold: they get a reset, never a
 * wrong resume.
 */
const APPEND_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if redis.call('EXISTS', KEYS[2]) == 0 then
  redis.call('SET', KEYS[2], string.format('%d', now * 1000))
end
local n = #ARGV - 2
local last = redis.call('INCRBY', KEYS[2], n)
local first = last - n + 1
for i = 1, n do
  redis.call('XADD', KEYS[1], string.format('%d', first + i - 1) .. '-0', 'p', ARGV[i + 2], 'l', now)
end
redis.call('XTRIM', KEYS[1], 'MAXLEN', tonumber(ARGV[1]))
local maxAge = tonumber(ARGV[2])
if maxAge > 0 then
  local cutoff = now - maxAge
  for round = 1, 100 do
    local head = redis.call('XRANGE', KEYS[1], '-', '+', 'COUNT', 100)
    if #head == 0 then break end
    local keep = nil
    for i = 1, #head do
      if tonumber(head[i][2][4]) >= cutoff then keep = head[i][1] break end
    end
    -- all of this batch is too old: trim to its newest (the log's newest entry always stays)
    if keep == nil then keep = head[#head][1] end
    redis.call('XTRIM', KEYS[1], 'MINID', keep)
    if keep ~= head[#head][1] or #head < 100 then break end
  end
end
return {string.format('%d', first), now}
`;

export interface BrokerEventLogKeys {
  stream: string;
  counter: string;
}

export function eventLogKeys(broker: Broker): BrokerEventLogKeys {
  return { stream: broker.key('events'), counter: broker.key('events:seq') };
}

export interface BrokerLogBounds {
  /** sse.event_log_size */
  capacity: number;
  /** sse.event_log_max_bytes (the mirror enforces it) */
  maxBytes?: number;
  /** sse.event_log_max_age_s × 1000 */
  maxAgeMs?: number;
}

/**
 * The ingest node's side: every batch the bus delivers is appended in order, one script call per
 * batch. While the broker is down, batches wait in memory (at most `capacity` events: older ones
 * could not be resumed anyway) and go out in order when it returns.
 */
export class BrokerEventPublisher {
  private queue: string[] = [];
  private sending: Promise<void> | null = null;
  private retryTimer: NodeJS.Timeout | null = null;
  private closed = false;
  appended = 0;
  /** events dropped while the broker was down past `capacity` */
  dropped = 0;
  rejected = 0;

  constructor(
    private readonly broker: Broker,
    private readonly bounds: BrokerLogBounds,
  ) {
    broker.redis.defineCommand('transitAppendEvents', { numberOfKeys: 2, lua: APPEND_LUA });
  }

  attach(bus: EventBus): Unsubscribe {
    return bus.subscribe((events) => this.publish(events));
  }

  publish(events: readonly DomainEvent[]): void {
    if (this.closed) return;
    for (const event of events) {
      try {
        this.queue.push(encodeEventPayload(event));
      } catch (err) {
        this.rejected++;
        this.broker.log.error({ err }, 'event could not be encoded; skipped');
      }
    }
    if (this.queue.length > this.bounds.capacity) {
      const drop = this.queue.length - this.bounds.capacity;
      this.queue.splice(0, drop);
      this.dropped += drop;
    }
    this.kick();
  }

  /** Resolves when everything published so far reached the broker. */
  async flush(): Promise<void> {
    while (this.queue.length || this.sending) {
      this.kick();
      await (this.sending ?? new Promise((r) => setTimeout(r, 50)));
    }
  }

  /**
   * Waits for the broker to take what is queued (a broker that is down gets a second, not five),
   * then stops; what it did not take is left in `pending()`.
   */
  async close(timeoutMs = this.broker.state === 'up' ? 5000 : 1000): Promise<void> {
    await Promise.race([this.flush(), new Promise((r) => setTimeout(r, timeoutMs).unref())]);
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
  }

  /** The encoded events the broker has not taken (kept by the caller across a restart). */
  pending(): readonly string[] {
    return this.queue;
  }

  /** Events kept from before a restart, appended ahead of anything published since. */
  restore(payloads: readonly string[]): void {
    if (this.closed || payloads.length === 0) return;
    this.queue.unshift(...payloads);
    this.kick();
  }

  private kick(): void {
    if (this.sending || this.retryTimer || this.queue.length === 0) return;
    this.sending = this.sendOnce().finally(() => {
      this.sending = null;
    });
  }

  private async sendOnce(): Promise<void> {
    // a batch of at most 1,000 events per call keeps the script's time in Redis short
    const batch = this.queue.slice(0, 1000);
    const keys = eventLogKeys(this.broker);
    try {
      const cmd = this.broker.redis as Redis & {
        transitAppendEvents(...args: Array<string | number>): Promise<[string, number]>;
      };
      await cmd.transitAppendEvents(
        keys.stream,
        keys.counter,
        this.bounds.capacity,
        this.bounds.maxAgeMs ?? 0,
        ...batch,
      );
      this.queue.splice(0, batch.length);
      this.appended += batch.length;
      if (this.queue.length) queueMicrotask(() => this.kick());
    } catch (err) {
      this.broker.log.warn({ err, pending: this.queue.length }, 'appending events to the broker failed; retrying');
      this.retryTimer = setTimeout(() => {
        this.retryTimer = null;
        this.kick();
      }, 250);
      this.retryTimer.unref();
    }
  }
}

type Entry = [id: string, fields: string[]];

function toStored(entry: Entry): StoredEvent | null {
  const id = Number(entry[0].slice(0, entry[0].indexOf('-')));
  const fields = entry[1];
  let payload: string | undefined;
  let loggedMs: number | undefined;
  for (let i = 0; i + 1 < fields.length; i += 2) {
    if (fields[i] === 'p') payload = fields[i + 1];
    else if (fields[i] === 'l') loggedMs = Number(fields[i + 1]);
  }
  return payload === undefined ? null : decodeStoredEvent(id, payload, loggedMs);
}

export interface BrokerEventLogOptions extends BrokerLogBounds {
  /** events adopted from the broker, in id order (feed them to StreamHub.publishStored) */
  onEvents?: (events: readonly StoredEvent[]) => void;
  /** the mirror was rebuilt (a gap: the broker lost or trimmed what this node had not read) */
  onRebuilt?: () => void;
  /** how long one XREAD blocks (default 2 s); shorter in tests */
  blockMs?: number;
  now?: () => number;
}

/**
 * What a serving node's hub reads: the broker's retained tail mirrored in memory, kept current
 * by one blocking XREAD loop (one reader per node, whatever the number of clients). Ids are the
 * broker's, dense; a gap (this node was away longer than the broker keeps events, or the broker
 * lost its data) rebuilds the mirror from the broker, so no client resumes across missing events.
 */
export class BrokerEventLog implements EventLog {
  private mirror: MemoryEventLog;
  private readonly reader: Redis;
  private running = false;
  private loop: Promise<void> | null = null;
  private readonly stopping = new LoopStop();
  /** events read from the broker and adopted */
  followed = 0;
  rebuilds = 0;
  corrupt = 0;

  private constructor(
    private readonly broker: Broker,
    private readonly options: BrokerEventLogOptions,
  ) {
    this.options = { ...options };
    this.mirror = this.emptyMirror([]);
    this.reader = broker.connection('event-log-reader');
  }

  static async open(broker: Broker, options: BrokerEventLogOptions): Promise<BrokerEventLog> {
    const log = new BrokerEventLog(broker, options);
    await log.rebuild();
    return log;
  }

  /** Starts following the broker (after the hub is wired to onEvents). */
  start(): this {
    if (!this.running) {
      this.running = true;
      this.loop = this.followLoop();
    }
    return this;
  }

  get earliestId(): number | null {
    return this.mirror.earliestId;
  }

  get latestId(): number | null {
    return this.mirror.latestId;
  }

  get size(): number {
    return this.mirror.size;
  }

  get bytes(): number {
    return this.mirror.bytes;
  }

  /** Delivers adopted events to `onEvents` and starts following the broker. */
  follow(onEvents: (events: readonly StoredEvent[]) => void): void {
    this.options.onEvents = onEvents;
    this.start();
  }

  /** Producers publish to the broker (BrokerEventPublisher), never to a serving node's mirror. */
  append(): StoredEvent[] {
    return [];
  }

  since(afterId: number): StoredEvent[] | 'too_old' {
    return this.mirror.since(afterId);
  }

  async flush(): Promise<void> {}

  async close(): Promise<void> {
    this.running = false;
    this.stopping.stop();
    this.reader.disconnect();
    await this.loop?.catch(() => undefined);
  }

  /** Reads the retained tail again: newest first until the count and byte bounds. */
  async rebuild(): Promise<void> {
    const { stream } = eventLogKeys(this.broker);
    const newestFirst = (await this.broker.redis.xrevrange(
      stream,
      '+',
      '-',
      'COUNT',
      this.options.capacity,
    )) as Entry[];
    const maxBytes = this.options.maxBytes ?? Number.POSITIVE_INFINITY;
    const restored: StoredEvent[] = [];
    let bytes = 0;
    for (const entry of newestFirst) {
      const event = toStored(entry);
      if (!event) {
        this.corrupt++;
        continue;
      }
      bytes += event.payload.length + EVENT_OVERHEAD_BYTES;
      if (bytes > maxBytes && restored.length) break;
      restored.push(event);
    }
    restored.reverse();
    this.mirror = this.emptyMirror(restored);
  }

  private emptyMirror(restored: StoredEvent[]): MemoryEventLog {
    return new MemoryEventLog({
      capacity: this.options.capacity,
      maxBytes: this.options.maxBytes,
      maxAgeMs: this.options.maxAgeMs,
      now: this.options.now,
      restored,
      // the mirror issues no id of its own; this only keeps its counter above the broker's
      issuedThrough: restored.length ? restored[restored.length - 1]!.id : 0,
    });
  }

  private async followLoop(): Promise<void> {
    const { stream } = eventLogKeys(this.broker);
    while (this.running) {
      const after = this.mirror.latestId;
      let res: Array<[string, Entry[]]> | null;
      try {
        const read = this.reader.xread(
          'COUNT',
          1000,
          'BLOCK',
          this.options.blockMs ?? 2000,
          'STREAMS',
          stream,
          after === null ? '0-0' : `${after}-0`,
        ) as Promise<Array<[string, Entry[]]> | null>;
        // with the broker down the read waits for its return; a close does not wait with it
        res = await this.stopping.race(read);
      } catch (err) {
        if (!this.running) return;
        this.broker.log.debug({ err }, 'event log read failed; retrying');
        await new Promise((r) => setTimeout(r, 250));
        continue;
      }
      if (!res || !this.running) continue;
      const events: StoredEvent[] = [];
      let gap = false;
      let expected = after === null ? null : after + 1;
      for (const entry of res[0]![1]) {
        const event = toStored(entry);
        const id = Number(entry[0].slice(0, entry[0].indexOf('-')));
        if (expected !== null && id !== expected) gap = true;
        expected = id + 1;
        if (event) events.push(event);
        else this.corrupt++;
      }
      if (gap) {
        // ids are dense: a jump means events this node never saw are gone from the broker
        this.broker.log.warn({ after, next: res[0]![1][0]?.[0] }, 'event log gap: mirror rebuilt from the broker');
        try {
          await this.rebuild();
        } catch (err) {
          this.broker.log.warn({ err }, 'rebuilding the event log mirror failed; retrying');
          continue;
        }
        this.rebuilds++;
        this.options.onRebuilt?.();
        continue;
      }
      const adopted = this.mirror.adopt(events);
      this.followed += adopted.length;
      if (adopted.length) this.options.onEvents?.(adopted);
    }
  }
}
