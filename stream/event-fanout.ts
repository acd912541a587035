// Fan-out of the domain event stream: events from the bus are appended to the event log (which
// gives them ids), encoded once each, and written per filter group as one concatenated chunk, so
// under load a subscriber gets one write per flush whatever the number of events in it.
import type { DomainEvent } from '../core/events.ts';
import type { EventLog, StoredEvent } from './event-log.ts';
import { parseEventId } from './event-log.ts';
import { matchesFilter, normalizeFilter, type EventFilter, type NormalizedFilter } from './event-filter.ts';
import { frameBytes } from './sse-frame.ts';
import type { Subscriber } from './subscriber.ts';

interface Group {
  readonly filter: NormalizedFilter;
  readonly subscribers: Set<Subscriber>;
  /** when the group was last written to (events or a ping): a busy group needs no keep-alive */
  lastWriteMs: number;
}

export interface EventFanoutOptions {
  readonly log: EventLog;
  readonly retryFrame: Buffer;
  /** a resume replay larger than this is sent in parts, one per connection (sse.buffer_bytes) */
  readonly maxReplayBytes: number;
  /** frames due within this window share one write (sse.coalesce_ms) */
  readonly coalesceMs: number;
  readonly nowMs: () => number;
}

/** What the server needs before it writes the response headers. */
export interface EventResume {
  /** the client's id could not be honoured: it gets `reset` (header Last-Event-ID: earliest) */
  readonly tooOld: boolean;
  readonly lastId: number | null;
}

export class EventFanout {
  private readonly groups = new Map<string, Group>();
  private pending: StoredEvent[] = [];
  /** newest id written to the groups; newer events are pending and reach new subscribers by flush */
  private deliveredThrough: number | null;
  private timer: NodeJS.Timeout | null = null;
  private immediate: NodeJS.Immediate | null = null;
  /** when the last flush started: flushes start at most once per coalescing window */
  private lastFlushMs = Number.NEGATIVE_INFINITY;
  flushes = 0;
  framesEncoded = 0;
  writes = 0;

  constructor(private readonly options: EventFanoutOptions) {
    // restored events were delivered by the process that appended them
    this.deliveredThrough = options.log.latestId;
  }

  get subscriberCount(): number {
    let n = 0;
    for (const group of this.groups.values()) n += group.subscribers.size;
    return n;
  }

  get groupCount(): number {
    return this.groups.size;
  }

  ingest(events: readonly DomainEvent[]): void {
    const stored = this.options.log.append(events);
    if (stored.length === 0) return;
    for (const event of stored) this.pending.push(event);
    this.schedule();
  }

  /** Events the log already holds with their ids (a broker-fed log adopted them): fanned out as they are. */
  ingestStored(stored: readonly StoredEvent[]): void {
    if (stored.length === 0) return;
    for (const event of stored) this.pending.push(event);
    this.schedule();
  }

  resolveResume(lastEventId: string | null | undefined): EventResume {
    if (lastEventId == null || lastEventId === '') return { tooOld: false, lastId: null };
    const lastId = parseEventId(lastEventId);
    if (lastId === null) return { tooOld: true, lastId: null };
    return { tooOld: this.options.log.since(lastId) === 'too_old', lastId };
  }

  attach(subscriber: Subscriber, filterInput: EventFilter, lastEventId: string | null | undefined): void {
    const filter = normalizeFilter(filterInput);
    // decided again at attach: the log may have moved since the server asked for the headers
    const resume = this.resolveResume(lastEventId);
    let opening = this.options.retryFrame;
    let partial = false;
    if (resume.tooOld) {
      opening = Buffer.concat([opening, this.resetFrame()]);
    } else if (resume.lastId !== null) {
      const replay = this.replay(filter, resume.lastId);
      opening = Buffer.concat([opening, ...replay.frames]);
      partial = replay.partial;
    }
    if (!subscriber.write(opening)) return;
    if (partial) {
      // the rest follows on reconnect, from the last id this response carried
      subscriber.close('replay_partial');
      return;
    }
    let group = this.groups.get(filter.key);
    if (!group) {
      group = { filter, subscribers: new Set(), lastWriteMs: this.options.nowMs() };
      this.groups.set(filter.key, group);
    }
    const owner = group;
    owner.subscribers.add(subscriber);
    subscriber.detach = (s) => {
      owner.subscribers.delete(s);
      if (owner.subscribers.size === 0 && this.groups.get(owner.filter.key) === owner)
        this.groups.delete(owner.filter.key);
    };
  }

