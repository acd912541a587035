// Webhook endpoints of one API key: registration (secret shown once), listing, updates,
// disabling, deletion, secret rotation and redelivery. Every function is scoped by key id,
// so one key can never see or touch another key's endpoints.
import type { Db } from '../store/db.ts';
import { ApiError } from '../core/errors.ts';
import type { EventType } from '../core/events.ts';
import type { Mode } from '../core/types.ts';
import type { SecretBox } from './secret-box.ts';
import { generateSecret } from './signing.ts';
import { checkTarget, type Resolver, type TargetPolicy } from './ssrf.ts';
import {
  MAX_ENDPOINTS_PER_KEY,
  type DisabledReason,
  type Endpoint,
  type EndpointCreate,
  type EndpointFilters,
  type EndpointUpdate,
  type EndpointWithSecret,
} from './schemas.ts';
import { failOutstanding } from './delivery-store.ts';
import { list, newId, rows } from './sql.ts';
import { iso, isoRequired } from '../core/dates.ts';
import { tsParam } from '../store/sql.ts';

export {
  EndpointCreateSchema,
  EndpointUpdateSchema,
  EndpointSchema,
  EndpointWithSecretSchema,
  EndpointListSchema,
  EndpointFiltersSchema,
  RedeliverSchema,
} from './schemas.ts';

export const ROTATION_OVERLAP_MS = 24 * 3600_000;

export interface EndpointDeps {
  policy: TargetPolicy;
  resolve?: Resolver;
  now?: () => number;
  /** how long the replaced secret keeps signing after a rotation */
  rotationOverlapMs?: number;
  /** encrypts the secrets this module stores */
  secrets: SecretBox;
}

/** An endpoint as the worker and the outbox need it, secrets included. */
export interface EndpointRecord {
  endpoint_id: string;
  key_id: string;
  url: string;
  description: string | null;
  filters: EndpointFilters;
  enabled: boolean;
  disabled_reason: DisabledReason | null;
  disabled_ms: number | null;
  failing_ms: number | null;
  /** as stored: encrypted (secret-box.ts), opened only to sign */
  secret: string;
  previous_secret: string | null;
  previous_until_ms: number | null;
  created_ms: number;
  updated_ms: number;
}

export const ENDPOINT_COLUMNS = `endpoint_id, key_id, url, description, filter_modes, filter_routes, filter_lines,
  filter_event_types, enabled, disabled_reason, epoch_ms(disabled_at) AS disabled_ms,
  epoch_ms(failing_since) AS failing_ms, secret, previous_secret,
  epoch_ms(previous_secret_until) AS previous_until_ms, epoch_ms(created_at) AS created_ms,
  epoch_ms(updated_at) AS updated_ms`;

type EndpointRow = Record<string, unknown>;

export function toRecord(row: EndpointRow): EndpointRecord {
  const filters: EndpointFilters = {};
  if (row.filter_modes) filters.modes = row.filter_modes as Mode[];
  if (row.filter_routes) filters.routes = row.filter_routes as string[];
  if (row.filter_lines) filters.lines = row.filter_lines as string[];
  if (row.filter_event_types) filters.event_types = row.filter_event_types as EventType[];
  const ms = (v: unknown) => (v === null || v === undefined ? null : Number(v));
  return {
    endpoint_id: row.endpoint_id as string,
    key_id: row.key_id as string,
    url: row.url as string,
    description: (row.description as string | null) ?? null,
    filters,
    enabled: row.enabled as boolean,
    disabled_reason: (row.disabled_reason as DisabledReason | null) ?? null,
    disabled_ms: ms(row.disabled_ms),
    failing_ms: ms(row.failing_ms),
    secret: row.secret as string,
    previous_secret: (row.previous_secret as string | null) ?? null,
    previous_until_ms: ms(row.previous_until_ms),
    created_ms: Number(row.created_ms),
    updated_ms: Number(row.updated_ms),
  };
}

/** The secrets that sign now (as stored): the current one, and the replaced one until its overlap ends. */
export function signingSecrets(
  endpoint: Pick<EndpointRecord, 'secret' | 'previous_secret' | 'previous_until_ms'>,
  nowMs: number,
): string[] {
  const secrets = [endpoint.secret];
  if (endpoint.previous_secret && endpoint.previous_until_ms !== null && endpoint.previous_until_ms > nowMs) {
    secrets.push(endpoint.previous_secret);
  }
  return secrets;
}

