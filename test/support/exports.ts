// Shared by the exports tests: a temporary database, one service day of seeded history with
// edge cases, and an independent reading of export files (parquet-wasm + apache-arrow, gunzip +
// JSON.parse) normalized by the manifest's DuckDB types so every source compares equal.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { tableFromIPC, type Table } from 'apache-arrow';
import { readParquet } from 'parquet-wasm';
import { Db } from '../../store/db.ts';
import type { SchemaColumn } from '../../exports/manifests.ts';

/** A DST day: clocks jump at 02:00, and the service day starts at 04:00 EDT (08:00Z). */
export const TZ = 'America/New_York';
export const DAY = '2024-03-10';
export const NEXT_DAY = '2024-03-11';
/** a "now" after both days are over */
export const LATER = new Date('2024-03-20T12:00:00Z');

export interface TempDb {
  db: Db;
  root: string;
  dbPath: string;
  exportsDir: string;
}

export async function openTempDb(teardown: (fn: () => Promise<void> | void) => void): Promise<TempDb> {
  const root = mkdtempSync(join(tmpdir(), 'exports-test-'));
  const dbPath = join(root, 'transit.duckdb');
  const db = await Db.open(dbPath);
  teardown(async () => {
    await db.close().catch(() => undefined);
    rmSync(root, { recursive: true, force: true });
  });
  return { db, root, dbPath, exportsDir: join(root, 'exports') };
}

/** Rows of DAY per file part (the rest belong to neighbouring days). */
export const EXPECTED_DAY_ROWS = { trip_outcomes: 3, arrivals: 3, vehicle_positions: 4, alert_versions: 2 } as const;

/**
 * Vehicle positions belong to the day of their own time (position_at), not the poll's: v6 was
 * stored years later (an archive ingested with allow_old_snapshots), v7 polled during DAY
 * reported the evening before.
 */
