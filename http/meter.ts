// Usage metering: every call is recorded in memory and appended to DuckDB in batches.
import { timestampTZValue, type DuckDBAppender } from '@duckdb/node-api';
import type { Db } from '../store/db.ts';
import type { MeterUnit } from './headers.ts';
import type { Plan } from './plans.ts';

export interface UsageRecord {
  keyId: string | null;
  plan: Plan | null;
  test: boolean;
  unit: MeterUnit;
  /** 1 per request; the number of minutes for connection-minute rows */
  quantity: number;
  method: string;
  /** route template, or (unmatched) */
  endpoint: string;
  status: number;
  latencyMs: number;
  atMs: number;
  requestId: string;
}

/** Small on purpose: a billing pipeline or a broker-backed meter can replace the DuckDB one. */
export interface Meter {
  record(usage: UsageRecord): void;
  /** Persists everything recorded so far. */
  flush(): Promise<void>;
  /** Flushes and stops; records after close are counted as dropped. */
  close(): Promise<void>;
}

export interface DbMeterOptions {
  flushMs: number;
  batchRows: number;
  /** past this many unflushed rows (the store is failing), the oldest are dropped and counted */
  maxBufferedRows?: number;
  log?: (message: string, err: unknown) => void;
}

export const LIVE_USAGE_TABLE = 'api_usage';
export const TEST_USAGE_TABLE = 'api_usage_test';

function appendRow(appender: DuckDBAppender, r: UsageRecord): void {
  if (r.keyId === null) appender.appendNull();
  else appender.appendVarchar(r.keyId);
  if (r.plan === null) appender.appendNull();
  else appender.appendVarchar(r.plan);
  appender.appendVarchar(r.unit);
  appender.appendInteger(r.quantity);
  appender.appendVarchar(r.method);
  appender.appendVarchar(r.endpoint);
  appender.appendSmallInt(r.status);
  appender.appendDouble(r.latencyMs);
  appender.appendTimestampTZ(timestampTZValue(BigInt(Math.round(r.atMs * 1000))));
  appender.appendVarchar(r.requestId);
  appender.endRow();
}

export class DbMeter implements Meter {
  private buffer: UsageRecord[] = [];
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();
  private closed = false;
  /** rows lost because the store failed for too long, or recorded after close */
  dropped = 0;
  persisted = 0;
  private readonly maxBuffered: number;

  constructor(private readonly db: Db, private readonly options: DbMeterOptions) {
    this.maxBuffered = options.maxBufferedRows ?? 1_000_000;
  }

  start(): this {
    if (!this.timer && !this.closed) {
      this.timer = setInterval(() => void this.flush(), this.options.flushMs);
      this.timer.unref();
    }
    return this;
  }

  record(usage: UsageRecord): void {
    if (this.closed) {
      this.dropped++;
      return;
    }
    this.buffer.push(usage);
    if (this.buffer.length === this.options.batchRows) void this.flush();
  }

  get pending(): number {
    return this.buffer.length;
  }

  /** Flushes run one after another so rows are appended in the order they were recorded. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.flushOnce());
    return this.flushing;
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.flush();
    this.closed = true;
    if (this.buffer.length) {
      this.options.log?.(`${this.buffer.length} usage rows could not be persisted at shutdown`, null);
      this.dropped += this.buffer.length;
      this.buffer = [];
    }
  }

  private async flushOnce(): Promise<void> {
    if (this.buffer.length === 0) return;
    const batch = this.buffer;
    this.buffer = [];
    const live = batch.filter((r) => !r.test);
    const test = batch.filter((r) => r.test);
    // the appender commits per table; a failing table re-queues only its own rows, so nothing
    // is written twice and the other table still gets its rows
    for (const [table, rows] of [[LIVE_USAGE_TABLE, live], [TEST_USAGE_TABLE, test]] as const) {
      if (rows.length === 0) continue;
      try {
        await this.appendTo(table, rows);
      } catch (err) {
        this.options.log?.(`usage flush to ${table} failed; rows kept for the next flush`, err);
      }
    }
  }

  private async appendTo(table: string, rows: UsageRecord[]): Promise<void> {
    try {
      await this.db.append(table, (appender) => {
        for (const row of rows) appendRow(appender, row);
      });
      this.persisted += rows.length;
    } catch (err) {
      this.buffer = rows.concat(this.buffer);
      const excess = this.buffer.length - this.maxBuffered;
      if (excess > 0) {
        this.buffer.splice(0, excess);
        this.dropped += excess;
      }
      throw err;
    }
  }
}

/** Keeps records in memory: for tests and for in-process figures such as the status page. */
export class MemoryMeter implements Meter {
  readonly records: UsageRecord[] = [];
  record(usage: UsageRecord): void {
    this.records.push(usage);
  }
  async flush(): Promise<void> {}
  async close(): Promise<void> {}
}

/** Sends every record to each meter (e.g. DuckDB for billing plus live figures for /status). */
export function teeMeter(...meters: Meter[]): Meter {
  return {
    record(usage) {
      for (const meter of meters) meter.record(usage);
    },
    async flush() {
      await Promise.all(meters.map((m) => m.flush()));
    },
    async close() {
      await Promise.all(meters.map((m) => m.close()));
    },
  };
}