export function toPublic(record: EndpointRecord, nowMs: number): Endpoint {
  const overlap =
    record.previous_until_ms !== null && record.previous_until_ms > nowMs ? record.previous_until_ms : null;
  return {
    id: record.endpoint_id,
    url: record.url,
    description: record.description,
    filters: record.filters,
    enabled: record.enabled,
    disabled_reason: record.disabled_reason,
    disabled_at: iso(record.disabled_ms),
    failing_since: iso(record.failing_ms),
    previous_secret_expires_at: iso(overlap),
    created_at: isoRequired(record.created_ms),
    updated_at: isoRequired(record.updated_ms),
  };
}

function clock(deps: { now?: () => number }): number {
  return Math.round((deps.now ?? Date.now)());
}

async function loadRecord(db: Db, keyId: string, endpointId: string): Promise<EndpointRecord> {
  const found = await db.all<EndpointRow>(
    `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE key_id = $1 AND endpoint_id = $2 AND deleted_at IS NULL`,
    [keyId, endpointId],
  );
  if (!found[0]) throw new ApiError('not_found', `webhook endpoint ${endpointId} not found`);
  return toRecord(found[0]);
}

export async function createEndpoint(
  db: Db,
  keyId: string,
  input: EndpointCreate,
  deps: EndpointDeps,
): Promise<EndpointWithSecret> {
  await checkTarget(input.url, deps.policy, deps.resolve);
  const now = clock(deps);
  const id = newId('ep');
  const secret = generateSecret();
  const filters = input.filters ?? {};
  await db.transaction(async (conn) => {
    const [count] = await rows<{ n: bigint }>(
      conn,
      'SELECT count(*) AS n FROM webhook_endpoints WHERE key_id = $1 AND deleted_at IS NULL',
      [keyId],
    );
    if (Number(count?.n ?? 0) >= MAX_ENDPOINTS_PER_KEY) {
      throw new ApiError(
        'conflict',
        `a key may hold at most ${MAX_ENDPOINTS_PER_KEY} webhook endpoints; delete one first`,
      );
    }
    await conn.run(
      `INSERT INTO webhook_endpoints (endpoint_id, key_id, url, description, filter_modes, filter_routes, filter_lines,
        filter_event_types, enabled, secret, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5::VARCHAR[], $6::VARCHAR[], $7::VARCHAR[], $8::VARCHAR[], true, $9, ${tsParam(10)},
         ${tsParam(10)})`,
      [
        id,
        keyId,
        input.url,
        input.description ?? null,
        list(filters.modes),
        list(filters.routes),
        list(filters.lines),
        list(filters.event_types),
        deps.secrets.seal(secret, id),
        now,
      ],
    );
  });
  const record = await loadRecord(db, keyId, id);
  return { ...toPublic(record, now), secret };
}

export async function listEndpoints(db: Db, keyId: string, deps: { now?: () => number } = {}): Promise<Endpoint[]> {
  const now = clock(deps);
  const found = await db.all<EndpointRow>(
    `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE key_id = $1 AND deleted_at IS NULL ORDER BY ` +
      `created_at, endpoint_id`,
    [keyId],
  );
  return found.map((row) => toPublic(toRecord(row), now));
}

export async function getEndpoint(
  db: Db,
  keyId: string,
  endpointId: string,
  deps: { now?: () => number } = {},
): Promise<Endpoint> {
  return toPublic(await loadRecord(db, keyId, endpointId), clock(deps));
}

export async function updateEndpoint(
  db: Db,
  keyId: string,
  endpointId: string,
  patch: EndpointUpdate,
  deps: EndpointDeps,
): Promise<Endpoint> {
  const current = await loadRecord(db, keyId, endpointId);
  if (patch.url !== undefined && patch.url !== current.url) await checkTarget(patch.url, deps.policy, deps.resolve);
  const now = clock(deps);
  const sets: string[] = [`updated_at = ${tsParam(3)}`];
  const params: (string | number | boolean | null | ReturnType<typeof list>)[] = [keyId, endpointId, now];
  const add = (column: string, value: (typeof params)[number], cast = '') => {
    params.push(value);
    sets.push(`${column} = $${params.length}${cast}`);
  };
  if (patch.url !== undefined) add('url', patch.url);
  if (patch.description !== undefined) add('description', patch.description);
  if (patch.filters !== undefined) {
    add('filter_modes', list(patch.filters.modes), '::VARCHAR[]');
    add('filter_routes', list(patch.filters.routes), '::VARCHAR[]');
    add('filter_lines', list(patch.filters.lines), '::VARCHAR[]');
    add('filter_event_types', list(patch.filters.event_types), '::VARCHAR[]');
  }
  const disabling = patch.enabled === false && current.enabled;
  if (patch.enabled === true && !current.enabled) {
    // a fresh start: the failure history that disabled it no longer counts
    sets.push('enabled = true', 'disabled_reason = NULL', 'disabled_at = NULL', 'failing_since = NULL');
  } else if (disabling) {
    sets.push('enabled = false', "disabled_reason = 'user'", `disabled_at = ${tsParam(3)}`);
  }
  await db.transaction(async (conn) => {
    await conn.run(
      `UPDATE webhook_endpoints SET ${sets.join(', ')} WHERE key_id = $1 AND endpoint_id = $2 AND deleted_at IS NULL`,
      params as never,
    );
    if (disabling) await failOutstanding(conn, [endpointId], 'endpoint disabled by its owner', now);
  });
  return toPublic(await loadRecord(db, keyId, endpointId), now);
}

