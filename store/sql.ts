// SQL text the store builds by hand: the one place values and names are quoted for DuckDB, and
// the one transaction wrapper. Prefer $1 parameters; these are for what DuckDB does not take as
// a parameter (file paths in read_csv, ATTACH and COPY options, identifiers, literal lists).
import {
  DuckDBTimestampTZValue,
  type DuckDBConnection,
  type DuckDBPreparedStatement,
  type DuckDBResultReader,
  type DuckDBValue,
} from '@duckdb/node-api';

// Times cross into the store as epoch milliseconds and are kept as TIMESTAMPTZ, which counts
// microseconds. The conversion is integer arithmetic: ms × 1000 as a BIGINT. The common
// `to_timestamp(ms / 1000)` goes through a DOUBLE of seconds, exact only while the microseconds
// fit a double's 53 bits: 9999-12-31T23:59:59.999Z, the usual "never" sentinel, comes back 8 µs
// late (store/sql.test.ts). A fraction of a millisecond rounds to the nearest millisecond, the
// unit of every time the API and the pipeline carry.

/** SQL turning the epoch-ms expression `ms` (a column, a `$n` parameter) into a TIMESTAMPTZ, exactly. */
export function timestamptzFromMs(ms: string): string {
  return `make_timestamptz(CAST(${ms} AS BIGINT) * 1000)`;
}

/** timestamptzFromMs of the parameter `$n` (a position or a name). */
export function tsParam(n: number | string): string {
  return timestamptzFromMs(`$${n}`);
}

/** An epoch-ms time as a TIMESTAMPTZ value for a parameter or an appender, as timestamptzFromMs converts it. */
export function timestamptzValue(ms: number): DuckDBTimestampTZValue {
  return new DuckDBTimestampTZValue(BigInt(Math.round(ms)) * 1000n);
}

/** Epoch ms → epoch µs as a number, for writers that pack int64s by hand; exact below 2^53 µs (year 2255). */
export function microsOfMs(ms: number): number {
  return Math.round(ms) * 1000;
}

/** A string literal: `it's` → `'it''s'`. */
export function sqlString(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

/** An identifier (a column or a schema name as a header or a user gave it): `a"b` → `"a""b"`. */
export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/**
 * BEGIN … COMMIT around `fn` on `conn`; ROLLBACK when `fn` or the COMMIT throws, and the first
 * error is the one thrown (a failed ROLLBACK after an aborted transaction says nothing new).
 */
export async function inTransaction<T>(conn: DuckDBConnection, fn: (conn: DuckDBConnection) => Promise<T>): Promise<T> {
  await conn.run('BEGIN TRANSACTION');
  try {
    const result = await fn(conn);
    await conn.run('COMMIT');
    return result;
  } catch (err) {
    await conn.run('ROLLBACK').catch(() => undefined);
    throw err;
  }
}

const preparedByConnection = new WeakMap<DuckDBConnection, Map<string, DuckDBPreparedStatement>>();

/**
 * Runs `sql` as a statement prepared once per connection and text. Parsing, binding and planning
 * a query with a dozen operators costs DuckDB 2-4 ms, more than running it on a few thousand rows;
 * a prepared statement keeps the plan (DuckDB re-plans it itself when the catalog changes). Only
 * for statements whose texts are few and fixed: every distinct text stays prepared for the life
 * of the connection.
 */
export async function runPrepared(
  conn: DuckDBConnection,
  sql: string,
  params: Record<string, DuckDBValue>,
): Promise<DuckDBResultReader> {
  let cache = preparedByConnection.get(conn);
  if (!cache) {
    cache = new Map();
    preparedByConnection.set(conn, cache);
  }
  let prepared = cache.get(sql);
  if (!prepared) {
    prepared = await conn.prepare(sql);
    cache.set(sql, prepared);
  }
  prepared.clearBindings();
  prepared.bind(params);
  return prepared.runAndReadAll();
}
