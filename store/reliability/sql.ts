import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DuckDBValue } from '@duckdb/node-api';
import { assetPath } from '../../core/assets.ts';

// The reliability queries live in ./sql/*.sql, read once when this module loads. A file may
// include another with {{name}} (the other file's text, inlined), so the outcome rules and the
// count definitions are written once and shared by finalize and the live rollup.

const SQL_DIR = assetPath('store/reliability/sql');

export type SqlParams = Record<string, DuckDBValue>;

export interface SqlStatement {
  readonly text: string;
  /** the $names the statement uses; DuckDB refuses bindings a statement does not use */
  readonly params: readonly string[];
}

function stripComments(sql: string): string {
  return sql.replace(/--[^\n]*/g, '');
}

function loadRaw(): Map<string, string> {
  const raw = new Map<string, string>();
  for (const file of readdirSync(SQL_DIR)) {
    if (file.endsWith('.sql')) raw.set(file.slice(0, -4), readFileSync(join(SQL_DIR, file), 'utf8'));
  }
  return raw;
}

function expand(name: string, raw: Map<string, string>, seen: string[] = [], omit: readonly string[] = []): string {
  if (seen.includes(name)) throw new Error(`sql include cycle: ${[...seen, name].join(' -> ')}`);
  const text = raw.get(name);
  if (text === undefined) throw new Error(`sql file not found: ${name}.sql`);
  return text.replace(/\{\{(\w+)\}\}/g, (_, inner: string) => {
    if (omit.includes(inner)) {
      if (!raw.has(inner)) throw new Error(`sql file not found: ${inner}.sql`);
      return '\n';
    }
    return `\n${stripComments(expand(inner, raw, [...seen, name], omit))
      .trim()
      .replace(/;$/, '')}\n`;
  });
}

function compile(text: string): SqlStatement[] {
  return stripComments(text)
    .split(/;\s*(?:\n|$)/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0)
    .map((s) => ({ text: s, params: [...new Set([...s.matchAll(/\$([a-z_][a-z0-9_]*)/gi)].map((m) => m[1]!))] }));
}

const RAW = loadRaw();
const COMPILED = new Map<string, SqlStatement[]>([...RAW.keys()].map((name) => [name, compile(expand(name, RAW))]));

/** The statements of ./sql/<name>.sql, in order. */
export function statements(name: string): SqlStatement[] {
  const found = COMPILED.get(name);
  if (!found) throw new Error(`sql file not found: ${name}.sql`);
  return found;
}

/** The one statement of ./sql/<name>.sql. */
export function statement(name: string): SqlStatement {
  const list = statements(name);
  if (list.length !== 1) throw new Error(`${name}.sql holds ${list.length} statements, expected 1`);
  return list[0]!;
}

/**
 * The one statement of ./sql/<name>.sql with the includes named in `omit` left out: a variant
 * for when a part is known to read nothing (DuckDB still plans and runs a branch that returns
 * no rows, which costs more than the rest of a small query).
 */
export function statementWithout(name: string, omit: readonly string[]): SqlStatement {
  for (const part of omit) if (!RAW.has(part)) throw new Error(`sql file not found: ${part}.sql`);
  const list = compile(expand(name, RAW, [], omit));
  if (list.length !== 1) throw new Error(`${name}.sql holds ${list.length} statements, expected 1`);
  return list[0]!;
}

/** The bindings a statement uses, taken from `params`; a missing one is a programming error. */
export function bind(stmt: SqlStatement, params: SqlParams): SqlParams {
  const out: SqlParams = {};
  for (const name of stmt.params) {
    if (!(name in params)) throw new Error(`sql parameter $${name} not bound`);
    out[name] = params[name]!;
  }
  return out;
}