export function disableEndpoint(db: Db, keyId: string, endpointId: string, deps: EndpointDeps): Promise<Endpoint> {
  return updateEndpoint(db, keyId, endpointId, { enabled: false }, deps);
}

/**
 * Deletes for the owner's purposes: gone from listings, secret erased, nothing more sent.
 * The rows stay so the delivery audit keeps its history until retention prunes it.
 */
export async function deleteEndpoint(
  db: Db,
  keyId: string,
  endpointId: string,
  deps: { now?: () => number } = {},
): Promise<void> {
  await loadRecord(db, keyId, endpointId);
  const now = clock(deps);
  await db.transaction(async (conn) => {
    await conn.run(
      `UPDATE webhook_endpoints SET deleted_at = ${tsParam(3)}, updated_at = ${tsParam(3)}, enabled = false,
         disabled_reason = 'deleted', disabled_at = coalesce(disabled_at, ${tsParam(3)}), secret = '',
           previous_secret = NULL,
         previous_secret_until = NULL
       WHERE key_id = $1 AND endpoint_id = $2`,
      [keyId, endpointId, now],
    );
    await failOutstanding(conn, [endpointId], 'endpoint deleted', now);
  });
}

/** New secret, shown once; the replaced one keeps signing for the overlap (both signatures sent). */
export async function rotateSecret(
  db: Db,
  keyId: string,
  endpointId: string,
  deps: EndpointDeps,
): Promise<EndpointWithSecret> {
  await loadRecord(db, keyId, endpointId);
  const now = clock(deps);
  const secret = generateSecret();
  const until = now + (deps.rotationOverlapMs ?? ROTATION_OVERLAP_MS);
  // the replaced secret moves as stored (sealed for this endpoint): it never leaves the database
  await db.run(
    `UPDATE webhook_endpoints SET secret = $3, previous_secret = secret, previous_secret_until = ${tsParam(4)},
       updated_at = ${tsParam(5)} WHERE key_id = $1 AND endpoint_id = $2`,
    [keyId, endpointId, deps.secrets.seal(secret, endpointId), until, now],
  );
  return { ...toPublic(await loadRecord(db, keyId, endpointId), now), secret };
}

/** Queues the message again for this endpoint, with the same webhook-id; returns the new delivery id. */
export async function redeliverMessage(
  db: Db,
  keyId: string,
  endpointId: string,
  messageId: string,
  deps: { now?: () => number } = {},
): Promise<string> {
  const endpoint = await loadRecord(db, keyId, endpointId);
  if (!endpoint.enabled)
    throw new ApiError('conflict', `webhook endpoint ${endpointId} is disabled; enable it before redelivering`);
  const now = clock(deps);
  const id = newId('dlv');
  const inserted = await db.all<{ delivery_id: string }>(
    `INSERT INTO webhook_deliveries (delivery_id, seq, message_id, endpoint_id, key_id, event_type, state,
      attempt_count,
       interrupted_count, in_flight, next_attempt_at, created_at, updated_at)
     SELECT $1, nextval('webhook_delivery_seq'), m.message_id, $2, $3, m.event_type, 'pending', 0, 0, false,
       ${tsParam(5)}, ${tsParam(5)}, ${tsParam(5)}
     FROM webhook_messages m
     WHERE m.message_id = $4
       AND EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.message_id = $4 AND d.endpoint_id = $2 AND d.key_id = $3)
     RETURNING delivery_id`,
    [id, endpointId, keyId, messageId, now],
  );
  if (!inserted[0])
    throw new ApiError('not_found', `message ${messageId} was never sent to webhook endpoint ${endpointId}`);
  return id;
}
