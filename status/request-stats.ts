// Request figures of the public API for the status page, in memory: a ring of per-minute slots,
// each with counts and a log-scale latency histogram, so p50/p99 over 5 and 60 minutes cost a
// few hundred additions and no request is stored. It is a Meter, teed beside the billing meter.
import type { Meter, UsageRecord } from '../accounts/meter.ts';
import { floorMinute, MINUTE_MS } from './feed-history.ts';
import type { ApiWindow } from './schema.ts';

/** Buckets grow by 4 %: a percentile is off by at most 2 % of its value. */
const GROWTH = 1.04;
const SMALLEST_MS = 0.01;
const LARGEST_MS = 600_000;
const BUCKETS = 2 + Math.ceil(Math.log(LARGEST_MS / SMALLEST_MS) / Math.log(GROWTH));
const LOG_GROWTH = Math.log(GROWTH);
const SLOTS = 61;

/** Bucket 0 holds latencies below 10 µs (Date.now clocks report 0); the last one everything huge. */
function bucketOf(ms: number): number {
  if (!(ms >= SMALLEST_MS)) return 0;
  return Math.min(BUCKETS - 1, 1 + Math.floor(Math.log(ms / SMALLEST_MS) / LOG_GROWTH));
}

/** The geometric middle of a bucket. */
function bucketValue(bucket: number): number {
  if (bucket === 0) return 0;
  return SMALLEST_MS * GROWTH ** (bucket - 0.5);
}

interface Slot {
  minuteMs: number;
  requests: number;
  serverErrors: number;
  clientErrors: number;
  minMs: number;
  maxMs: number;
  histogram: Uint32Array;
}

export class RequestStats implements Meter {
  private readonly slots: Slot[] = Array.from({ length: SLOTS }, () => ({
    minuteMs: -1,
    requests: 0,
    serverErrors: 0,
    clientErrors: 0,
    minMs: Infinity,
    maxMs: 0,
    histogram: new Uint32Array(BUCKETS),
  }));
  /** bumps on every record, so readers can tell whether anything changed */
  version = 0;

  /** @param startedMs figures never claim to cover time before this */
  constructor(
    private readonly startedMs: number,
    private readonly clock: () => number = Date.now,
  ) {}

  record(usage: UsageRecord): void {
    // stream openings are billed per minute elsewhere and their "latency" is only the setup
    if (usage.unit !== 'request') return;
    const slot = this.slot(usage.atMs);
    if (!slot) return;
    slot.requests++;
    if (usage.status >= 500) slot.serverErrors++;
    else if (usage.status >= 400) slot.clientErrors++;
    const ms = Math.max(0, usage.latencyMs);
    if (ms < slot.minMs) slot.minMs = ms;
    if (ms > slot.maxMs) slot.maxMs = ms;
    slot.histogram[bucketOf(ms)]!++;
    this.version++;
  }

  async flush(): Promise<void> {}
  async close(): Promise<void> {}

  /** Figures for the last `minutes` minutes up to `nowMs`: the current minute plus the ones before. */
  window(minutes: number, nowMs: number = this.clock()): ApiWindow {
    const current = floorMinute(nowMs);
    const oldest = current - (minutes - 1) * MINUTE_MS;
    const histogram = new Float64Array(BUCKETS);
    let requests = 0;
    let serverErrors = 0;
    let clientErrors = 0;
    let minMs = Infinity;
    let maxMs = 0;
    for (const s of this.slots) {
      if (s.minuteMs < oldest || s.minuteMs > current || s.requests === 0) continue;
      requests += s.requests;
      serverErrors += s.serverErrors;
      clientErrors += s.clientErrors;
      minMs = Math.min(minMs, s.minMs);
      maxMs = Math.max(maxMs, s.maxMs);
      for (let i = 0; i < BUCKETS; i++) histogram[i]! += s.histogram[i]!;
    }
    // the window covers whole minutes back from now, but not time before the server started
    const coveredMs = Math.max(1_000, Math.min(nowMs - oldest, nowMs - this.startedMs));
    const coveredMinutes = Math.min(minutes, coveredMs / MINUTE_MS);
    const quantile = (q: number): number | null => {
      if (requests === 0) return null;
      const rank = Math.max(1, Math.ceil(q * requests));
      let seen = 0;
      for (let i = 0; i < BUCKETS; i++) {
        seen += histogram[i]!;
        if (seen >= rank) return round(Math.min(maxMs, Math.max(minMs, bucketValue(i))));
      }
      return round(maxMs);
    };
    return {
      minutes: round(coveredMinutes),
      requests,
      requests_per_minute: round(requests / coveredMinutes),
      server_errors: serverErrors,
      error_rate: requests ? round(serverErrors / requests, 4) : null,
      client_errors: clientErrors,
      p50_ms: quantile(0.5),
      p99_ms: quantile(0.99),
    };
  }

  private slot(atMs: number): Slot | null {
    const minuteMs = floorMinute(atMs);
    const index = Math.floor(minuteMs / MINUTE_MS) % SLOTS;
    const slot = this.slots[index]!;
    if (slot.minuteMs === minuteMs) return slot;
    // a record older than what the slot now holds belongs to a minute already gone from the ring
    if (slot.minuteMs > minuteMs) return null;
    slot.minuteMs = minuteMs;
    slot.requests = 0;
    slot.serverErrors = 0;
    slot.clientErrors = 0;
    slot.minMs = Infinity;
    slot.maxMs = 0;
    slot.histogram.fill(0);
    return slot;
  }
}

function round(n: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}
