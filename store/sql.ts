// SQL text the store builds by hand: the one place values and names are quoted for DuckDB, and
// the one transaction wrapper. Prefer $1 parameters; these are for what DuckDB does not take as
// a parameter (file paths in read_csv, ATTACH and COPY options, identifiers, literal lists).
import type { DuckDBConnection } from '@duckdb/node-api';

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
