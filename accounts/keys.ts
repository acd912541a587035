// API key management against the store. Keys are random, shown once, stored as SHA-256 only.
// The rows are read and written by accounts/store.ts.
import { hash, randomBytes } from 'node:crypto';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { Db } from '../store/db.ts';
import { isPlan, type Plan } from './plans.ts';
import {
  insertKeyRow,
  keyRowsByHashes,
  keyRowById,
  keyRows,
  keyRowsByIdOrPrefix,
  keyRowsByIds,
  recentlyUsedKeyRows,
  revokeKeyRow,
  type KeyRow,
} from './store.ts';

export const KEY_PATTERN = /^tk_(live|test)_[A-Za-z0-9]{32}$/;
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const PREFIX_CHARS = 12;

export interface ApiKeyInfo {
  id: string;
  /** the first characters of the key, e.g. tk_live_AbCd */
  prefix: string;
  plan: Plan;
  test: boolean;
  name: string | null;
  created_at: string;
  revoked_at: string | null;
}

export interface CreatedKey extends ApiKeyInfo {
  /** the full key: returned here once and never stored */
  key: string;
}

/** 32 base62 characters from rejection-sampled random bytes: about 190 bits. */
export function generateKey(test: boolean): string {
  let body = '';
  while (body.length < 32) {
    for (const byte of randomBytes(48)) {
      // 248 = 4 × 62: dropping bytes above it keeps every character equally likely
      if (byte < 248 && body.length < 32) body += ALPHABET[byte % 62];
    }
  }
  return `tk_${test ? 'test' : 'live'}_${body}`;
}

export function hashKey(key: string): string {
  // the one-shot hash is several times cheaper than createHash on the per-request path
  return hash('sha256', key, 'hex');
}

export interface ApiKeyRecord extends ApiKeyInfo {
  key_hash: string;
}

function toRecord(row: KeyRow): ApiKeyRecord {
  if (!isPlan(row.plan)) throw new Error(`api key ${row.id} has unknown plan ${JSON.stringify(row.plan)}`);
  return {
    id: row.id,
    key_hash: row.key_hash,
    prefix: row.prefix,
    plan: row.plan,
    test: row.test,
    name: row.name,
    created_at: row.created_at.toISOString(),
    revoked_at: row.revoked_at ? row.revoked_at.toISOString() : null,
  };
}

function info(record: ApiKeyRecord): ApiKeyInfo {
  const { key_hash: _hash, ...rest } = record;
  return rest;
}

export async function createKey(
  db: Db,
  options: { plan: Plan; test?: boolean; name?: string | null },
): Promise<CreatedKey> {
  if (!isPlan(options.plan)) throw new Error(`unknown plan ${JSON.stringify(options.plan)}`);
  const name = options.name?.trim() || null;
  if (name && name.length > 200) throw new Error('key name is longer than 200 characters');
  const key = generateKey(options.test ?? false);
  const id = `key_${randomBytes(8).toString('hex')}`;
  await insertKeyRow(db, {
    id,
    key_hash: hashKey(key),
    prefix: key.slice(0, PREFIX_CHARS),
    plan: options.plan,
    test: options.test ?? false,
    name,
  });
  const record = await findKey(db, id);
  if (!record) throw new Error(`api key ${id} vanished after insert`);
  return { ...info(record), key };
}

export async function listKeys(db: Db, options: { includeRevoked?: boolean } = {}): Promise<ApiKeyInfo[]> {
  const rows = await keyRows(db, { activeOnly: options.includeRevoked === false });
  return rows.map((row) => info(toRecord(row)));
}

async function findKey(db: Db, id: string): Promise<ApiKeyRecord | null> {
  const row = await keyRowById(db, id);
  return row ? toRecord(row) : null;
}

/** The keys of these hashes, by hash, in one query. */
export async function findKeysByHashes(db: Db, hashes: readonly string[]): Promise<Map<string, ApiKeyRecord>> {
  return new Map((await keyRowsByHashes(db, hashes)).map((row) => [row.key_hash, toRecord(row)]));
}

/** The unrevoked keys used since `sinceMs`, most recent first, at most `limit` (the auth cache's warm start). */
export async function recentlyUsedKeys(db: Db, sinceMs: number, limit: number): Promise<ApiKeyRecord[]> {
  return (await recentlyUsedKeyRows(db, sinceMs, limit)).map(toRecord);
}

/** Current plan and revocation of the given keys, in one query (the auth cache's recheck). */
export async function keyStates(db: Db, ids: readonly string[]): Promise<Map<string, ApiKeyRecord>> {
  const states = new Map<string, ApiKeyRecord>();
  for (const row of await keyRowsByIds(db, ids)) states.set(row.id, toRecord(row));
  return states;
}

export class KeyNotFoundError extends Error {
  override name = 'KeyNotFoundError';
}

/**
 * The key named by its id (key_…), by the full key, or by a prefix that names exactly one key
 * (8 characters or more); KeyNotFoundError otherwise, saying why.
 */
export async function resolveKey(db: Db, idOrPrefix: string): Promise<ApiKeyInfo> {
  // a full key is found by its hash; anything else is an id or the start of a shown prefix
  const matches: KeyRow[] = KEY_PATTERN.test(idOrPrefix)
    ? await keyRowsByHashes(db, [hashKey(idOrPrefix)])
    : await keyRowsByIdOrPrefix(db, idOrPrefix);
  const exact = matches.find((row) => row.id === idOrPrefix);
  const target = exact ?? (matches.length === 1 ? matches[0] : undefined);
  if (!target) {
    throw new KeyNotFoundError(
      matches.length > 1
        ? `${matches.length} keys start with ${JSON.stringify(idOrPrefix)}; give the key id`
        : `no key with id or prefix ${JSON.stringify(idOrPrefix)}`,
    );
  }
  return info(toRecord(target));
}

/**
 * Revokes by id (key_…), by the full key, or by a prefix that names exactly one key. Revoking twice keeps the
 * first revocation time. `within` runs in the revoking transaction (the key's webhooks end there).
 * Running servers stop accepting the key within their recheck interval.
 */
export async function revokeKey(
  db: Db,
  idOrPrefix: string,
  within?: (conn: DuckDBConnection, keyId: string) => Promise<void>,
): Promise<ApiKeyInfo> {
  const target = await resolveKey(db, idOrPrefix);
  const row = await revokeKeyRow(db, target.id, within && ((conn) => within(conn, target.id)));
  if (!row) throw new KeyNotFoundError(`key ${target.id} vanished while being revoked`);
  return info(toRecord(row));
}
