// Small SQL helpers shared by the webhook store modules. Times cross the boundary as epoch
// milliseconds: `make_timestamptz` takes exact microseconds (a double division would round).
import { randomBytes } from 'node:crypto';
import { listValue, type DuckDBConnection, type DuckDBValue } from '@duckdb/node-api';

/** SQL turning the epoch-ms parameter at `$n` into a TIMESTAMPTZ. */
export function tsParam(n: number): string {
  return `make_timestamptz($${n}::BIGINT * 1000)`;
}

export function list(values: readonly string[] | undefined | null): DuckDBValue {
  return values && values.length ? listValue([...values]) : null;
}

export async function rows<T>(conn: DuckDBConnection, sql: string, params: DuckDBValue[] = []): Promise<T[]> {
  const reader = await conn.runAndReadAll(sql, params);
  return reader.getRowObjectsJS() as T[];
}

export function iso(ms: bigint | number | null | undefined): string | null {
  return ms === null || ms === undefined ? null : new Date(Number(ms)).toISOString();
}

export function isoRequired(ms: bigint | number): string {
  return new Date(Number(ms)).toISOString();
}

export function num(value: bigint | number | null | undefined): number | null {
  return value === null || value === undefined ? null : Number(value);
}

/** Random ids with a type prefix; 96 bits keep collisions out of reach. */
export function newId(prefix: 'ep' | 'msg' | 'dlv'): string {
  return `${prefix}_${randomBytes(12).toString('base64url')}`;
}
