// The event log the server runs with: reads and id assignment from the in-memory ring (no I/O on
// the fan-out path), persistence to DuckDB in batches through the appender, and the retained
// tail reloaded at start so Last-Event-ID resume keeps working across a restart.
import { timestampTZValue } from '@duckdb/node-api';
import type { DomainEvent } from '../core/events.ts';
import type { Db } from '../store/db.ts';
import { decodeStoredEvent, MemoryEventLog, type EventLog, type StoredEvent } from './event-log.ts';

export const EVENT_LOG_TABLE = 'event_log';

export interface DuckDbEventLogOptions {
  /** events retained in memory and in the table (config sse.event_log_size) */
  capacity: number;
  /** appended events are persisted after at most this delay */
  flushMs?: number;
  now?: () => number;
  log?: (message: string, err?: unknown) => void;
}

export class DuckDbEventLog implements EventLog {
  private unpersisted: StoredEvent[] = [];
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();
  private rowsSincePrune = 0;
  private closed = false;
  /** events that could not be persisted (store failing for longer than the ring lasts) */
  droppedUnpersisted = 0;
  persisted = 0;
  /** rows in the table that could not be decoded at start */
  corruptRows = 0;

  private constructor(
    private readonly db: Db,
    private readonly ring: MemoryEventLog,
    private readonly options: DuckDbEventLogOptions,
  ) {}

  static async open(db: Db, options: DuckDbEventLogOptions): Promise<DuckDbEventLog> {
    const rows = await db.all<{ id: bigint; payload: string }>(
      `SELECT id, payload FROM ${EVENT_LOG_TABLE} ORDER BY id DESC LIMIT $1`, [options.capacity],
    );
    const restored: StoredEvent[] = [];
    let corrupt = 0;
    for (let i = rows.length - 1; i >= 0; i--) {
      const row = rows[i]!;
      const event = decodeStoredEvent(Number(row.id), row.payload);
      if (event) restored.push(event);
      else corrupt++;
    }
    const ring = new MemoryEventLog({
      capacity: options.capacity,
      now: options.now,
      restored,
      issuedThrough: rows.length ? Number(rows[0]!.id) : 0,
      onRejected: (_event, err) => options.log?.('event could not be encoded; skipped', err),
    });
    const log = new DuckDbEventLog(db, ring, options);
    log.corruptRows = corrupt;
    if (corrupt) options.log?.(`${corrupt} event_log rows could not be decoded and were skipped`);
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

  append(events: readonly DomainEvent[]): StoredEvent[] {
    const stored = this.ring.append(events);
    if (stored.length === 0 || this.closed) return stored;
    for (const event of stored) this.unpersisted.push(event);
    // if the store keeps failing, keep at most what the ring retains: older rows could not be
    // served from the persisted tail anyway
    const excess = this.unpersisted.length - this.ring.capacity;
    if (excess > 0) {
      this.unpersisted.splice(0, excess);
      this.droppedUnpersisted += excess;
    }
    if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = null;
        void this.flush();
      }, this.options.flushMs ?? 200);
      this.timer.unref();
    }
    return stored;
  }

  since(afterId: number): StoredEvent[] | 'too_old' {
    return this.ring.since(afterId);
  }

  /** Flushes run one after another so rows reach the table in id order. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.flushOnce());
    return this.flushing;
  }

  async close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.flush();
    this.closed = true;
  }

  private async flushOnce(): Promise<void> {
    if (this.unpersisted.length === 0) return;
    const batch = this.unpersisted;
    this.unpersisted = [];
    try {
      await this.db.append(EVENT_LOG_TABLE, (appender) => {
        for (const event of batch) {
          appender.appendBigInt(BigInt(event.id));
          appender.appendVarchar(event.type);
          appender.appendTimestampTZ(timestampTZValue(BigInt(Math.round(event.atMs * 1000))));
          appender.appendVarchar(event.payload);
          appender.endRow();
        }
      });
    } catch (err) {
      this.unpersisted = batch.concat(this.unpersisted);
      this.options.log?.('event log flush failed; events kept for the next flush', err);
      return;
    }
    this.persisted += batch.length;
    this.rowsSincePrune += batch.length;
    if (this.rowsSincePrune >= Math.max(1, this.ring.capacity >> 1)) await this.prune();
  }

  /** Rows older than the ring can never be served; deleting them keeps the table at ~1.5× capacity. */
  private async prune(): Promise<void> {
    const earliest = this.ring.earliestId;
    if (earliest === null) return;
    try {
      await this.db.run(`DELETE FROM ${EVENT_LOG_TABLE} WHERE id < $1`, [BigInt(earliest)]);
      this.rowsSincePrune = 0;
    } catch (err) {
      this.options.log?.('event log prune failed; retried after the next flush', err);
    }
  }
}
