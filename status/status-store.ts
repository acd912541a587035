// What the status page reads from and writes to DuckDB, on a connection of its own: the shared
// queue may be busy with history appends or an export, and status reads must not wait behind
// it (nor make it wait). Everything here runs in the background; pages are served from memory.
import type { DuckDBConnection } from '@duckdb/node-api';
import type { Db } from '../store/db.ts';
import { FAILED_POLL_SQL } from '../store/feed-polls.ts';
import type { FindingSeed } from './feed-findings.ts';
import type { MinuteSeed } from './feed-history.ts';
import type { StateChange } from './incidents.ts';
import type { KnownState } from './schema.ts';

export interface PollSeed {
  minutes: Map<string, MinuteSeed[]>;
  lastErrors: Map<string, { error: string; atMs: number }>;
  /** feeds whose polls delivered alerts in the period */
  alertSources: Set<string>;
}

export interface OutboxFigures {
  depth: number;
  oldestPendingMs: number | null;
}

const KNOWN: ReadonlySet<string> = new Set(['operational', 'degraded', 'down']);

export class StatusStore {
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;

  private constructor(private readonly conn: DuckDBConnection) {}

  static async open(db: Db): Promise<StatusStore> {
    return new StatusStore(await db.connect());
  }

  /** One statement at a time on this connection, like Db does on the shared one. */
  private exclusive<T>(fn: (conn: DuckDBConnection) => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new Error('status store is closed'));
    const run = this.queue.then(() => fn(this.conn));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private rows<T>(sql: string, params: unknown[] = []): Promise<T[]> {
    return this.exclusive(async (c) => (await c.runAndReadAll(sql, params as never)).getRowObjectsJS() as T[]);
  }

  /** Changes since `sinceMs`, and the last state of every component before it. */
  async loadChanges(sinceMs: number): Promise<{ changes: StateChange[]; before: Map<string, KnownState> }> {
    const rows = await this.rows<{
      component: string;
      state: string;
      previous_state: string | null;
      reason: string;
      at_ms: number;
    }>(
      `SELECT component, state, previous_state, reason, epoch_ms(changed_at)::DOUBLE AS at_ms FROM status_changes
       WHERE changed_at >= to_timestamp($1::DOUBLE / 1000) ORDER BY changed_at`,
      [sinceMs],
    );
    const earlier = await this.rows<{ component: string; state: string }>(
      `SELECT component, arg_max(state, changed_at) AS state FROM status_changes
       WHERE changed_at < to_timestamp($1::DOUBLE / 1000) GROUP BY component`,
      [sinceMs],
    );
    const changes: StateChange[] = [];
    for (const r of rows) {
      if (!KNOWN.has(r.state)) continue;
      const previous =
        r.previous_state !== null && KNOWN.has(r.previous_state) ? (r.previous_state as KnownState) : null;
      changes.push({ component: r.component, state: r.state as KnownState, previous, reason: r.reason, atMs: r.at_ms });
    }
    const before = new Map<string, KnownState>();
    for (const r of earlier) if (KNOWN.has(r.state)) before.set(r.component, r.state as KnownState);
    return { changes, before };
  }

  async insertChanges(changes: readonly StateChange[]): Promise<void> {
    if (changes.length === 0) return;
    const values = changes.map(
      (_, i) =>
        `($${i * 5 + 1}, $${i * 5 + 2}, $${i * 5 + 3}, $${i * 5 + 4}, to_timestamp($${i * 5 + 5}::DOUBLE / 1000))`,
    );
    const params = changes.flatMap((c) => [c.component, c.state, c.previous, c.reason, c.atMs]);
    await this.exclusive((c) => c.run(`INSERT INTO status_changes VALUES ${values.join(', ')}`, params as never));
  }

  async prune(beforeMs: number): Promise<void> {
    await this.exclusive((c) =>
      c.run('DELETE FROM status_changes WHERE changed_at < to_timestamp($1::DOUBLE / 1000)', [beforeMs]),
    );
  }

