// The outbox tables' SQL: insert matched events, claim due deliveries, record attempt
// verdicts, recover from a crash. Only the worker and the outbox call these.
import type { DuckDBAppender, DuckDBConnection, DuckDBValue } from '@duckdb/node-api';
import type { Db } from '../store/db.ts';
import { timestamptzFromMs, timestamptzValue, tsParam } from '../store/sql.ts';
import type { AttemptResult, NextStep } from './retry-policy.ts';
import { FAILING_DISABLE_MS } from './retry-policy.ts';
import type { BodyCache } from './body-cache.ts';
import { list, rows } from './sql.ts';

function appendNullable<T>(appender: DuckDBAppender, value: T | null, append: (v: T) => void): void {
  if (value === null) appender.appendNull();
  else append(value);
}

export interface NewMessage {
  message_id: string;
  event_type: string;
  occurred_ms: number;
  body: string;
}
export interface NewDelivery {
  delivery_id: string;
  message_id: string;
  endpoint_id: string;
  key_id: string;
  event_type: string;
}

/**
 * Stores messages and their deliveries in one transaction, before any attempt is made.
 * Endpoints disabled since the events were matched are dropped here, inside the transaction,
 * so no delivery is queued for an endpoint that can no longer receive it. Returns the count stored.
 */
export async function insertOutbox(
  db: Db,
  messages: readonly NewMessage[],
  matched: readonly NewDelivery[],
  nowMs: number,
): Promise<number> {
  if (matched.length === 0) return 0;
  return db.transaction(async (conn) => {
    const enabled = new Set(
      (
        await rows<{ endpoint_id: string }>(
          conn,
          `SELECT endpoint_id FROM webhook_endpoints WHERE enabled AND endpoint_id IN (SELECT unnest($1::VARCHAR[]))`,
          [list([...new Set(matched.map((d) => d.endpoint_id))])],
        )
      ).map((r) => r.endpoint_id),
    );
    const deliveries = matched.filter((d) => enabled.has(d.endpoint_id));
    if (deliveries.length === 0) return 0;
    const seqs = await rows<{ v: bigint }>(
      conn,
      `SELECT nextval('webhook_delivery_seq') AS v FROM range($1::BIGINT) ORDER BY v`,
      [deliveries.length],
    );
    const messageAppender = await conn.createAppender('webhook_messages');
    try {
      for (const m of messages) {
        messageAppender.appendVarchar(m.message_id);
        messageAppender.appendVarchar(m.event_type);
        messageAppender.appendTimestampTZ(timestamptzValue(m.occurred_ms));
        messageAppender.appendTimestampTZ(timestamptzValue(nowMs));
        messageAppender.appendVarchar(m.body);
        messageAppender.endRow();
      }
    } finally {
      messageAppender.closeSync();
    }
    const appender = await conn.createAppender('webhook_deliveries');
    try {
      deliveries.forEach((d, i) => {
        appender.appendVarchar(d.delivery_id);
        appender.appendBigInt(seqs[i]!.v);
        appender.appendVarchar(d.message_id);
        appender.appendVarchar(d.endpoint_id);
        appender.appendVarchar(d.key_id);
        appender.appendVarchar(d.event_type);
        appender.appendVarchar('pending');
        appender.appendInteger(0);
        appender.appendInteger(0);
        appender.appendBoolean(false);
        appender.appendNull();
        appender.appendTimestampTZ(timestamptzValue(nowMs));
        appender.appendNull();
        appender.appendNull();
        appender.appendTimestampTZ(timestamptzValue(nowMs));
        appender.appendTimestampTZ(timestamptzValue(nowMs));
        appender.endRow();
      });
    } finally {
      appender.closeSync();
    }
    return deliveries.length;
  });
}

export interface ClaimedDelivery {
  delivery_id: string;
  message_id: string;
  endpoint_id: string;
  /** number of this attempt, 1-based, interrupted ones included */
  attempt: number;
  /** attempts with a verdict before this one */
  judged_before: number;
  started_ms: number;
  body: string;
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_until_ms: number | null;
}

