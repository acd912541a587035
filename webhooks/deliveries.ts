// The delivery audit of one API key: newest first, keyset pagination on the delivery's
// sequence number, so rows added while a client pages never shift or repeat a page. The position
// is plain: the API signs it once, in its own cursor (http/routes/webhooks.ts).
import type { DuckDBConnection, DuckDBValue } from '@duckdb/node-api';
import type { Db } from '../store/db.ts';
import { ApiError } from '../core/errors.ts';
import type { EventType } from '../core/events.ts';
import type { Attempt, AttemptOutcome, Delivery, DeliveryPage, DeliveryState } from './schemas.ts';
import { list, num, rows } from './sql.ts';
import { iso, isoRequired } from '../core/dates.ts';

export { DeliveryListQuerySchema, DeliveryPageSchema, DeliverySchema, AttemptSchema } from './schemas.ts';

export interface DeliveryFilter {
  endpoint_id?: string;
  state?: DeliveryState;
  event_type?: EventType;
  limit: number;
  /** the previous page's `next_after`: list the deliveries before that position */
  after?: string;
}

const POSITION = /^\d{1,19}$/;

const DELIVERY_COLUMNS = `d.delivery_id, d.seq, d.endpoint_id, d.message_id, d.event_type, d.state, d.attempt_count,
  epoch_ms(d.next_attempt_at) AS next_ms, d.last_status_code, d.last_error,
  epoch_ms(d.created_at) AS created_ms, epoch_ms(d.updated_at) AS updated_ms, d.in_flight,
  epoch_ms(d.attempt_started_at) AS running_since_ms`;

/**
 * The attempt running now has no audit row until its verdict; show it as in flight. Its number
 * never repeats an audited one: the delivery row and its attempts are read in one snapshot.
 */
function withRunning(done: Attempt[], row: Record<string, unknown>): Attempt[] {
  if (!row.in_flight || row.running_since_ms === null || row.running_since_ms === undefined) return done;
  if (done.some((a) => a.attempt >= Number(row.attempt_count))) return done;
  return [
    ...done,
    {
      attempt: Number(row.attempt_count),
      started_at: isoRequired(row.running_since_ms as bigint),
      finished_at: null,
      outcome: 'in_flight',
      status_code: null,
      latency_ms: null,
      error: null,
    },
  ];
}

async function attach(conn: DuckDBConnection, found: Record<string, unknown>[]): Promise<Delivery[]> {
  if (found.length === 0) return [];
  const attempts = await rows<Record<string, unknown>>(
    conn,
    `SELECT delivery_id, attempt, epoch_ms(started_at) AS started_ms, epoch_ms(finished_at) AS finished_ms, outcome,
       status_code, latency_ms, error
     FROM webhook_attempts WHERE delivery_id IN (SELECT unnest($1::VARCHAR[])) ORDER BY delivery_id, attempt`,
    [list(found.map((r) => r.delivery_id as string))],
  );
  const byDelivery = new Map<string, Attempt[]>();
  for (const a of attempts) {
    const entry: Attempt = {
      attempt: Number(a.attempt),
      started_at: isoRequired(a.started_ms as bigint),
      finished_at: iso(a.finished_ms as bigint | null),
      outcome: a.outcome as AttemptOutcome,
      status_code: num(a.status_code as number | null),
      latency_ms: num(a.latency_ms as number | null),
      error: (a.error as string | null) ?? null,
    };
    const id = a.delivery_id as string;
    byDelivery.set(id, [...(byDelivery.get(id) ?? []), entry]);
  }
  return found.map((r) => ({
    id: r.delivery_id as string,
    endpoint_id: r.endpoint_id as string,
    message_id: r.message_id as string,
    event_type: r.event_type as EventType,
    state: r.state as DeliveryState,
    attempt_count: Number(r.attempt_count),
    next_attempt_at: iso(r.next_ms as bigint | null),
    last_status_code: num(r.last_status_code as number | null),
    last_error: (r.last_error as string | null) ?? null,
    created_at: isoRequired(r.created_ms as bigint),
    updated_at: isoRequired(r.updated_ms as bigint),
    attempts: withRunning(byDelivery.get(r.delivery_id as string) ?? [], r),
  }));
}

/**
 * One page of the key's deliveries, newest first, each with its attempts. `next_after` is the
 * position to pass as `after` for the next page, null on the last page.
 */
export async function listDeliveries(db: Db, keyId: string, filter: DeliveryFilter): Promise<DeliveryPage> {
  if (!Number.isInteger(filter.limit) || filter.limit < 1) {
    throw new ApiError('invalid_parameter', 'limit: must be a positive integer', {
      errors: [{ parameter: 'limit', detail: 'must be a positive integer' }],
    });
  }
  const where = ['d.key_id = $1'];
  const params: DuckDBValue[] = [keyId];
  const add = (sql: string, value: DuckDBValue) => {
    params.push(value);
    where.push(sql.replace('?', `$${params.length}`));
  };
  if (filter.endpoint_id !== undefined) add('d.endpoint_id = ?', filter.endpoint_id);
  if (filter.state !== undefined) add('d.state = ?', filter.state);
  if (filter.event_type !== undefined) add('d.event_type = ?', filter.event_type);
  if (filter.after !== undefined) {
    if (!POSITION.test(filter.after)) {
      throw new ApiError('invalid_cursor', 'the cursor is malformed', {
        errors: [{ parameter: 'cursor', detail: 'the cursor is malformed' }],
      });
    }
    add('d.seq < ?::BIGINT', BigInt(filter.after));
  }
  params.push(filter.limit + 1);
  // one snapshot: a verdict committed between two reads would show a delivery still in flight
  // beside the audit row of that same attempt
  const { found, data } = await db.transaction(async (conn) => {
    const found = await rows<Record<string, unknown>>(
      conn,
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d WHERE ${where.join(' AND ')}
       ORDER BY d.seq DESC LIMIT $${params.length}`,
      params,
    );
    return { found, data: await attach(conn, found.slice(0, filter.limit)) };
  });
  const last = found[Math.min(found.length, filter.limit) - 1];
  return {
    data,
    next_after: found.length > filter.limit && last ? String(last.seq) : null,
  };
}

export async function getDelivery(db: Db, keyId: string, deliveryId: string): Promise<Delivery> {
  const [delivery] = await db.transaction(async (conn) =>
    attach(
      conn,
      await rows<Record<string, unknown>>(
        conn,
        `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d WHERE d.key_id = $1 AND d.delivery_id = $2`,
        [keyId, deliveryId],
      ),
    ),
  );
  if (!delivery) throw new ApiError('not_found', `webhook delivery ${deliveryId} not found`);
  return delivery;
}
