// The history append behind the live state: a poll's critical path ends once its rows are live
// and its events published; its batch waits here and is written in the order they came, each in
// its own transaction, whole or not at all (as before). Batches waiting together are not merged
// into one transaction: with our row shapes that showed no consistent gain, the commit's cost
// being mostly DuckDB's checkpoints, wherever they land (bench/history-append.ts).
// The queue is bounded: when full, `room()` holds the poller back, so a slow store pauses
// polling rather than dropping rows. When it drains, the writer gets an idle moment for upkeep
// (a checkpoint) between polls; idle() lets a shutdown wait for all of it before DuckDB closes.
import type { HistoryBatch, HistoryWriter, SnapshotKey } from '../core/ports.ts';

/** Polls waiting to be stored before the poller waits for room (each holds one poll's rows). */
export const HISTORY_QUEUE_POLLS = 4;

export interface HistoryQueueFigures {
  /** batches waiting or being written */
  depth: number;
  capacity: number;
  /** how long the oldest batch not yet stored has waited, ms (0 when none) */
  lag_ms: number;
}

interface Entry {
  batch: HistoryBatch;
  /** its snapshot's key as queued (prepare may drop the snapshot from the batch) */
  key: string | null;
  /** runs just before the write, in queue order: may still change the batch */
  prepare?: () => Promise<void>;
  queuedAt: number;
  /** runs once the batch is stored or failed; its result is what `push` resolves with */
  settle: (stored: number | Error) => Promise<void>;
  done: () => void;
}

const snapshotKey = (k: SnapshotKey): string => `${k.feed_id}\n${k.body_sha256}`;

export class HistoryQueue {
  private readonly entries: Entry[] = [];
  private running = false;
  private idleWaiters: (() => void)[] = [];
  private roomWaiters: (() => void)[] = [];
  /** snapshots queued and not yet stored: a poll of the same body meanwhile is a duplicate */
  private readonly pendingSnapshots = new Map<string, number>();

  constructor(
    private readonly writer: HistoryWriter,
    private readonly capacity = HISTORY_QUEUE_POLLS,
    private readonly clock: () => number = () => performance.now(),
  ) {}

  /**
   * Queues a batch; resolves once it was written and `settle` ran (with the row count, or the
   * write's error). Never rejects: a failed write is `settle`'s to record.
   */
  push(batch: HistoryBatch, settle: Entry['settle'], prepare?: Entry['prepare']): Promise<void> {
    const key = batch.snapshot ? snapshotKey(batch.snapshot) : null;
    if (key) this.pendingSnapshots.set(key, (this.pendingSnapshots.get(key) ?? 0) + 1);
    return new Promise<void>((done) => {
      this.entries.push({ batch, key, prepare, queuedAt: this.clock(), settle, done });
      void this.run();
    });
  }

  /** Whether a batch of this snapshot is queued (then its rows will be stored by it). */
  hasPending(key: SnapshotKey): boolean {
    return this.pendingSnapshots.has(snapshotKey(key));
  }

  /** Resolves once fewer than `capacity` batches wait: the poller's back-pressure. */
  room(): Promise<void> {
    if (this.entries.length < this.capacity) return Promise.resolve();
    return new Promise((resolve) => this.roomWaiters.push(resolve));
  }

  /** Resolves once every batch queued so far is stored (or failed). */
  idle(): Promise<void> {
    if (this.entries.length === 0 && !this.running) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  figures(): HistoryQueueFigures {
    const oldest = this.entries[0];
    return {
      depth: this.entries.length,
      capacity: this.capacity,
      lag_ms: oldest ? Math.max(0, this.clock() - oldest.queuedAt) : 0,
    };
  }

  private async run(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      // entries stay in the list while written, so depth and lag count the batch in progress
      for (let entry = this.entries[0]; entry; entry = this.entries[0]) {
        let outcome: number | Error;
        try {
          await entry.prepare?.();
          outcome = await this.writer.write(entry.batch);
        } catch (err) {
          outcome = err instanceof Error ? err : new Error(String(err));
        }
        try {
          await entry.settle(outcome);
        } catch {
          // settle records failures itself; one throwing must not stop the queue
        }
        if (entry.key) {
          const n = (this.pendingSnapshots.get(entry.key) ?? 1) - 1;
          if (n > 0) this.pendingSnapshots.set(entry.key, n);
          else this.pendingSnapshots.delete(entry.key);
        }
        this.entries.shift();
        entry.done();
        if (this.entries.length < this.capacity) for (const wake of this.roomWaiters.splice(0)) wake();
        // drained: the store's upkeep runs now, between polls, rather than inside a poll's commit
        if (this.entries.length === 0) await this.writer.idle?.().catch(() => undefined);
      }
    } finally {
      this.running = false;
      for (const wake of this.idleWaiters.splice(0)) wake();
    }
  }
}