export interface Claim {
  claimed: ClaimedDelivery[];
  /** candidates were cut off by the per-endpoint bound; another claim may find more */
  more: boolean;
}

/**
 * Marks up to `capacity` due deliveries in flight, oldest due first, keeping each endpoint
 * within `perEndpoint` given the attempts already running (`busy`). The mark commits before
 * any request is sent, so an attempt cut short by a crash is found, and audited, at the next
 * start. The per-endpoint bound is applied here rather than in SQL: a window function over
 * the queue costs ten times the plain ordered scan.
 */
export async function claimDue(
  db: Db,
  nowMs: number,
  capacity: number,
  perEndpoint: number,
  busy: ReadonlyMap<string, number>,
  cache?: BodyCache,
): Promise<Claim> {
  if (capacity <= 0) return { claimed: [], more: false };
  const saturated = [...busy].filter(([, n]) => n >= perEndpoint).map(([id]) => id);
  const scan = capacity * 4;
  // no transaction: the select has no effect, and the update alone is the claim; both run
  // back to back on the shared connection, which no other writer of these rows uses
  const { picked, more } = await db.exclusive(async (conn) => {
    const candidates = await rows<Record<string, unknown>>(
      conn,
      `SELECT d.delivery_id, d.endpoint_id, d.message_id, d.attempt_count, d.interrupted_count, e.url, e.secret,
         e.previous_secret, epoch_ms(e.previous_secret_until) AS previous_until_ms
       FROM webhook_deliveries d JOIN webhook_endpoints e ON e.endpoint_id = d.endpoint_id AND e.enabled
       WHERE d.state IN ('pending', 'retrying') AND NOT d.in_flight AND d.next_attempt_at <= ${tsParam(1)}
         AND d.endpoint_id NOT IN (SELECT unnest($2::VARCHAR[]))
       ORDER BY d.next_attempt_at, d.seq
       LIMIT $3`,
      [nowMs, list(saturated), scan],
    );
    const taken = new Map(busy);
    const chosen = candidates
      .filter((c) => {
        const n = taken.get(c.endpoint_id as string) ?? 0;
        if (n >= perEndpoint) return false;
        taken.set(c.endpoint_id as string, n + 1);
        return true;
      })
      .slice(0, capacity);
    if (chosen.length) {
      await conn.run(
        `UPDATE webhook_deliveries SET in_flight = true, attempt_count = attempt_count + 1,
           attempt_started_at = ${tsParam(2)}, updated_at = ${tsParam(2)}
         WHERE delivery_id IN (SELECT unnest($1::VARCHAR[]))`,
        [list(chosen.map((c) => c.delivery_id as string)), nowMs],
      );
    }
    return { picked: chosen, more: candidates.length === scan && chosen.length < capacity };
  });
  if (picked.length === 0) return { claimed: [], more };
  const missing = [...new Set(picked.map((c) => c.message_id as string).filter((id) => cache?.get(id) === undefined))];
  const bodies = new Map<string, string>();
  if (missing.length) {
    const found = await db.all<{ message_id: string; body: string }>(
      'SELECT message_id, body FROM webhook_messages WHERE message_id IN (SELECT unnest($1::VARCHAR[]))',
      [list(missing)],
    );
    for (const m of found) bodies.set(m.message_id, m.body);
  }
  const claimed = picked.map((c) => ({
    delivery_id: c.delivery_id as string,
    message_id: c.message_id as string,
    endpoint_id: c.endpoint_id as string,
    attempt: Number(c.attempt_count) + 1,
    judged_before: Number(c.attempt_count) - Number(c.interrupted_count),
    started_ms: nowMs,
    body: cache?.get(c.message_id as string) ?? bodies.get(c.message_id as string)!,
    url: c.url as string,
    secret: c.secret as string,
    previous_secret: (c.previous_secret as string | null) ?? null,
    previous_until_ms: c.previous_until_ms === null ? null : Number(c.previous_until_ms),
  }));
  return { claimed, more };
}

/** Databases whose shared connection already holds the verdict staging table. */
const staged = new WeakSet<Db>();

