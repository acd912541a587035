// Metering from every node into the ingest node's DuckDB exactly once. Each node sums its calls
// per key, unit, method, endpoint, status and second (as DbMeter does) and appends the sums to a
// Redis stream on a timer; the ingest node reads that stream and writes each batch of entries and
// the id of the last one in one DuckDB transaction (broker_offsets). A crash on either side
// leaves the rows and the offset together: nothing is counted twice or lost. Entries are trimmed
// from the broker only once persisted.
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { LIVE_USAGE_TABLE, TEST_USAGE_TABLE, type Meter, type UsageRecord } from '../accounts/meter.ts';
import type { Db } from '../store/db.ts';
import { LoopStop, within, type Broker } from './redis.ts';
import { timestamptzFromMs } from '../store/sql.ts';

/**
 * One bucket as it travels: [keyId, plan, test, unit, method, endpoint, status, second, calls, quantity, latencyTotal,
 * latencyMax]
 */
type WireBucket = [
  string | null,
  string | null,
  0 | 1,
  string,
  string,
  string,
  number,
  number,
  number,
  number,
  number,
  number,
];

/**
 * KEYS[1] the usage stream, KEYS[2] the batch's marker; ARGV: rows (JSON), marker ttl ms.
 * A batch sent again (a reply lost with the connection, then resent) is appended once.
 */
const APPEND_ONCE_LUA = `
if redis.call('SET', KEYS[2], '1', 'NX', 'PX', tonumber(ARGV[2])) then
  return redis.call('XADD', KEYS[1], '*', 'b', ARGV[1])
end
return false
`;

export function usageStreamKey(broker: Broker): string {
  return broker.key('usage');
}

/** A serving node's meter: sums in memory, XADD per flush (kept and retried while the broker is away). */
export class BrokerMeter implements Meter {
  private buckets = new Map<string, WireBucket>();
  /** batches cut but not yet acknowledged by the broker, sent again with the same id */
  private unsent: Array<{ id: string; rows: WireBucket[] }> = [];
  private readonly node = randomBytes(6).toString('hex');
  private batchSeq = 0;
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();
  private closed = false;
  sent = 0;
  dropped = 0;

  constructor(
    private readonly broker: Broker,
    private readonly options: { flushMs: number; maxBufferedRows?: number },
  ) {
    broker.redis.defineCommand('transitUsageOnce', { numberOfKeys: 2, lua: APPEND_ONCE_LUA });
  }

  start(): this {
    this.timer ??= setInterval(() => void this.flush(), this.options.flushMs);
    this.timer.unref();
    return this;
  }

  record(u: UsageRecord): void {
    if (this.closed) {
      this.dropped++;
      return;
    }
    const second = Math.floor(u.atMs / 1000);
    const key =
      `${u.keyId}\u0000${u.test ? 1 : 0}\u0000${u.unit}\u0000${u.method}\u0000${u.endpoint}` +
      `\u0000${u.status}\u0000${second}`;
    const b = this.buckets.get(key);
    if (b) {
      b[8]++;
      b[9] += u.quantity;
      b[10] += u.latencyMs;
      if (u.latencyMs > b[11]) b[11] = u.latencyMs;
      return;
    }
    if (this.buckets.size >= (this.options.maxBufferedRows ?? 1_000_000)) {
      this.dropped++;
      return;
    }
    this.buckets.set(key, [
      u.keyId,
      u.plan,
      u.test ? 1 : 0,
      u.unit,
      u.method,
      u.endpoint,
      u.status,
      second,
      1,
      u.quantity,
      u.latencyMs,
      u.latencyMs,
    ]);
  }

  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.flushOnce());
    return this.flushing;
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await within(this.flush());
    this.closed = true;
    for (const batch of this.unsent) for (const b of batch.rows) this.dropped += b[8];
    if (this.unsent.length)
      this.broker.log.error({ calls: this.dropped }, 'metered calls could not reach the broker at shutdown');
    this.unsent = [];
  }

  private async flushOnce(): Promise<void> {
    if (this.buckets.size) {
      this.unsent.push({ id: `${this.node}:${++this.batchSeq}`, rows: [...this.buckets.values()] });
      this.buckets = new Map();
    }
    const cmd = this.broker.redis as Redis & {
      transitUsageOnce(stream: string, marker: string, rows: string, ttlMs: number): Promise<string | null>;
    };
    while (this.unsent.length && this.broker.state === 'up') {
      const batch = this.unsent[0]!;
      try {
        await cmd.transitUsageOnce(
          usageStreamKey(this.broker),
          this.broker.key(`usage:sent:${batch.id}`),
          JSON.stringify(batch.rows),
          86_400_000,
        );
      } catch (err) {
        this.broker.log.warn(
          { err, batches: this.unsent.length },
          'sending usage to the broker failed; kept for the next flush',
        );
        return;
      }
      this.unsent.shift();
      for (const r of batch.rows) this.sent += r[8];
    }
  }
}

