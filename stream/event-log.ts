// The retained log of domain events behind GET /api/v1/events/stream: it assigns the increasing
// ids clients resume from. The interface is what the hub needs, so a broker-backed log (NATS
// JetStream, Redis Streams) can replace the in-process one without touching the hub.
import type { DomainEvent, EventType } from '../core/events.ts';
import { EVENT_TYPES, toEnvelope } from '../core/events.ts';
import type { Mode } from '../core/types.ts';

export interface StoredEvent {
  /** increasing; unique for the life of the log, across restarts */
  readonly id: number;
  readonly type: EventType;
  readonly atMs: number;
  /** when the log took it (restored events: when the log that persisted them did); the age bound counts from here */
  readonly loggedMs: number;
  readonly modes: readonly Mode[];
  /** bus and streetcar route ids */
  readonly routes: readonly string[];
  /** rail line ids */
  readonly lines: readonly string[];
  /** the event as sent in the `data:` field (JSON, one line) */
  readonly payload: string;
}

export interface EventLog {
  /** Stores events in order and returns them with their ids; events that cannot be encoded are skipped. */
  append(events: readonly DomainEvent[]): StoredEvent[];
  /**
   * Retained events with id > afterId, oldest first. `too_old` when the log cannot prove it still
   * holds every event after `afterId`: older than the retained window, or an id it never issued.
   */
  since(afterId: number): StoredEvent[] | 'too_old';
  readonly earliestId: number | null;
  readonly latestId: number | null;
  /** Makes everything appended so far durable (no-op for a memory log). */
  flush(): Promise<void>;
  close(): Promise<void>;
}

/** JSON text sent as `data:`: the event's envelope (core/event-schemas.ts), as webhooks send it. */
export function encodeEventPayload(event: DomainEvent): string {
  return JSON.stringify(toEnvelope(event));
}

const KNOWN_TYPES = new Set<string>(EVENT_TYPES);

/** Parses a payload written by encodeEventPayload (e.g. when reloading a persisted log). */
export function decodeStoredEvent(id: number, payload: string, loggedMs?: number): StoredEvent | null {
  let parsed: unknown;
  try {
    // only the scope is needed, and it comes before `data` (encodeEventPayload's key order): a
    // restart then parses a few dozen bytes per event, not the whole log. Inside a JSON string a
    // quote is always escaped, so the first `,"data":` is the key.
    const dataAt = payload.indexOf(',"data":');
    parsed = JSON.parse(dataAt > 0 ? `${payload.slice(0, dataAt)}}` : payload);
  } catch {
    return null;
  }
  if (!parsed || typeof parsed !== 'object') return null;
  const { type, timestamp, modes, routes, lines } = parsed as Record<string, unknown>;
  const atMs = typeof timestamp === 'string' ? Date.parse(timestamp) : Number.NaN;
  if (typeof type !== 'string' || !KNOWN_TYPES.has(type) || Number.isNaN(atMs)) return null;
  if (!Array.isArray(modes) || !Array.isArray(routes)) return null;
  return {
    id,
    type: type as EventType,
    atMs,
    loggedMs: loggedMs ?? atMs,
    modes: modes.filter((m): m is Mode => typeof m === 'string'),
    routes: routes.filter((r): r is string => typeof r === 'string'),
    // a log written before envelope version 1 had rail lines among `routes` and no `lines`
    lines: Array.isArray(lines) ? lines.filter((r): r is string => typeof r === 'string') : [],
    payload,
  };
}

/**
 * The first id a log may issue when it starts at `nowMs`: the clock in microseconds. Ids issued
 * before a crash but never persisted are then below every id issued after the restart (unless a
 * process issued more than 1,000 events per ms on average), so a client holding one of them
 * resumes without skipping new events that would otherwise reuse its id.
 */
export function idFloor(nowMs: number): number {
  return Math.floor(nowMs) * 1000;
}

/** Parses a Last-Event-ID value; null when it is not one of our ids. */
export function parseEventId(value: string | null | undefined): number | null {
  if (value == null || !/^\d{1,16}$/.test(value)) return null;
  const id = Number(value);
  return Number.isSafeInteger(id) ? id : null;
}

/**
 * What one retained event costs, as the byte bound counts it: its payload (one byte per
 * character for the ASCII JSON we encode) plus the record, its arrays and the ring slot.
 */
export const EVENT_OVERHEAD_BYTES = 160;

export function storedEventBytes(event: Pick<StoredEvent, 'payload'>): number {
  return event.payload.length + EVENT_OVERHEAD_BYTES;
}

export interface MemoryEventLogOptions {
  /** most events retained (config sse.event_log_size) */
  capacity: number;
  /** oldest events are dropped past this many bytes (storedEventBytes; sse.event_log_max_bytes) */
  maxBytes?: number;
  /** … and once logged longer ago than this (sse.event_log_max_age_s) */
  maxAgeMs?: number;
  now?: () => number;
  /** events reloaded from durable storage, oldest first */
  restored?: readonly StoredEvent[];
  /** ids at or below this were issued before (e.g. rows that could not be reloaded) */
  issuedThrough?: number;
  /** called with each event that could not be encoded (e.g. a cycle in data) */
  onRejected?: (event: DomainEvent, err: unknown) => void;
}