export interface AttemptVerdict {
  delivery_id: string;
  endpoint_id: string;
  attempt: number;
  started_ms: number;
  finished_ms: number;
  result: AttemptResult;
  step: NextStep;
}

function valuesClause(rowCount: number, casts: readonly string[]): string {
  const tuples: string[] = [];
  for (let r = 0; r < rowCount; r++) {
    tuples.push(`(${casts.map((c, i) => `$${r * casts.length + i + 1}::${c}`).join(', ')})`);
  }
  return tuples.join(', ');
}

/** Per endpoint: did its latest verdict succeed, and when did the failures after it begin. */
function failureRuns(verdicts: readonly AttemptVerdict[]): Map<string, { cleared: boolean; since: number | null }> {
  const runs = new Map<string, { cleared: boolean; since: number | null }>();
  for (const v of [...verdicts].sort((a, b) => a.finished_ms - b.finished_ms)) {
    if (v.result.outcome === 'interrupted') continue;
    const run = runs.get(v.endpoint_id) ?? { cleared: false, since: null };
    if (v.result.outcome === 'succeeded') {
      run.cleared = true;
      run.since = null;
    } else if (run.since === null) {
      run.since = v.finished_ms;
    }
    runs.set(v.endpoint_id, run);
  }
  return runs;
}

/**
 * Writes a batch of verdicts in one transaction: the attempt rows, the deliveries' next
 * state, the endpoints' failure clocks; disables endpoints that answered 410 or have failed
 * for five days, and fails what they still had queued. Returns the endpoints disabled.
 */
