// Usage metering: every call is recorded in memory and appended to DuckDB in batches.
import { componentLogger, type Logger } from '../core/logger.ts';
import { BatchedFlush } from '../store/batched-flush.ts';
import type { Db } from '../store/db.ts';
import type { MeterUnit, Plan } from './plans.ts';
import { appendUsageBuckets, usageTable, type UsageBucketRow } from './store.ts';

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
  /** a flush starts early when this many per-second buckets are pending */
  batchRows: number;
  /** past this many unflushed buckets (the store is failing), the oldest are dropped and counted */
  maxBufferedRows?: number;
  log?: Logger;
}

// where the buckets go (accounts/store.ts); the broker-fed meter writes the same tables
export { LIVE_USAGE_TABLE, TEST_USAGE_TABLE } from './store.ts';

/** Calls of one key, unit, method, endpoint and status within one second: the stored row, typed. */
interface Bucket extends Omit<UsageBucketRow, 'plan' | 'unit'> {
  plan: Plan | null;
  test: boolean;
  unit: MeterUnit;
}

type BucketFields = Pick<UsageRecord, 'keyId' | 'test' | 'unit' | 'method' | 'endpoint' | 'status'>;

function bucketKey(u: BucketFields, second: number): string {
  return (
    `${u.keyId}\u0000${u.test ? 1 : 0}\u0000${u.unit}\u0000${u.method}\u0000${u.endpoint}\u0000${u.status}` +
    `\u0000${second}`
  );
}

/**
 * Sums calls per key, unit, method, endpoint, status and second in memory and appends the
 * sums to DuckDB on a timer: every call is counted, and a second of 20,000 requests costs a
 * few hundred rows instead of 20,000 appender rows on the event loop.
 */
export class DbMeter implements Meter {
  private buckets = new Map<string, Bucket>();
  private readonly flushes = new BatchedFlush(() => this.flushOnce());
  /**
   * Each key's last bucket: a key's calls come in runs to one endpoint within a second, and
   * comparing a few fields costs less than building and hashing the bucket's string key.
   */
  private recent = new Map<string | null, Bucket>();
  private closed = false;
  /** calls lost because the store failed for too long, or recorded after close */
  dropped = 0;
  /** calls persisted so far */
  persisted = 0;
  private readonly maxBuffered: number;
  private readonly log: Logger;

  constructor(
    private readonly db: Db,
    private readonly options: DbMeterOptions,
  ) {
    this.maxBuffered = options.maxBufferedRows ?? 1_000_000;
    this.log = componentLogger(options.log, 'meter');
  }

  start(): this {
    if (!this.closed) this.flushes.every(this.options.flushMs);
    return this;
  }

  record(u: UsageRecord): void {
    if (this.closed) {
      this.dropped++;
      return;
    }
    const second = Math.floor(u.atMs / 1000);
    let bucket = this.recent.get(u.keyId);
    if (
      !bucket ||
      bucket.second !== second ||
      bucket.endpoint !== u.endpoint ||
      bucket.status !== u.status ||
      bucket.method !== u.method ||
      bucket.unit !== u.unit ||
      bucket.test !== u.test
    ) {
      bucket = this.buckets.get(bucketKey(u, second));
      if (bucket) this.recent.set(u.keyId, bucket);
    }
    if (bucket) {
      bucket.calls++;
      bucket.quantity += u.quantity;
      bucket.latencyTotal += u.latencyMs;
      if (u.latencyMs > bucket.latencyMax) bucket.latencyMax = u.latencyMs;
      return;
    }
    bucket = {
      keyId: u.keyId,
      plan: u.plan,
      test: u.test,
      unit: u.unit,
      method: u.method,
      endpoint: u.endpoint,
      status: u.status,
      second,
      calls: 1,
      quantity: u.quantity,
      latencyTotal: u.latencyMs,
      latencyMax: u.latencyMs,
    };
    this.buckets.set(bucketKey(u, second), bucket);
    this.recent.set(u.keyId, bucket);
    if (this.buckets.size === this.options.batchRows) void this.flush();
  }

  /** buckets waiting for the next flush */
  get pending(): number {
    return this.buckets.size;
  }

  /** Flushes run one after another so rows are appended in the order they were recorded. */
  flush(): Promise<void> {
    return this.flushes.flush();
  }

  async close(): Promise<void> {
    this.flushes.stop();
    await this.flush();
    this.closed = true;
    if (this.buckets.size) {
      const calls = [...this.buckets.values()].reduce((n, b) => n + b.calls, 0);
      this.log.error({ calls }, 'metered calls could not be persisted at shutdown');
      this.dropped += calls;
      this.buckets = new Map();
      this.recent.clear();
    }
  }

  private async flushOnce(): Promise<void> {
    if (this.buckets.size === 0) return;
    const batch = this.buckets;
    this.buckets = new Map();
    // the buckets remembered belong to the batch now
    this.recent.clear();
    const live: Bucket[] = [];
    const test: Bucket[] = [];
    for (const b of batch.values()) (b.test ? test : live).push(b);
    // the appender commits per table; a failing table re-queues only its own rows, so nothing
    // is written twice and the other table still gets its rows
    for (const [isTest, rows] of [
      [false, live],
      [true, test],
    ] as const) {
      if (rows.length === 0) continue;
      const table = usageTable(isTest);
      try {
        await appendUsageBuckets(this.db, isTest, rows);
        for (const row of rows) this.persisted += row.calls;
      } catch (err) {
        this.requeue(rows);
        this.log.error({ err, table }, 'usage flush failed; rows kept for the next flush');
      }
    }
  }

  private requeue(rows: Bucket[]): void {
    // failed buckets go back in front; a bucket recorded again meanwhile is merged
    const merged = new Map<string, Bucket>();
    for (const b of rows) merged.set(bucketKey(b, b.second), b);
    for (const [key, b] of this.buckets) {
      const old = merged.get(key);
      if (!old) merged.set(key, b);
      else {
        old.calls += b.calls;
        old.quantity += b.quantity;
        old.latencyTotal += b.latencyTotal;
        old.latencyMax = Math.max(old.latencyMax, b.latencyMax);
      }
    }
    this.buckets = merged;
    this.recent.clear();
    while (this.buckets.size > this.maxBuffered) {
      const oldest = this.buckets.keys().next().value as string;
      this.dropped += this.buckets.get(oldest)!.calls;
      this.buckets.delete(oldest);
    }
  }
}
