// The accounts' SQL, in one place: API key rows (api_keys), the per-second usage buckets the
// meter appends (api_usage, api_usage_test) and the per-day read-back of one key's usage. The
// other accounts modules hold no SQL: they generate, validate, shape and cache.
import { createHash } from 'node:crypto';
import { listValue, type DuckDBConnection } from '@duckdb/node-api';
import { DAY_MS } from '../core/dates.ts';
import { appendColumns, type ColumnDef } from '../store/chunk-append.ts';
import type { Db } from '../store/db.ts';
import { tsParam } from '../store/sql.ts';

export const LIVE_USAGE_TABLE = 'api_usage';
export const TEST_USAGE_TABLE = 'api_usage_test';

/** Test keys' usage lives in a table of its own, so live figures never include it. */
export const usageTable = (test: boolean): string => (test ? TEST_USAGE_TABLE : LIVE_USAGE_TABLE);

// ---- api_keys

/** An api_keys row as DuckDB returns it. */
export interface KeyRow {
  id: string;
  key_hash: string;
  prefix: string;
  plan: string;
  test: boolean;
  name: string | null;
  created_at: Date;
  revoked_at: Date | null;
}

const KEY_COLUMNS = 'id, key_hash, prefix, plan, test, name, created_at, revoked_at';

export async function insertKeyRow(
  db: Db,
  row: Pick<KeyRow, 'id' | 'key_hash' | 'prefix' | 'plan' | 'test' | 'name'>,
): Promise<void> {
  await db.run(
    `INSERT INTO api_keys (id, key_hash, prefix, plan, test, name, created_at, revoked_at)
     VALUES ($1, $2, $3, $4, $5, $6, now(), NULL)`,
    [row.id, row.key_hash, row.prefix, row.plan, row.test, row.name],
  );
}

/** Every key (or the unrevoked ones), oldest first. */
export function keyRows(db: Db, options: { activeOnly?: boolean } = {}): Promise<KeyRow[]> {
  const where = options.activeOnly ? 'WHERE revoked_at IS NULL' : '';
  return db.all<KeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys ${where} ORDER BY created_at, id`);
}

export async function keyRowById(db: Db, id: string): Promise<KeyRow | null> {
  return (await db.all<KeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = $1`, [id]))[0] ?? null;
}

/**
 * The state of the keys, per partition: each key falls in the partition named by the first hex
 * digit of the MD5 of its id (16 partitions; `keyPartition` gives the same in JS), whose
 * fingerprint is its count and an XOR of its rows' hashes. A partition's fingerprint unchanged
 * means no key of it was added, removed, revoked or moved to another plan (short of a 64-bit hash
 * collision). DuckDB computes them; at most 16 short rows come back.
 */
export async function keyPartitionFingerprints(db: Db): Promise<Map<string, string>> {
  const rows = await db.all<{ part: string; fingerprint: string }>(
    `SELECT left(md5(id), 1) AS part,
            count(*)::VARCHAR || ':' ||
              bit_xor(hash(id, key_hash, prefix, plan, test, revoked_at))::VARCHAR AS fingerprint
       FROM api_keys GROUP BY part`,
  );
  return new Map(rows.map((r) => [r.part, r.fingerprint]));
}

/** The partition of keyPartitionFingerprints a key id falls in. */
export function keyPartition(id: string): string {
  return createHash('md5').update(id, 'utf8').digest('hex').charAt(0);
}

/**
 * The unrevoked keys with requests metered since `sinceMs` (live or test), the most recently
 * used first, at most `limit`: what the auth cache loads at start.
 */
export function recentlyUsedKeyRows(db: Db, sinceMs: number, limit: number): Promise<KeyRow[]> {
  return db.all<KeyRow>(
    `SELECT ${KEY_COLUMNS} FROM api_keys JOIN (
       SELECT key_id, max(bucket_at) AS last_used FROM (
         SELECT key_id, bucket_at FROM ${LIVE_USAGE_TABLE} WHERE bucket_at >= ${tsParam('since_ms')}
         UNION ALL
         SELECT key_id, bucket_at FROM ${TEST_USAGE_TABLE} WHERE bucket_at >= ${tsParam('since_ms')}
       ) GROUP BY key_id
     ) AS used ON used.key_id = api_keys.id
     WHERE revoked_at IS NULL ORDER BY last_used DESC, id LIMIT $limit`,
    { since_ms: sinceMs, limit },
  );
}

/** The rows of these key hashes, in one query (first uses of keys, batched). */
export function keyRowsByHashes(db: Db, hashes: readonly string[]): Promise<KeyRow[]> {
  if (hashes.length === 0) return Promise.resolve([]);
  return db.all<KeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE list_contains($1, key_hash)`, [
    listValue([...hashes]),
  ]);
}

/** The rows of these ids, in one query. */
export function keyRowsByIds(db: Db, ids: readonly string[]): Promise<KeyRow[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return db.all<KeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE list_contains($1, id)`, [listValue([...ids])]);
}

/** Keys whose id is `idOrPrefix`, or whose shown prefix starts with it (8 characters or more). */
export function keyRowsByIdOrPrefix(db: Db, idOrPrefix: string): Promise<KeyRow[]> {
  return db.all<KeyRow>(
    `SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = $1 OR (length($1) >= 8 AND starts_with(prefix, $1))`,
    [idOrPrefix],
  );
}

