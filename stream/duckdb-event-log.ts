// The event log the server runs with: reads and id assignment from the in-memory ring (no I/O on
// the fan-out path), persistence to DuckDB in batches run off the event loop, and the retained
// tail reloaded at start so Last-Event-ID resume keeps working across a restart.
import type { Logger } from '../core/logger.ts';
import type { DomainEvent } from '../core/events.ts';
import { BatchedFlush } from '../store/batched-flush.ts';
import type { DuckDBValue } from '@duckdb/node-api';
import type { Db } from '../store/db.ts';
import { timestamptzValue } from '../store/sql.ts';
import {
  decodeStoredEvent,
  EVENT_OVERHEAD_BYTES,
  MemoryEventLog,
  type EventLog,
  type StoredEvent,
} from './event-log.ts';

export const EVENT_LOG_TABLE = 'event_log';
/** rows per INSERT: 4 parameters each */
const ROWS_PER_INSERT = 500;

export interface DuckDbEventLogOptions {
  /** most events retained in memory and in the table (config sse.event_log_size) */
  capacity: number;
  /** bytes retained, as MemoryEventLog counts them (sse.event_log_max_bytes) */
  maxBytes?: number;
  /** age retained (sse.event_log_max_age_s) */
  maxAgeMs?: number;
  /** appended events are persisted after at most this delay */
  flushMs?: number;
  /** rows the ring dropped are deleted from the table at most this often (default 10 s) */
  pruneEveryMs?: number;
  now?: () => number;
  log?: Logger;
}

export class DuckDbEventLog implements EventLog {
  private unpersisted: StoredEvent[] = [];
  private readonly flushes = new BatchedFlush(() => this.flushOnce());
  private prunedBelow = 0;
  private lastPruneMs = Number.NEGATIVE_INFINITY;
  private closed = false;
  /** events that could not be persisted (store failing for longer than the ring lasts) */
  droppedUnpersisted = 0;
  persisted = 0;
  /** rows in the table that could not be decoded at start */
  corruptRows = 0;
  /** events read back at start */
  restoredRows = 0;

  private constructor(
    private readonly db: Db,
    private readonly ring: MemoryEventLog,
    private readonly options: DuckDbEventLogOptions,
  ) {}

  static async open(db: Db, options: DuckDbEventLogOptions): Promise<DuckDbEventLog> {
    const nowMs = (options.now ?? Date.now)();
    const maxAgeMs = options.maxAgeMs ?? Number.POSITIVE_INFINITY;
    // only what the ring will keep is read back: newest first, within the age bound (and always
    // the newest row, which the ring keeps however old), until the byte bound. The table is pruned
    // to the same bounds as it goes and at close, so this reads at most event_log_max_bytes plus
    // what a crash left unpruned, not the whole table.
    const since = Number.isFinite(maxAgeMs) ? new Date(nowMs - maxAgeMs) : new Date(0);
    const newestFirst = await db.all<{ id: bigint; payload: string; observed_at: Date }>(
      `SELECT id, payload, observed_at FROM ${EVENT_LOG_TABLE}
       WHERE observed_at >= $1 OR id = (SELECT max(id) FROM ${EVENT_LOG_TABLE})
       ORDER BY id DESC LIMIT $2`,
      [timestamptzValue(since.getTime()), options.capacity],
    );
    const maxBytes = options.maxBytes ?? Number.POSITIVE_INFINITY;
    let rows = newestFirst;
    let bytes = 0;
    for (let i = 0; i < newestFirst.length; i++) {
      bytes += newestFirst[i]!.payload.length + EVENT_OVERHEAD_BYTES;
      if (bytes > maxBytes && i > 0) {
        rows = newestFirst.slice(0, i);
        break;
      }
    }
    const restored: StoredEvent[] = [];
    let corrupt = 0;
    for (let i = rows.length - 1; i >= 0; i--) {
      const row = rows[i]!;
      const event = decodeStoredEvent(Number(row.id), row.payload, row.observed_at.getTime());
      if (event) restored.push(event);
      else corrupt++;
    }
    const ring = new MemoryEventLog({
      capacity: options.capacity,
      maxBytes: options.maxBytes,
      maxAgeMs: options.maxAgeMs,
      now: options.now,
      restored,
      issuedThrough: rows.length ? Number(rows[0]!.id) : 0,
      onRejected: (_event, err) => options.log?.error({ err }, 'event could not be encoded; skipped'),
    });
    const log = new DuckDbEventLog(db, ring, options);
    log.corruptRows = corrupt;
    log.restoredRows = restored.length;
    if (corrupt) options.log?.warn(`${corrupt} event_log rows could not be decoded and were skipped`);
    return log;
  }

