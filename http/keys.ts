// API key management against the store. Keys are random, shown once, stored as SHA-256 only.
import { hash, randomBytes } from 'node:crypto';
import { listValue } from '@duckdb/node-api';
import type { Db } from '../store/db.ts';
import { isPlan, type Plan } from './plans.ts';

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

interface KeyRow {
  id: string;
  key_hash: string;
  prefix: string;
  plan: string;
  test: boolean;
  name: string | null;
  created_at: Date;
  revoked_at: Date | null;
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

const COLUMNS = 'id, key_hash, prefix, plan, test, name, created_at, revoked_at';

export async function createKey(
  db: Db,
  options: { plan: Plan; test?: boolean; name?: string | null },
): Promise<CreatedKey> {
  if (!isPlan(options.plan)) throw new Error(`unknown plan ${JSON.stringify(options.plan)}`);
  const name = options.name?.trim() || null;
  if (name && name.length > 200) throw new Error('key name is longer than 200 characters');
  const key = generateKey(options.test ?? false);
  const id = `key_${randomBytes(8).toString('hex')}`;
  await db.run(
    `INSERT INTO api_keys (id, key_hash, prefix, plan, test, name, created_at, revoked_at)
     VALUES ($1, $2, $3, $4, $5, $6, now(), NULL)`,
    [id, hashKey(key), key.slice(0, PREFIX_CHARS), options.plan, options.test ?? false, name],
  );
  const record = await findKey(db, id);
  if (!record) throw new Error(`api key ${id} vanished after insert`);
  return { ...info(record), key };
}

export async function listKeys(db: Db, options: { includeRevoked?: boolean } = {}): Promise<ApiKeyInfo[]> {
  const where = options.includeRevoked === false ? 'WHERE revoked_at IS NULL' : '';
  const rows = await db.all<KeyRow>(`SELECT ${COLUMNS} FROM api_keys ${where} ORDER BY created_at, id`);
  return rows.map((row) => info(toRecord(row)));
}

async function findKey(db: Db, id: string): Promise<ApiKeyRecord | null> {
  const rows = await db.all<KeyRow>(`SELECT ${COLUMNS} FROM api_keys WHERE id = $1`, [id]);
  return rows[0] ? toRecord(rows[0]) : null;
}

export async function findKeyByHash(db: Db, keyHash: string): Promise<ApiKeyRecord | null> {
  const rows = await db.all<KeyRow>(`SELECT ${COLUMNS} FROM api_keys WHERE key_hash = $1`, [keyHash]);
  return rows[0] ? toRecord(rows[0]) : null;
}

/** Current plan and revocation of the given keys, in one query (the auth cache's recheck). */
export async function keyStates(db: Db, ids: readonly string[]): Promise<Map<string, ApiKeyRecord>> {
  const states = new Map<string, ApiKeyRecord>();
  if (ids.length === 0) return states;
  const rows = await db.all<KeyRow>(`SELECT ${COLUMNS} FROM api_keys WHERE list_contains($1, id)`, [listValue([...ids])]);
  for (const row of rows) states.set(row.id, toRecord(row));
  return states;
}

export class KeyNotFoundError extends Error {
  override name = 'KeyNotFoundError';
}

/**
 * Revokes by id (key_…), by the full key, or by a prefix that names exactly one key. Revoking twice keeps the
 * first revocation time. Running servers stop accepting the key within their recheck interval.
 */
export async function revokeKey(db: Db, idOrPrefix: string): Promise<ApiKeyInfo> {
  // a full key is found by its hash; anything else is an id or the start of a shown prefix
  const matches = KEY_PATTERN.test(idOrPrefix)
    ? await db.all<KeyRow>(`SELECT ${COLUMNS} FROM api_keys WHERE key_hash = $1`, [hashKey(idOrPrefix)])
    : await db.all<KeyRow>(
      `SELECT ${COLUMNS} FROM api_keys WHERE id = $1 OR (length($1) >= 8 AND starts_with(prefix, $1))`,
      [idOrPrefix],
    );
  const exact = matches.find((row) => row.id === idOrPrefix);
  const target = exact ?? (matches.length === 1 ? matches[0] : undefined);
  if (!target) {
    throw new KeyNotFoundError(matches.length > 1
      ? `${matches.length} keys start with ${JSON.stringify(idOrPrefix)}; give the key id`
      : `no key with id or prefix ${JSON.stringify(idOrPrefix)}`);
  }
  await db.run('UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1', [target.id]);
  const record = await findKey(db, target.id);
  return info(record!);
}