export async function recordVerdicts(
  db: Db,
  verdicts: readonly AttemptVerdict[],
  nowMs: number,
  knownClear: Set<string> = new Set(),
): Promise<string[]> {
  if (verdicts.length === 0) return [];
  if (!staged.has(db)) {
    await db.run(`CREATE TEMP TABLE IF NOT EXISTS webhook_verdict_stage (
      delivery_id VARCHAR, state VARCHAR, next_ms BIGINT, interrupted INTEGER, status_code INTEGER, error VARCHAR)`);
    staged.add(db);
  }
  const runs = [...failureRuns(verdicts)];
  const cleared = runs.filter(([, run]) => run.cleared && run.since === null).map(([id]) => id);
  const failing = runs.filter(([, run]) => run.since !== null);
  const disabled = await db.transaction(async (conn) => {
    // appenders, not VALUES lists: binding a few hundred parameters costs more than the write
    const attempts = await conn.createAppender('webhook_attempts');
    try {
      for (const v of verdicts) {
        attempts.appendVarchar(v.delivery_id);
        attempts.appendInteger(v.attempt);
        attempts.appendTimestampTZ(timestamptzValue(v.started_ms));
        attempts.appendTimestampTZ(timestamptzValue(v.finished_ms));
        attempts.appendVarchar(v.result.outcome);
        appendNullable(attempts, v.result.status_code, (x) => attempts.appendInteger(x));
        appendNullable(attempts, v.result.latency_ms, (x) => attempts.appendDouble(x));
        appendNullable(attempts, v.result.error, (x) => attempts.appendVarchar(x));
        attempts.endRow();
      }
    } finally {
      attempts.closeSync();
    }
    await conn.run('DELETE FROM temp.webhook_verdict_stage');
    const stage = await conn.createAppender('webhook_verdict_stage', 'main', 'temp');
    try {
      for (const v of verdicts) {
        stage.appendVarchar(v.delivery_id);
        stage.appendVarchar(v.step.state);
        appendNullable(stage, v.step.next_attempt_ms, (x) => stage.appendBigInt(BigInt(Math.round(x))));
        stage.appendInteger(v.result.outcome === 'interrupted' ? 1 : 0);
        appendNullable(stage, v.result.status_code, (x) => stage.appendInteger(x));
        appendNullable(stage, v.result.error, (x) => stage.appendVarchar(x));
        stage.endRow();
      }
    } finally {
      stage.closeSync();
    }
    await conn.run(
      `UPDATE webhook_deliveries d SET state = v.state, in_flight = false, attempt_started_at = NULL,
         next_attempt_at = CASE WHEN v.next_ms IS NULL THEN NULL ELSE ${timestamptzFromMs('v.next_ms')} END,
         interrupted_count = d.interrupted_count + v.interrupted,
         last_status_code = coalesce(v.status_code, CASE WHEN v.interrupted = 1 THEN d.last_status_code END),
         last_error = v.error, updated_at = ${tsParam(1)}
       FROM temp.webhook_verdict_stage v
       WHERE d.delivery_id = v.delivery_id`,
      [nowMs],
    );

    // only this module sets failing_since, so endpoints known to be clear need no statement
    const unknown = cleared.filter((id) => !knownClear.has(id));
    if (unknown.length) {
      await conn.run(
        `UPDATE webhook_endpoints SET failing_since = NULL
         WHERE endpoint_id IN (SELECT unnest($1::VARCHAR[])) AND failing_since IS NOT NULL`,
        [list(unknown)],
      );
    }
    if (failing.length) {
      const runParams: DuckDBValue[] = failing.flatMap(([id, run]) => [id, run.cleared, run.since]);
      await conn.run(
        `UPDATE webhook_endpoints e SET failing_since = CASE
           WHEN v.cleared THEN ${timestamptzFromMs('v.since')}
           ELSE coalesce(e.failing_since, ${timestamptzFromMs('v.since')}) END
         FROM (VALUES ${valuesClause(failing.length, ['VARCHAR', 'BOOLEAN', 'BIGINT'])}) AS v(endpoint_id,
           cleared, since)
         WHERE e.endpoint_id = v.endpoint_id`,
        runParams,
      );
    }
    const turnedOff: string[] = [];
    const gone = [...new Set(verdicts.filter((v) => v.step.disable_endpoint).map((v) => v.endpoint_id))];
    if (gone.length) {
      const found = await rows<{ endpoint_id: string }>(
        conn,
        `UPDATE webhook_endpoints SET enabled = false, disabled_reason = 'gone', disabled_at = ${tsParam(2)},
          updated_at = ${tsParam(2)}
         WHERE endpoint_id IN (SELECT unnest($1::VARCHAR[])) AND enabled RETURNING endpoint_id`,
        [list(gone), nowMs],
      );
      turnedOff.push(...found.map((r) => r.endpoint_id));
    }
    if (failing.length) {
      const found = await rows<{ endpoint_id: string }>(
        conn,
        `UPDATE webhook_endpoints SET enabled = false, disabled_reason = 'failing', disabled_at = ${tsParam(2)},
          updated_at = ${tsParam(2)}
         WHERE endpoint_id IN (SELECT unnest($1::VARCHAR[])) AND enabled
           AND failing_since <= ${timestamptzFromMs('$2::BIGINT - $3::BIGINT')}
         RETURNING endpoint_id`,
        [list(failing.map(([id]) => id)), nowMs, FAILING_DISABLE_MS],
      );
      turnedOff.push(...found.map((r) => r.endpoint_id));
    }
    // a delivery put back in the queue may belong to an endpoint disabled meanwhile (410 on a
    // sibling, the owner disabling it): fail those rather than leave them queued forever
    const requeued = [
      ...new Set(
        verdicts.filter((v) => v.step.state === 'retrying' || v.step.state === 'pending').map((v) => v.endpoint_id),
      ),
    ];
    await failOutstanding(conn, [...new Set([...turnedOff, ...requeued])], null, nowMs);
    return turnedOff;
  });
  for (const id of cleared) knownClear.add(id);
  for (const [id] of failing) knownClear.delete(id);
  return disabled;
}

/**
 * Fails the queued (not in-flight) deliveries of those endpoints that are disabled (cancels them
 * when the endpoint's key was revoked). `reason` overrides the error text; by default it names
 * the endpoint's disabled reason.
 */