/**
 * A ring bounded three ways: count (its slots), bytes and age, whichever binds first. O(1)
 * append, O(log n) lookup by id. The newest event is always kept, so a client that saw it
 * resumes without a reset however quiet the stream was.
 */
export class MemoryEventLog implements EventLog {
  private readonly ring: Array<StoredEvent | undefined>;
  /** index of the oldest retained event */
  private head = 0;
  private count = 0;
  private nextId: number;
  private retainedBytes = 0;
  private readonly maxBytes: number;
  private readonly maxAgeMs: number;
  private readonly now: () => number;
  rejected = 0;
  /** events dropped by the byte bound and by the age bound (the count bound is not counted) */
  evictedForBytes = 0;
  evictedForAge = 0;

  constructor(private readonly options: MemoryEventLogOptions) {
    if (!Number.isInteger(options.capacity) || options.capacity < 1)
      throw new RangeError('capacity must be a positive integer');
    this.ring = new Array<StoredEvent | undefined>(options.capacity);
    this.maxBytes = options.maxBytes ?? Number.POSITIVE_INFINITY;
    this.maxAgeMs = options.maxAgeMs ?? Number.POSITIVE_INFINITY;
    this.now = options.now ?? Date.now;
    const restored = options.restored ?? [];
    for (const event of restored.slice(-options.capacity)) this.push(event);
    this.evictAged();
    const last = restored.length ? restored[restored.length - 1]!.id : 0;
    this.nextId = Math.max(last + 1, (options.issuedThrough ?? 0) + 1, idFloor(this.now()));
  }

  get capacity(): number {
    return this.ring.length;
  }

  get size(): number {
    return this.count;
  }

  /** storedEventBytes of every retained event */
  get bytes(): number {
    return this.retainedBytes;
  }

  get earliestId(): number | null {
    return this.count ? this.at(0).id : null;
  }

  get latestId(): number | null {
    return this.count ? this.at(this.count - 1).id : null;
  }

  append(events: readonly DomainEvent[]): StoredEvent[] {
    const stored: StoredEvent[] = [];
    const loggedMs = this.now();
    for (const event of events) {
      let payload: string;
      try {
        payload = encodeEventPayload(event);
      } catch (err) {
        // a BigInt or a cycle in one event's data must not take the stream down
        this.rejected++;
        this.options.onRejected?.(event, err);
        continue;
      }
      const entry: StoredEvent = {
        id: this.nextId++,
        type: event.type,
        atMs: event.at_ms,
        loggedMs,
        modes: event.modes,
        routes: event.routes,
        lines: event.lines,
        payload,
      };
      this.push(entry);
      stored.push(entry);
    }
    this.evictAged();
    return stored;
  }

  /**
   * Events whose ids were issued elsewhere (a broker's sequence, broker/event-log.ts), oldest
   * first: kept in order; ids at or below the newest retained are skipped (already held).
   */
  adopt(events: readonly StoredEvent[]): StoredEvent[] {
    const latest = this.latestId ?? Number.NEGATIVE_INFINITY;
    const fresh = events.filter((event) => event.id > latest);
    for (const event of fresh) this.push(event);
    if (fresh.length) this.nextId = Math.max(this.nextId, fresh[fresh.length - 1]!.id + 1);
    this.evictAged();
    return fresh;
  }

  since(afterId: number): StoredEvent[] | 'too_old' {
    // a quiet stream appends nothing, so age is also enforced when someone asks
    this.evictAged();
    if (this.count === 0) return 'too_old';
    const earliest = this.at(0).id;
    const latest = this.at(this.count - 1).id;
    // an id past the newest was never issued by this log (another deployment, or lost in a crash)
    if (afterId > latest || afterId < earliest - 1) return 'too_old';
    let lo = 0;
    let hi = this.count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.at(mid).id <= afterId) lo = mid + 1;
      else hi = mid;
    }
    const out = new Array<StoredEvent>(this.count - lo);
    for (let i = lo; i < this.count; i++) out[i - lo] = this.at(i);
    return out;
  }

  async flush(): Promise<void> {}

  async close(): Promise<void> {}

  private at(logical: number): StoredEvent {
    return this.ring[(this.head + logical) % this.ring.length]!;
  }

  private push(event: StoredEvent): void {
    const capacity = this.ring.length;
    if (this.count === capacity) this.dropOldest();
    this.ring[(this.head + this.count) % capacity] = event;
    this.count++;
    this.retainedBytes += storedEventBytes(event);
    while (this.count > 1 && this.retainedBytes > this.maxBytes) {
      this.dropOldest();
      this.evictedForBytes++;
    }
  }

  private evictAged(): void {
    if (this.maxAgeMs === Number.POSITIVE_INFINITY) return;
    const cutoff = this.now() - this.maxAgeMs;
    while (this.count > 1 && this.at(0).loggedMs < cutoff) {
      this.dropOldest();
      this.evictedForAge++;
    }
  }

  private dropOldest(): void {
    const oldest = this.ring[this.head]!;
    this.retainedBytes -= storedEventBytes(oldest);
    // the slot must not keep the payload alive until it is overwritten
    this.ring[this.head] = undefined;
    this.head = (this.head + 1) % this.ring.length;
    this.count--;
  }
}
