// One stream per distinct query (path + normalized query, API key excluded). The result is
// recomputed once per burst of changes, diffed once, encoded once, and the same bytes are
// written to every subscriber. A short history of encoded diffs lets a client resume by id.
import type { Logger } from '../core/logger.ts';
import { idFloor } from './event-log.ts';
import { diffItems, indexItems, type ItemIndex, type TopicSnapshot } from './item-diff.ts';
import { frameBytes } from './sse-frame.ts';
import type { Subscriber } from './subscriber.ts';

/** One recompute's diff: its events have ids firstSeq, firstSeq + 1, … at `offsets` in `bytes`. */
interface HistoryEntry {
  readonly firstSeq: number;
  readonly lastSeq: number;
  readonly offsets: readonly number[];
  readonly bytes: Buffer;
}

export interface QueryTopicOptions {
  readonly key: string;
  readonly compute: () => Promise<TopicSnapshot>;
  /** change channels this query depends on (e.g. 'alerts', 'realtime:bus'); empty: every change */
  readonly channels: readonly string[];
  /** encoded diff bytes kept for resume; a larger gap gets a reset */
  readonly historyBytes: number;
  readonly retryFrame: Buffer;
  readonly nowMs: () => number;
  /** asks the hub for a coalesced recompute */
  readonly requestRecompute: (topic: QueryTopic) => void;
  readonly log?: Logger;
}

export class QueryTopic {
  readonly subscribers = new Set<Subscriber>();
  /** subscribers waiting for the first result */
  private waiting: Subscriber[] = [];
  private index: ItemIndex | null = null;
  /** id of the newest event (a reset carries the current one) */
  private seq: number;
  /** every diff event with an id above this is in `history` */
  private historyBase: number;
  private history: HistoryEntry[] = [];
  private historySize = 0;
  private resetFrame: Buffer | null = null;
  private openingFrame: Buffer | null = null;
  dirty = true;
  computing = false;
  idleSinceMs: number;
  computes = 0;
  failures = 0;

  constructor(private readonly options: QueryTopicOptions) {
    this.idleSinceMs = options.nowMs();
    // ids of an earlier topic for the same query (or an earlier process) stay below this one's
    this.seq = idFloor(options.nowMs());
    this.historyBase = this.seq;
  }

  get key(): string {
    return this.options.key;
  }

  get channels(): readonly string[] {
    return this.options.channels;
  }

  get subscriberCount(): number {
    return this.subscribers.size + this.waiting.length;
  }

  /** Whether a client holding `lastId` can continue from history with no gap. */
  canResume(lastId: number | null): boolean {
    return lastId !== null && this.index !== null && lastId >= this.historyBase && lastId <= this.seq;
  }

  attach(subscriber: Subscriber, lastId: number | null): void {
    subscriber.detach = (s) => this.detach(s);
    if (this.index === null) {
      // the response starts now (headers, retry); the reset follows the first result
      if (!subscriber.write(this.options.retryFrame)) return;
      this.waiting.push(subscriber);
      if (!this.computing) void this.recompute();
      return;
    }
    const opening = this.canResume(lastId) ? this.replayAfter(lastId!) : this.opening();
    if (!subscriber.write(opening)) return;
    this.subscribers.add(subscriber);
    // an idle topic stopped recomputing; the diff since the state the client now holds follows
    if (this.dirty) this.options.requestRecompute(this);
  }

  markDirty(): void {
    this.dirty = true;
    if (this.subscriberCount > 0) this.options.requestRecompute(this);
  }

  /** Ends every subscriber (shutdown, topic disposal). */
  closeAll(reason: 'shutdown'): void {
    for (const subscriber of [...this.subscribers, ...this.waiting]) subscriber.close(reason);
  }

  async recompute(): Promise<void> {
    if (this.computing) return;
    this.computing = true;
    this.dirty = false;
    this.computes++;
    let snapshot: TopicSnapshot | null = null;
    try {
      snapshot = await this.options.compute();
      this.apply(snapshot);
    } catch (err) {
      this.failures++;
      this.dirty = true;
      this.options.log?.error({ err }, `stream ${this.options.key}: recompute failed`);
      if (this.index === null) {
        // nothing to send yet: the clients reconnect after `retry` and the next attach retries
        const waiting = this.waiting;
        this.waiting = [];
        for (const subscriber of waiting) subscriber.close('error');
      }
    } finally {
      this.computing = false;
    }
    if (this.dirty && this.subscriberCount > 0) this.options.requestRecompute(this);
  }

  private apply(snapshot: TopicSnapshot): void {
    // encode everything before touching state: a body or item that cannot be serialized leaves
    // the topic as it was, and the failure is counted by recompute()
    if (this.index === null) {
      const index = indexItems(snapshot.items);
      const reset = frameBytes({ id: this.seq, event: 'reset', data: JSON.stringify(snapshot.body) ?? 'null' });
      this.index = index;
      this.resetFrame = reset;
      this.openingFrame = null;
      const waiting = this.waiting;
      this.waiting = [];
      for (const subscriber of waiting) {
        if (subscriber.write(reset)) this.subscribers.add(subscriber);
      }
      return;
    }
    const { next, changes } = diffItems(this.index, snapshot.items);
    const firstSeq = this.seq + 1;
    const frames = changes.map((change, i) => frameBytes({ id: firstSeq + i, event: change.kind, data: change.data }));
    const lastSeq = firstSeq + frames.length - 1;
    const reset = frameBytes({
      id: frames.length ? lastSeq : this.seq,
      event: 'reset',
      data: JSON.stringify(snapshot.body) ?? 'null',
    });
    this.index = next;
    this.resetFrame = reset;
    this.openingFrame = null;
    if (frames.length === 0) return;
    this.seq = lastSeq;
    const offsets: number[] = [];
    let offset = 0;
    for (const f of frames) {
      offsets.push(offset);
      offset += f.length;
    }
    const bytes = frames.length === 1 ? frames[0]! : Buffer.concat(frames, offset);
    this.remember({ firstSeq, lastSeq, offsets, bytes });
    for (const subscriber of this.subscribers) subscriber.write(bytes);
  }

  private remember(entry: HistoryEntry): void {
    this.history.push(entry);
    this.historySize += entry.bytes.length;
    while (this.historySize > this.options.historyBytes && this.history.length) {
      const dropped = this.history.shift()!;
      this.historySize -= dropped.bytes.length;
      this.historyBase = dropped.lastSeq;
    }
  }

  /** retry + every retained diff event after `lastId` (slices of the shared buffers, no re-encoding). */
  private replayAfter(lastId: number): Buffer {
    const parts: Buffer[] = [this.options.retryFrame];
    for (const entry of this.history) {
      if (entry.lastSeq <= lastId) continue;
      if (entry.firstSeq > lastId) parts.push(entry.bytes);
      else parts.push(entry.bytes.subarray(entry.offsets[lastId + 1 - entry.firstSeq]));
    }
    return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
  }

  /** retry + reset, concatenated once per result for every client that connects meanwhile */
  private opening(): Buffer {
    this.openingFrame ??= Buffer.concat([this.options.retryFrame, this.resetFrame!]);
    return this.openingFrame;
  }

  private detach(subscriber: Subscriber): void {
    this.subscribers.delete(subscriber);
    const i = this.waiting.indexOf(subscriber);
    if (i !== -1) this.waiting.splice(i, 1);
    if (this.subscriberCount === 0) this.idleSinceMs = this.options.nowMs();
  }
}