export async function failOutstanding(
  conn: DuckDBConnection,
  endpointIds: readonly string[],
  reason: string | null,
  nowMs: number,
): Promise<void> {
  if (endpointIds.length === 0) return;
  // a revoked key's deliveries are cancelled, not failed: nothing went wrong with the target
  await conn.run(
    `UPDATE webhook_deliveries d SET state = CASE WHEN e.disabled_reason = 'key_revoked' THEN 'cancelled' ELSE
      'failed' END,
       next_attempt_at = NULL, updated_at = ${tsParam(3)},
       last_error = coalesce($2, CASE WHEN e.disabled_reason = 'key_revoked' THEN 'cancelled: the API key was revoked'
         ELSE 'endpoint disabled (' || e.disabled_reason || ')' END)
     FROM webhook_endpoints e
     WHERE d.endpoint_id = e.endpoint_id AND NOT e.enabled AND d.endpoint_id IN (SELECT unnest($1::VARCHAR[]))
       AND d.state IN ('pending', 'retrying') AND NOT d.in_flight`,
    [list(endpointIds), reason, nowMs],
  );
}

/**
 * After a crash, deliveries marked in flight belong to no one. Each gets an audited
 * 'interrupted' attempt and becomes due at once (at-least-once delivery), unless its endpoint
 * was disabled meanwhile (its key revoked, say): then it ends as queued ones of that endpoint did.
 */
export async function recoverInFlight(db: Db, nowMs: number): Promise<number> {
  return db.transaction(async (conn) => {
    await conn.run(
      `INSERT INTO webhook_attempts (delivery_id, attempt, started_at, finished_at, outcome, status_code,
        latency_ms, error)
       SELECT delivery_id, attempt_count, coalesce(attempt_started_at, updated_at), NULL, 'interrupted', NULL, NULL,
         'interrupted: the process stopped before the response was recorded; retried'
       FROM webhook_deliveries WHERE in_flight`,
    );
    const recovered = await rows<{ delivery_id: string; endpoint_id: string }>(
      conn,
      `UPDATE webhook_deliveries SET in_flight = false, attempt_started_at = NULL,
        interrupted_count = interrupted_count + 1,
         next_attempt_at = ${tsParam(1)}, updated_at = ${tsParam(1)}
       WHERE in_flight RETURNING delivery_id, endpoint_id`,
      [nowMs],
    );
    await failOutstanding(conn, [...new Set(recovered.map((r) => r.endpoint_id))], null, nowMs);
    return recovered.length;
  });
}

/** When the earliest queued delivery falls due, or null when nothing is queued. */
export async function nextDueMs(db: Db): Promise<number | null> {
  const [row] = await db.all<{ due: bigint | null }>(
    `SELECT epoch_ms(min(d.next_attempt_at)) AS due FROM webhook_deliveries d
     JOIN webhook_endpoints e ON e.endpoint_id = d.endpoint_id
     WHERE d.state IN ('pending', 'retrying') AND NOT d.in_flight AND e.enabled`,
  );
  return row?.due === null || row?.due === undefined ? null : Number(row.due);
}

/** Drops finished deliveries (and their attempts and messages) last changed before `beforeMs`. */
export async function pruneOutbox(db: Db, beforeMs: number): Promise<number> {
  return db.transaction(async (conn) => {
    const old = `SELECT delivery_id FROM webhook_deliveries
      WHERE state IN ('succeeded', 'failed', 'cancelled') AND updated_at < ${tsParam(1)}`;
    await conn.run(`DELETE FROM webhook_attempts WHERE delivery_id IN (${old})`, [beforeMs]);
    const gone = await rows<{ delivery_id: string }>(
      conn,
      `DELETE FROM webhook_deliveries WHERE delivery_id IN (${old}) RETURNING delivery_id`,
      [beforeMs],
    );
    await conn.run(
      `DELETE FROM webhook_messages m WHERE created_at < ${tsParam(1)}
         AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.message_id = m.message_id)`,
      [beforeMs],
    );
    await conn.run(
      `DELETE FROM webhook_endpoints e WHERE deleted_at < ${tsParam(1)}
         AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.endpoint_id = e.endpoint_id)`,
      [beforeMs],
    );
    return gone.length;
  });
}