export async function seedDay(db: Db): Promise<void> {
  await db.run(`INSERT INTO vehicle_positions (feed_id, vehicle_id, route_id, trip_id, mode, lat, lon, bearing,
      speed_mps, stop_id, current_status, position_at, observed_at) VALUES
    ('feed-1', 'v"1''é', 'R1', 'T1', 'bus', 40.75, -73.99, 90.5, 12.25, 'S1', 'IN_TRANSIT_TO',
      '2024-03-10T08:00:00Z', '2024-03-10T08:00:00.500Z'),
    ('feed-1', 'v6', 'R1', 'T1', 'bus', 40.7, -74.0, NULL, NULL, NULL, NULL,
      '2024-03-10T12:00:00Z', '2026-11-20T10:00:00Z'),
    ('feed-1', 'v7', 'R1', 'T1', 'bus', 40.7, -74.0, NULL, NULL, NULL, NULL,
      '2024-03-10T07:30:00Z', '2024-03-10T09:00:00Z'),
    ('feed-1', 'v2', NULL, NULL, NULL, 40.7, -74.0, NULL, NULL, NULL, NULL,
      '2024-03-10T15:30:00.100Z', '2024-03-10T15:30:00.123Z'),
    ('feed-1', 'v3', 'R2', 'T9', 'rail', -33.5, 151.25, 0, 0, 'S9', 'STOPPED_AT',
      '2024-03-11T07:59:59Z', '2024-03-11T07:59:59.999Z'),
    ('feed-1', 'v4', 'R2', 'T9', 'rail', 1, 2, 0, 0, 'S9', NULL, '2024-03-11T08:00:00Z', '2024-03-11T08:00:00Z'),
    ('feed-1', 'v5', 'R2', 'T9', 'rail', 1, 2, 0, 0, 'S9', NULL, '2024-03-10T07:59:59Z', '2024-03-10T07:59:59.999Z')`);
  await db.run(`INSERT INTO arrivals (feed_id, trip_id, route_id, mode, station_id, stop_id, stop_sequence,
      direction_id, service_date, scheduled_at, predicted_at, delay_s, delay_state, trip_relationship, in_schedule,
      vehicle_id, observed_at) VALUES
    ('feed-1', 'T1', 'R1', 'bus', 'ST1', 'S1', 3, 0, '2024-03-10', '2024-03-11T04:10:00Z', '2024-03-11T04:12:00Z',
      120, 'on_time', 'scheduled', true, 'v1', '2024-03-11T09:00:00Z'),
    ('feed-1', 'T2', NULL, NULL, 'ST2', 'S2', NULL, NULL, NULL, NULL, '2024-03-10T20:05:00Z',
      NULL, 'unknown', 'added', false, NULL, '2024-03-10T20:00:00Z'),
    ('feed-1', 'T3', 'R1', 'bus', 'ST1', 'S1', 1, 1, '2024-03-11', '2024-03-11T05:00:00Z', NULL,
      NULL, 'canceled', 'canceled', true, NULL, '2024-03-11T05:00:00Z'),
    ('feed-1', 'T4', NULL, NULL, 'ST1', 'S1', NULL, NULL, NULL, NULL, NULL,
      NULL, 'unknown', 'added', false, NULL, '2024-03-11T08:00:00Z'),
    ('feed-2', 'T5', 'L1', 'rail', 'PARENT', 'S5', 7, 1, '2024-03-10', '2024-03-10T22:00:00Z', '2024-03-10T21:59:00Z',
      -60, 'on_time', 'scheduled', true, 'car 7', '2024-03-10T21:50:00Z')`);
  await db.run(`INSERT INTO alert_versions (alert_id, feed_id, entity_id, version, status, modes, impact, cause,
      severity, header, description, url, active_periods, routes, stations, trips, first_seen_at, updated_at,
      resolved_at) VALUES
    ('feed-1:a1', 'feed-1', 'a1', 1, 'active', ['rail', 'bus'], 'no_service', 'strike', 'severe',
      [{'language': 'en', 'text': 'Line 1: "no" service' || chr(10) || 'through ''Main'''}, {'language': 'fr',
        'text': 'Ligne 1 — interrompue ✓'}],
      [], [], [{'start_at': TIMESTAMPTZ '2024-03-10T06:00:00Z', 'end_at': NULL}],
      ['1'], [], [], '2024-03-10T09:00:00Z', '2024-03-10T09:00:00Z', NULL),
    ('feed-1:a1', 'feed-1', 'a1', 2, 'resolved', ['rail', 'bus'], 'no_service', 'strike', NULL,
      [{'language': 'en', 'text': 'Line 1 restored'}], [{'language': 'en', 'text': 'details'}],
      [{'language': 'en', 'text': 'https://example.test/a1'}],
      [{'start_at': TIMESTAMPTZ '2024-03-10T06:00:00Z', 'end_at': TIMESTAMPTZ '2024-03-10T10:00:00Z'},
       {'start_at': NULL, 'end_at': TIMESTAMPTZ '2024-03-12T00:00:00Z'}],
      ['1', '2'], ['ST1'], ['T1'], '2024-03-10T09:00:00Z', '2024-03-10T10:00:00.500Z', '2024-03-10T10:00:00.500Z'),
    ('feed-1:a2', 'feed-1', 'a2', 1, 'upcoming', [], 'detour', 'construction', NULL,
      [], [], [], [], [], [], [], '2024-03-11T08:30:00Z', '2024-03-11T08:30:00Z', NULL)`);
  await db.run(`INSERT INTO trip_outcomes (service_date, mode, route_id, trip_id, schedule_id, in_schedule, outcome,
      restored, duplicated, skipped_stops, observations, first_seen_at, last_seen_at, scheduled_start_at) VALUES
    ('2024-03-10', 'bus', 'R1', 'T1', 'sched', true, 'delivered', false, false, 0, 12, '2024-03-10T09:00:00Z',
      '2024-03-10T10:00:00Z', '2024-03-10T09:00:00Z'),
    ('2024-03-10', 'bus', 'R1', 'T3', 'sched', true, 'canceled', true, false, 0, 4, '2024-03-10T11:00:00Z',
      '2024-03-10T12:00:00Z', '2024-03-10T11:00:00Z'),
    ('2024-03-10', NULL, NULL, 'X9', NULL, false, 'delivered', false, true, 2, 1, NULL, NULL, NULL),
    ('2024-03-11', 'bus', 'R1', 'T1', 'sched', true, 'delivered', false, false, 0, 3, NULL, NULL, NULL)`);
  await db.run(`INSERT INTO reliability_finalized (service_date, finalized_at, trips, routes)
    VALUES ('2024-03-10', '2024-03-11T10:05:00Z', 3, 1)`);
}

/** Rows per value vector, e.g. 600k vehicle positions spread over DAY's window. */
export async function seedManyPositions(db: Db, rows: number): Promise<void> {
  await db.run(
    `INSERT INTO vehicle_positions (feed_id, vehicle_id, route_id, trip_id, mode, lat, lon, bearing,
      speed_mps, stop_id, current_status, position_at, observed_at)
    SELECT 'feed-1', 'veh-' || (i % 5000), 'R' || (i % 300), 'T' || (i % 20000), 'bus',
      40 + (i % 1000) / 1000.0, -74 + (i % 977) / 1000.0, (i % 360)::DOUBLE, (i % 30)::DOUBLE, 'S' || (i % 8000),
      'IN_TRANSIT_TO', TIMESTAMPTZ '2024-03-10T08:00:00Z' + to_microseconds((i * 86399000000 // $n)::BIGINT),
      TIMESTAMPTZ '2024-03-10T08:00:00Z' + to_microseconds((i * 86399000000 // $n)::BIGINT)
    FROM range($n) t(i)`,
    { n: rows },
  );
}

