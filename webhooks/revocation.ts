// What revoking an API key does to its webhooks: every endpoint of the key is disabled
// (disabled_reason key_revoked) and every delivery still queued for it is cancelled, recorded as
// `cancelled` in the delivery audit. An attempt already in flight keeps its verdict (the request
// was sent before the revocation); if it would be retried, it is cancelled when the verdict is
// recorded (failOutstanding). Revoked keys are read from api_keys, so a key revoked by SQL is
// caught the same way: at the next outbox batch, at start, or when the key cache notices it.
import type { DuckDBConnection, DuckDBValue } from '@duckdb/node-api';
import { rows } from './sql.ts';
import { tsParam } from '../store/sql.ts';

/** The ids of revoked keys, as a subquery. */
export const REVOKED_KEY_IDS = 'SELECT id FROM api_keys WHERE revoked_at IS NOT NULL';

export interface RevokedWebhooks {
  /** endpoints disabled now (those disabled or deleted before are left as they were) */
  endpoints_disabled: number;
  /** queued deliveries cancelled now */
  deliveries_cancelled: number;
}

/**
 * Disables the endpoints of `keyId` (or of every revoked key) and cancels their queued deliveries,
 * on the caller's connection: inside the transaction that revokes the key, the key's own row is
 * already revoked. A key that is not revoked is left alone.
 */
export async function endRevokedWebhooks(
  conn: DuckDBConnection,
  nowMs: number,
  keyId?: string,
): Promise<RevokedWebhooks> {
  const params: DuckDBValue[] = keyId === undefined ? [nowMs] : [nowMs, keyId];
  const onKey = keyId === undefined ? '' : 'AND key_id = $2';
  const disabled = await rows<{ endpoint_id: string }>(
    conn,
    `UPDATE webhook_endpoints SET enabled = false, disabled_reason = 'key_revoked', disabled_at = ${tsParam(1)},
       updated_at = ${tsParam(1)}
     WHERE enabled AND deleted_at IS NULL AND key_id IN (${REVOKED_KEY_IDS}) ${onKey}
     RETURNING endpoint_id`,
    params,
  );
  const cancelled = await rows<{ delivery_id: string }>(
    conn,
    `UPDATE webhook_deliveries SET state = 'cancelled', next_attempt_at = NULL, updated_at = ${tsParam(1)},
       last_error = 'cancelled: the API key was revoked'
     WHERE state IN ('pending', 'retrying') AND NOT in_flight AND key_id IN (${REVOKED_KEY_IDS}) ${onKey}
     RETURNING delivery_id`,
    params,
  );
  return { endpoints_disabled: disabled.length, deliveries_cancelled: cancelled.length };
}