type Entry = [id: string, fields: string[]];

/** The ingest node's reader of every node's usage: rows and offset in one transaction. */
export class BrokerUsageIngest {
  private readonly reader: Redis;
  private running = false;
  private loop: Promise<void> | null = null;
  private readonly stopping = new LoopStop();
  /** calls persisted */
  persisted = 0;
  lastId = '0-0';

  constructor(
    private readonly broker: Broker,
    private readonly db: Db,
    private readonly options: { blockMs?: number } = {},
  ) {
    this.reader = broker.connection('usage-reader');
  }

  async start(): Promise<this> {
    const rows = await this.db.all<{ last_id: string }>('SELECT last_id FROM broker_offsets WHERE stream = $1', [
      usageStreamKey(this.broker),
    ]);
    this.lastId = rows[0]?.last_id ?? '0-0';
    this.running = true;
    this.loop = this.follow();
    return this;
  }

  async close(): Promise<void> {
    this.running = false;
    this.stopping.stop();
    this.reader.disconnect();
    await this.loop?.catch(() => undefined);
  }

  private async follow(): Promise<void> {
    const stream = usageStreamKey(this.broker);
    while (this.running) {
      let res: Array<[string, Entry[]]> | null;
      try {
        // with the broker down the read waits for its return; a close does not wait with it
        res = await this.stopping.race(
          this.reader.xread(
            'COUNT',
            500,
            'BLOCK',
            this.options.blockMs ?? 1000,
            'STREAMS',
            stream,
            this.lastId,
          ) as Promise<Array<[string, Entry[]]> | null>,
        );
      } catch (err) {
        if (!this.running) return;
        this.broker.log.debug({ err }, 'usage read failed; retrying');
        await new Promise((r) => setTimeout(r, 250));
        continue;
      }
      if (!res || !this.running) continue;
      const entries = res[0]![1];
      try {
        await this.persist(entries);
      } catch (err) {
        this.broker.log.error({ err }, 'persisting usage from the broker failed; retried');
        await new Promise((r) => setTimeout(r, 1000));
        continue;
      }
      this.lastId = entries[entries.length - 1]![0];
      // persisted: the broker may forget them
      await this.stopping.race(this.broker.redis.xtrim(stream, 'MINID', this.lastId).catch(() => 0));
    }
  }

  private async persist(entries: Entry[]): Promise<void> {
    const live: WireBucket[] = [];
    const test: WireBucket[] = [];
    for (const [, fields] of entries) {
      const at = fields.indexOf('b');
      if (at < 0) continue;
      for (const b of JSON.parse(fields[at + 1]!) as WireBucket[]) (b[2] ? test : live).push(b);
    }
    const last = entries[entries.length - 1]![0];
    let calls = 0;
    await this.db.transaction(async (c) => {
      for (const [table, rows] of [
        [LIVE_USAGE_TABLE, live],
        [TEST_USAGE_TABLE, test],
      ] as const) {
        for (let i = 0; i < rows.length; i += 200) {
          const chunk = rows.slice(i, i + 200);
          const params: Array<string | number | null> = [];
          const values = chunk.map((b) => {
            const at = params.length;
            params.push(b[0], b[1], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11]);
            calls += b[8];
            const p = (n: number) => `$${at + n}`;
            return (
              `(${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}, ${p(5)}, ${p(6)}, ` +
              `${timestamptzFromMs(`${p(7)}::BIGINT * 1000`)}, ${p(8)}, ${p(9)}, ${p(10)}, ${p(11)})`
            );
          });
          await c.run(
            `INSERT INTO ${table} (key_id, plan, unit, method, endpoint, status, bucket_at, calls, quantity, ` +
              `latency_ms_total, latency_ms_max) VALUES ${values.join(', ')}`,
            params,
          );
        }
      }
      await c.run(
        `INSERT INTO broker_offsets (stream, last_id, updated_at) VALUES ($1, $2, now())
         ON CONFLICT (stream) DO UPDATE SET last_id = excluded.last_id, updated_at = excluded.updated_at`,
        [usageStreamKey(this.broker), last],
      );
    });
    this.persisted += calls;
  }
}