// --- independent reading -------------------------------------------------------------------

export function readParquetFile(path: string): Table {
  const wasmTable = readParquet(new Uint8Array(readFileSync(path)));
  return tableFromIPC(wasmTable.intoIPCStream());
}

export function parquetRows(table: Table): Record<string, unknown>[] {
  const names = table.schema.fields.map((f) => f.name);
  const rows: Record<string, unknown>[] = [];
  for (let i = 0; i < table.numRows; i++) {
    const row: Record<string, unknown> = {};
    for (const name of names) row[name] = table.getChild(name)?.get(i);
    rows.push(row);
  }
  return rows;
}

export function readNdjsonGz(path: string): { lines: string[]; rows: Record<string, unknown>[] } {
  const text = gunzipSync(readFileSync(path)).toString('utf8');
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return { lines, rows: lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

type ParsedType =
  | { kind: 'list'; of: ParsedType }
  | { kind: 'struct'; fields: { name: string; type: ParsedType }[] }
  | { kind: 'scalar'; name: string };

function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '(') depth++;
    else if (ch === ')') depth--;
    else if (ch === ',' && depth === 0) {
      parts.push(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  parts.push(text.slice(start).trim());
  return parts;
}

/** DuckDB type text (as DESCRIBE prints it) → a small tree. */
export function parseDuckType(type: string): ParsedType {
  const t = type.trim();
  if (t.endsWith('[]')) return { kind: 'list', of: parseDuckType(t.slice(0, -2)) };
  if (t.startsWith('STRUCT(') && t.endsWith(')')) {
    return {
      kind: 'struct',
      fields: splitTopLevel(t.slice(7, -1)).map((f) => {
        const m = /^("(?:[^"]|"")+"|\S+)\s+(.+)$/.exec(f);
        if (!m) throw new Error(`cannot parse struct field ${f}`);
        const name = m[1]!.startsWith('"') ? m[1]!.slice(1, -1).replaceAll('""', '"') : m[1]!;
        return { name, type: parseDuckType(m[2]!) };
      }),
    };
  }
  return { kind: 'scalar', name: t };
}

const ARROW_SCALARS: Record<string, string> = {
  VARCHAR: 'Utf8',
  'TIMESTAMP WITH TIME ZONE': 'Timestamp<MICROSECOND, UTC>',
  INTEGER: 'Int32',
  BIGINT: 'Int64',
  DOUBLE: 'Float64',
  BOOLEAN: 'Bool',
  DATE: 'Date32<DAY>',
};

/** The Arrow type a Parquet reader must see for a DuckDB type, written as apache-arrow prints it. */
export function expectedArrowType(type: string | ParsedType): string {
  const p = typeof type === 'string' ? parseDuckType(type) : type;
  if (p.kind === 'list') return `List<${expectedArrowType(p.of)}>`;
  if (p.kind === 'struct')
    return `Struct<{${p.fields.map((f) => `${f.name}:${expectedArrowType(f.type)}`).join(', ')}}>`;
  const arrow = ARROW_SCALARS[p.name];
  if (!arrow) throw new Error(`no Arrow mapping for DuckDB type ${p.name}`);
  return arrow;
}

/** One value from any source (DuckDB JS, Arrow, NDJSON) in one comparable shape. */
export function normalize(value: unknown, type: string | ParsedType): unknown {
  if (value === null || value === undefined) return null;
  const p = typeof type === 'string' ? parseDuckType(type) : type;
  if (p.kind === 'list') return Array.from(value as Iterable<unknown>, (v) => normalize(v, p.of));
  if (p.kind === 'struct') {
    const obj = value as Record<string, unknown>;
    return Object.fromEntries(p.fields.map((f) => [f.name, normalize(obj[f.name], f.type)]));
  }
  switch (p.name) {
    case 'TIMESTAMP WITH TIME ZONE':
      if (value instanceof Date) return value.getTime();
      if (typeof value === 'number') return Math.floor(value);
      if (typeof value === 'string' && /Z$/.test(value)) return Date.parse(value);
      throw new Error(`timestamp not ISO 8601 UTC: ${String(value)}`);
    case 'DATE':
      if (value instanceof Date) return value.toISOString().slice(0, 10);
      if (typeof value === 'number') return new Date(value).toISOString().slice(0, 10);
      return value;
    case 'BIGINT':
    case 'INTEGER':
    case 'DOUBLE':
      return Number(value);
    default:
      return value;
  }
}

export function normalizeRow(row: Record<string, unknown>, schema: readonly SchemaColumn[]): Record<string, unknown> {
  return Object.fromEntries(schema.map((c) => [c.name, normalize(row[c.name], c.type)]));
}

export const stableKey = (row: Record<string, unknown>): string => JSON.stringify(row);
