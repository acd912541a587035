import type { DuckDBConnection } from '@duckdb/node-api';
import type { Db } from '../db.ts';
import { inTransaction } from '../sql.ts';

/**
 * Runs `fn` in a transaction on a connection of its own, so a long aggregation (a day's
 * observations) does not hold up the shared queue that history writes and API reads wait on.
 * DuckDB's MVCC lets it read while the writer appends.
 */
export async function inOwnTransaction<T>(db: Db, fn: (conn: DuckDBConnection) => Promise<T>): Promise<T> {
  const conn = await db.connect();
  try {
    return await inTransaction(conn, fn);
  } finally {
    conn.closeSync();
  }
}