/**
 * Revokes the key (keeping the first revocation time) and reads it back, in one transaction;
 * `within` runs in that transaction after the update (what else the revocation ends).
 */
export function revokeKeyRow(
  db: Db,
  id: string,
  within?: (conn: DuckDBConnection) => Promise<void>,
): Promise<KeyRow | null> {
  return db.transaction(async (conn: DuckDBConnection) => {
    await conn.run('UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1', [id]);
    const reader = await conn.runAndReadAll(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = $1`, [id]);
    const row = (reader.getRowObjectsJS() as unknown as KeyRow[])[0] ?? null;
    if (row && within) await within(conn);
    return row;
  });
}

// ---- usage buckets

/** The calls of one key, unit, method, endpoint and status within one second (`second`: epoch seconds). */
export interface UsageBucketRow {
  keyId: string | null;
  plan: string | null;
  unit: string;
  method: string;
  endpoint: string;
  status: number;
  second: number;
  calls: number;
  quantity: number;
  latencyTotal: number;
  latencyMax: number;
}

/**
 * The usage tables' columns in order, written a column at a time (store/chunk-append.ts): with a
 * bucket per key and second, a flush every second holds one row per active key, and the appender's
 * value-at-a-time path held the thread that answers requests ~15 ms per 1,200 keys.
 */
const USAGE_COLUMNS: readonly ColumnDef<UsageBucketRow>[] = [
  { name: 'key_id', kind: 'varchar', get: (b) => b.keyId },
  { name: 'plan', kind: 'varchar', get: (b) => b.plan },
  { name: 'unit', kind: 'varchar', get: (b) => b.unit },
  { name: 'method', kind: 'varchar', get: (b) => b.method },
  { name: 'endpoint', kind: 'varchar', get: (b) => b.endpoint },
  { name: 'status', kind: 'smallint', get: (b) => b.status },
  { name: 'bucket_at', kind: 'timestamptz', get: (b) => b.second * 1000 },
  { name: 'calls', kind: 'integer', get: (b) => b.calls },
  { name: 'quantity', kind: 'integer', get: (b) => b.quantity },
  { name: 'latency_ms_total', kind: 'double', get: (b) => b.latencyTotal },
  { name: 'latency_ms_max', kind: 'double', get: (b) => b.latencyMax },
];

/** Appends the buckets to the live or the test usage table (the appender commits them at once). */
export function appendUsageBuckets(db: Db, test: boolean, rows: readonly UsageBucketRow[]): Promise<void> {
  return db.append(usageTable(test), (appender) => appendColumns(appender, USAGE_COLUMNS, rows));
}

/** One UTC day of a key's usage (days counted from the epoch). */
export interface UsageDayRow {
  date: string;
  requests: bigint;
  connection_minutes: bigint;
  errors: bigint;
}

// Days are counted as whole UTC days since the epoch from epoch_ms(), never through the
// session time zone: date_trunc on a TIMESTAMPTZ would bucket by the server's local midnight.
// The bounds are constant TIMESTAMPTZ values so DuckDB can skip row groups by bucket_at.
// Bucketing and zero-filling happen in this one query.
function dailySql(table: string): string {
  return `
    WITH usage AS (
      SELECT epoch_ms(bucket_at) // ${DAY_MS} AS day,
             sum(quantity) FILTER (WHERE unit = 'request') AS requests,
             sum(quantity) FILTER (WHERE unit = 'connection-minute') AS connection_minutes,
             sum(calls) FILTER (WHERE unit = 'request' AND status >= 400) AS errors
      FROM ${table}
      WHERE key_id = $key
        AND bucket_at >= ${tsParam('start_ms')}
        AND bucket_at < ${tsParam('end_ms')}
      GROUP BY day
    )
    SELECT strftime(DATE '1970-01-01' + CAST(d.day AS INTEGER), '%Y-%m-%d') AS date,
           CAST(coalesce(u.requests, 0) AS BIGINT) AS requests,
           CAST(coalesce(u.connection_minutes, 0) AS BIGINT) AS connection_minutes,
           CAST(coalesce(u.errors, 0) AS BIGINT) AS errors
    FROM range($first_day::BIGINT, $last_day::BIGINT + 1) AS d(day)
    LEFT JOIN usage AS u USING (day)
    ORDER BY d.day`;
}

const DAILY_SQL = { live: dailySql(LIVE_USAGE_TABLE), test: dailySql(TEST_USAGE_TABLE) };

/** A key's usage on each UTC day from `firstDay` to `lastDay` (epoch days), days without usage as zeros. */
export function usageDayRows(
  db: Db,
  query: { keyId: string; test: boolean; firstDay: number; lastDay: number },
): Promise<UsageDayRow[]> {
  return db.all<UsageDayRow>(query.test ? DAILY_SQL.test : DAILY_SQL.live, {
    key: query.keyId,
    start_ms: query.firstDay * DAY_MS,
    end_ms: (query.lastDay + 1) * DAY_MS,
    first_day: query.firstDay,
    last_day: query.lastDay,
  });
}