  /** Writes every pending event now (the scheduled path, and shutdown). */
  flush(): void {
    this.cancelSchedule();
    const events = this.pending;
    if (events.length === 0) return;
    this.pending = [];
    this.deliveredThrough = events[events.length - 1]!.id;
    this.flushes++;
    const startedMs = this.options.nowMs();
    this.lastFlushMs = startedMs;
    if (this.groups.size > 0) {
      const frames = new Array<Buffer | undefined>(events.length);
      for (const group of this.groups.values()) {
        const parts: Buffer[] = [];
        let bytes = 0;
        for (let i = 0; i < events.length; i++) {
          const event = events[i]!;
          if (!matchesFilter(group.filter, event)) continue;
          let f = frames[i];
          if (!f) {
            f = frames[i] = this.encode(event);
            this.framesEncoded++;
          }
          parts.push(f);
          bytes += f.length;
        }
        if (parts.length === 0) continue;
        const chunk = parts.length === 1 ? parts[0]! : Buffer.concat(parts, bytes);
        group.lastWriteMs = startedMs;
        for (const subscriber of group.subscribers) {
          this.writes++;
          subscriber.write(chunk);
        }
      }
    }
  }

  /**
   * Keep-alive for every group. The comment carries `id:` (which sets the client's Last-Event-ID
   * without dispatching an event), so a client whose filter matches rarely still resumes from
   * a recent id instead of one the log has already dropped.
   */
  ping(): void {
    this.pingIdle(this.options.nowMs(), Number.NEGATIVE_INFINITY);
  }

  /**
   * The keep-alive of groups written to neither by events nor by a ping for `idleMs`: a group
   * that had events needs none, and its clients' Last-Event-ID is recent. A ping to every stream
   * at once is one write per stream, a stall of the event loop as long as an event's fan-out.
   */
  pingIdle(nowMs: number, idleMs: number): void {
    if (this.groups.size === 0) return;
    let chunk: Buffer | null = null;
    for (const group of this.groups.values()) {
      if (nowMs - group.lastWriteMs < idleMs) continue;
      chunk ??= frameBytes({ comment: 'ping', id: this.deliveredThrough ?? undefined });
      group.lastWriteMs = nowMs;
      for (const subscriber of group.subscribers) subscriber.write(chunk);
    }
  }

  closeAll(reason: 'shutdown'): void {
    for (const group of [...this.groups.values()])
      for (const subscriber of [...group.subscribers]) subscriber.close(reason);
  }

  stop(): void {
    this.cancelSchedule();
  }

  /**
   * Idle: flush on the next turn of the event loop (events of one tick share a write). Busy (a
   * flush started less than coalesceMs ago): wait for the window, so more frames share each
   * write. Counted from the start of a flush: a fan-out longer than the window (thousands of
   * sockets) already let the next events gather, and waiting after it would only delay them.
   */
  private schedule(): void {
    if (this.timer || this.immediate) return;
    const wait = this.lastFlushMs + this.options.coalesceMs - this.options.nowMs();
    if (wait <= 0) {
      this.immediate = setImmediate(() => {
        this.immediate = null;
        this.flush();
      });
    } else {
      this.timer = setTimeout(() => {
        this.timer = null;
        this.flush();
      }, wait);
    }
  }

  private cancelSchedule(): void {
    if (this.timer) clearTimeout(this.timer);
    if (this.immediate) clearImmediate(this.immediate);
    this.timer = null;
    this.immediate = null;
  }

  private encode(event: StoredEvent): Buffer {
    return frameBytes({ id: event.id, event: event.type, data: event.payload });
  }

  private replay(filter: NormalizedFilter, lastId: number): { frames: Buffer[]; partial: boolean } {
    const since = this.options.log.since(lastId);
    const frames: Buffer[] = [];
    if (since === 'too_old') return { frames, partial: false };
    let bytes = 0;
    for (const event of since) {
      // pending events reach this subscriber through the next flush
      if (this.deliveredThrough === null || event.id > this.deliveredThrough) break;
      if (!matchesFilter(filter, event)) continue;
      const f = this.encode(event);
      if (bytes + f.length > this.options.maxReplayBytes && frames.length > 0) return { frames, partial: true };
      frames.push(f);
      bytes += f.length;
    }
    return { frames, partial: false };
  }

  /** Sent instead of a replay; carries the newest delivered id so the next reconnect resumes. */
  private resetFrame(): Buffer {
    const log = this.options.log;
    const data = JSON.stringify({
      reason: 'last_event_id_unknown',
      earliest_id: log.earliestId === null ? null : String(log.earliestId),
    });
    return frameBytes({ id: this.deliveredThrough ?? undefined, event: 'reset', data });
  }
}