  get earliestId(): number | null {
    return this.ring.earliestId;
  }

  get latestId(): number | null {
    return this.ring.latestId;
  }

  get size(): number {
    return this.ring.size;
  }

  get rejected(): number {
    return this.ring.rejected;
  }

  /** bytes retained in memory (storedEventBytes) */
  get bytes(): number {
    return this.ring.bytes;
  }

  get evictedForBytes(): number {
    return this.ring.evictedForBytes;
  }

  get evictedForAge(): number {
    return this.ring.evictedForAge;
  }

  append(events: readonly DomainEvent[]): StoredEvent[] {
    const stored = this.ring.append(events);
    if (stored.length === 0 || this.closed) return stored;
    for (const event of stored) this.unpersisted.push(event);
    // if the store keeps failing, keep only what the ring still retains: older rows could not
    // be served from the persisted tail anyway
    const earliest = this.ring.earliestId;
    if (earliest !== null && this.unpersisted[0]!.id < earliest) {
      let drop = 0;
      while (drop < this.unpersisted.length && this.unpersisted[drop]!.id < earliest) drop++;
      this.unpersisted.splice(0, drop);
      this.droppedUnpersisted += drop;
    }
    this.flushes.soon(this.options.flushMs ?? 200);
    return stored;
  }

  since(afterId: number): StoredEvent[] | 'too_old' {
    return this.ring.since(afterId);
  }

  /** Flushes run one after another so rows reach the table in id order. */
  flush(): Promise<void> {
    return this.flushes.flush();
  }

  async close(): Promise<void> {
    this.flushes.stop();
    await this.flush();
    // the next start reads back only what is kept
    await this.flushes.queue(() => this.prune(true));
    this.closed = true;
  }

  /**
   * An INSERT with parameters, which DuckDB runs (and commits, syncing its WAL) on its own
   * thread: the appender commits on the calling thread, a stall of milliseconds on the thread
   * that fans events out, several times a second.
   */
  private async flushOnce(): Promise<void> {
    if (this.unpersisted.length === 0) return;
    const batch = this.unpersisted;
    this.unpersisted = [];
    let done = 0;
    try {
      while (done < batch.length) {
        const rows = batch.slice(done, done + ROWS_PER_INSERT);
        const params: DuckDBValue[] = [];
        const values = rows.map((event, i) => {
          // observed_at: when the log took the event (≈ its at_ms for live producers), the age bound at restart
          params.push(BigInt(event.id), event.type, timestamptzValue(event.loggedMs), event.payload);
          return `($${4 * i + 1}, $${4 * i + 2}, $${4 * i + 3}, $${4 * i + 4})`;
        });
        await this.db.run(
          `INSERT INTO ${EVENT_LOG_TABLE} (id, type, observed_at, payload) VALUES ${values.join(', ')}`,
          params,
        );
        done += rows.length;
        this.persisted += rows.length;
      }
    } catch (err) {
      // what was inserted stays; the rest goes first in the next flush, in id order
      this.unpersisted = batch.slice(done).concat(this.unpersisted);
      this.options.log?.error({ err }, 'event log flush failed; events kept for the next flush');
      return;
    }
    await this.prune();
  }

  /** Rows the ring dropped can never be served; deleting them keeps the table at the ring's bounds. */
  private async prune(force = false): Promise<void> {
    const earliest = this.ring.earliestId;
    if (earliest === null || earliest <= this.prunedBelow) return;
    const nowMs = (this.options.now ?? Date.now)();
    if (!force && nowMs - this.lastPruneMs < (this.options.pruneEveryMs ?? 10_000)) return;
    try {
      await this.db.run(`DELETE FROM ${EVENT_LOG_TABLE} WHERE id < $1`, [BigInt(earliest)]);
      this.prunedBelow = earliest;
      this.lastPruneMs = nowMs;
    } catch (err) {
      this.options.log?.error({ err }, 'event log prune failed; retried after the next flush');
    }
  }
}