  /** The poll log between two times, per feed and minute; alert sources over `sourcesSinceMs`. */
  async pollSeed(sinceMs: number, untilMs: number, sourcesSinceMs: number): Promise<PollSeed> {
    const minuteRows = await this.rows<{
      feed_id: string;
      minute_ms: number;
      polls: number;
      failures: number;
      entities: number | null;
    }>(
      `SELECT feed_id, epoch_ms(time_bucket(INTERVAL 1 MINUTE, polled_at))::DOUBLE AS minute_ms, count(*)::INTEGER AS polls,
         count(*) FILTER (WHERE ${FAILED_POLL_SQL})::INTEGER AS failures,
         arg_max(entities, polled_at) FILTER (WHERE status = 'ok') AS entities
       FROM feed_polls
       WHERE polled_at >= to_timestamp($1::DOUBLE / 1000) AND polled_at < to_timestamp($2::DOUBLE / 1000)
       GROUP BY ALL ORDER BY minute_ms`,
      [sinceMs, untilMs],
    );
    const errorRows = await this.rows<{ feed_id: string; error: string; at_ms: number }>(
      `SELECT feed_id, arg_max(error, polled_at) AS error, epoch_ms(max(polled_at))::DOUBLE AS at_ms FROM feed_polls
       WHERE ${FAILED_POLL_SQL} AND error IS NOT NULL AND polled_at >= to_timestamp($1::DOUBLE / 1000)
         AND polled_at < to_timestamp($2::DOUBLE / 1000)
       GROUP BY feed_id`,
      [sourcesSinceMs, untilMs],
    );
    const sourceRows = await this.rows<{ feed_id: string }>(
      `SELECT DISTINCT feed_id FROM feed_polls WHERE alerts > 0 AND polled_at >= to_timestamp($1::DOUBLE / 1000)`,
      [sourcesSinceMs],
    );
    const minutes = new Map<string, MinuteSeed[]>();
    for (const r of minuteRows) {
      let list = minutes.get(r.feed_id);
      if (!list) minutes.set(r.feed_id, (list = []));
      list.push({ minuteMs: r.minute_ms, polls: r.polls, failures: r.failures, entities: r.entities });
    }
    return {
      minutes,
      lastErrors: new Map(errorRows.map((r) => [r.feed_id, { error: r.error, atMs: r.at_ms }])),
      alertSources: new Set(sourceRows.map((r) => r.feed_id)),
    };
  }

  /** Feed rule findings per feed, minute and rule between the two times (feed_polls.findings). */
  async findingsSeed(sinceMs: number, untilMs: number): Promise<Map<string, FindingSeed[]>> {
    const rows = await this.rows<{
      feed_id: string;
      minute_ms: number;
      rule: string;
      count: number;
      example: string | null;
      last_ms: number;
    }>(
      `SELECT feed_id, epoch_ms(time_bucket(INTERVAL 1 MINUTE, polled_at))::DOUBLE AS minute_ms, f.rule AS rule,
         sum(f.count)::INTEGER AS count, arg_max(f.example, polled_at) AS example, epoch_ms(max(polled_at))::DOUBLE AS last_ms
       FROM (SELECT feed_id, polled_at, unnest(findings) AS f FROM feed_polls
             WHERE findings IS NOT NULL AND polled_at >= to_timestamp($1::DOUBLE / 1000) AND polled_at < to_timestamp($2::DOUBLE / 1000))
       GROUP BY ALL ORDER BY minute_ms`,
      [sinceMs, untilMs],
    );
    const out = new Map<string, FindingSeed[]>();
    for (const r of rows) {
      let list = out.get(r.feed_id);
      if (!list) out.set(r.feed_id, (list = []));
      list.push({ minuteMs: r.minute_ms, rule: r.rule, count: r.count, example: r.example, lastMs: r.last_ms });
    }
    return out;
  }

  /** Webhook deliveries waiting for an attempt (pending or retrying), and the oldest of them. */
  async outbox(): Promise<OutboxFigures> {
    const [row] = await this.rows<{ depth: number; oldest_ms: number | null }>(
      `SELECT count(*)::DOUBLE AS depth, epoch_ms(min(created_at))::DOUBLE AS oldest_ms
       FROM webhook_deliveries WHERE state IN ('pending', 'retrying')`,
    );
    return { depth: row?.depth ?? 0, oldestPendingMs: row?.oldest_ms ?? null };
  }

  /** Waits for the statement running now, then closes the connection. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.queue;
    this.conn.closeSync();
  }
}
