// Small SQL helpers shared by the webhook store modules. Times cross the boundary as epoch
// milliseconds, converted by store/sql.ts (tsParam) and core/dates.ts (iso).
import { randomBytes } from 'node:crypto';
import { listValue, type DuckDBConnection, type DuckDBValue } from '@duckdb/node-api';

export function list(values: readonly string[] | undefined | null): DuckDBValue {
  return values?.length ? listValue([...values]) : null;
}

export async function rows<T>(conn: DuckDBConnection, sql: string, params: DuckDBValue[] = []): Promise<T[]> {
  const reader = await conn.runAndReadAll(sql, params);
  return reader.getRowObjectsJS() as T[];
}

export function num(value: bigint | number | null | undefined): number | null {
  return value === null || value === undefined ? null : Number(value);
}

/** Random ids with a type prefix; 96 bits keep collisions out of reach. */
export function newId(prefix: 'ep' | 'msg' | 'dlv'): string {
  return `${prefix}_${randomBytes(12).toString('base64url')}`;
}
