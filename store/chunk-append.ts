import { endianness } from 'node:os';
import bindings from '@duckdb/node-bindings';
import {
  DuckDBDataChunk,
  DuckDBTypeId,
  listValue,
  structValue,
  type DuckDBAppender,
  type DuckDBValue,
} from '@duckdb/node-api';
import { epochDay } from '../core/dates.ts';
import { microsOfMs } from './sql.ts';

// Column-at-a-time appends. Each column of a 2,048-row chunk is packed into one typed array
// and copied into the DuckDB vector in one call; strings of up to 12 ASCII bytes are written
// inline in DuckDB's public `duckdb_string_t` layout (uint32 length + 12 bytes), so the common
// ids cost no native call each. Longer strings go through duckdb_vector_assign_string_element,
// once per distinct value in a chunk (writeLong).
// The per-value path of @duckdb/node-api makes one native call per string and allocates per
// timestamp, which is several times slower (see bench/history-append.ts).

if (endianness() !== 'LE') throw new Error('store/chunk-append.ts writes vectors little-endian');

export type ColumnKind =
  | 'varchar'
  | 'double'
  | 'smallint'
  | 'integer'
  | 'bigint'
  | 'boolean'
  /** epoch milliseconds → TIMESTAMPTZ */
  | 'timestamptz'
  /** 'YYYY-MM-DD' → DATE */
  | 'date'
  /** string[] → VARCHAR[] */
  | 'varchar_list'
  /** plain objects → STRUCT(...)[]; field values must already be DuckDB values */
  | 'struct_list';

export interface ColumnDef<R> {
  name: string;
  kind: ColumnKind;
  get(row: R): unknown;
}

/** The DuckDB column type each kind writes; raw writes into any other type would be garbage. */
const TYPE_OF_KIND: Record<ColumnKind, DuckDBTypeId> = {
  varchar: DuckDBTypeId.VARCHAR,
  double: DuckDBTypeId.DOUBLE,
  smallint: DuckDBTypeId.SMALLINT,
  integer: DuckDBTypeId.INTEGER,
  bigint: DuckDBTypeId.BIGINT,
  boolean: DuckDBTypeId.BOOLEAN,
  timestamptz: DuckDBTypeId.TIMESTAMP_TZ,
  date: DuckDBTypeId.DATE,
  varchar_list: DuckDBTypeId.LIST,
  struct_list: DuckDBTypeId.LIST,
};

const CHUNK_ROWS = 2048;
const STRING_SLOT = 16;
const INLINE_MAX = 12;
const TWO_POW_32 = 4294967296;

type RawVector = ReturnType<typeof bindings.data_chunk_get_vector>;

/** Scratch buffers reused for every chunk (a chunk is filled synchronously, so never shared). */
const scratch = {
  bytes: new Uint8Array(CHUNK_ROWS * STRING_SLOT),
  words: new Uint32Array(CHUNK_ROWS * 2),
  validity: new Uint32Array(CHUNK_ROWS / 32),
};
const slotView = new DataView(scratch.bytes.buffer);
const float64 = new Float64Array(scratch.words.buffer, 0, CHUNK_ROWS);
const int32 = new Int32Array(scratch.words.buffer);
const int16 = new Int16Array(scratch.words.buffer);

class Nulls {
  any = false;

  mark(i: number): void {
    if (!this.any) {
      this.any = true;
      scratch.validity.fill(0xffffffff);
    }
    scratch.validity[i >>> 5]! &= ~(1 << (i & 31));
  }

  flush(vector: RawVector, count: number): void {
    if (!this.any) return;
    bindings.vector_ensure_validity_writable(vector);
    bindings.copy_data_to_vector_validity(vector, 0, scratch.validity.buffer, 0, Math.ceil(count / 64) * 8);
  }
}

function writeVarchar<R>(
  vector: RawVector,
  rows: readonly R[],
  offset: number,
  count: number,
  col: ColumnDef<R>,
): void {
  const bytes = scratch.bytes;
  // unused inline bytes must be zero: DuckDB compares inlined strings over all 16 bytes
  bytes.fill(0, 0, count * STRING_SLOT);
  const nulls = new Nulls();
  let long: number[] | null = null;
  for (let i = 0; i < count; i++) {
    const value = col.get(rows[offset + i]!);
    if (value === null || value === undefined) {
      nulls.mark(i);
      continue;
    }
    if (typeof value !== 'string') throw new TypeError(`${col.name}: expected a string, got ${typeof value}`);
    const length = value.length;
    const base = i * STRING_SLOT;
    let inline = length <= INLINE_MAX;
    for (let j = 0; inline && j < length; j++) {
      const code = value.charCodeAt(j);
      if (code > 0x7f) inline = false;
      else bytes[base + 4 + j] = code;
    }
    if (inline) slotView.setUint32(base, length, true);
    else {
      bytes.fill(0, base, base + STRING_SLOT);
      long ??= [];
      long.push(i);
    }
  }
  bindings.copy_data_to_vector(vector, 0, bytes.buffer, 0, count * STRING_SLOT);
  if (long) writeLong(vector, rows, offset, count, col, long);
  nulls.flush(vector, count);
}

/**
 * The strings not inlined, each copied into the vector's string heap by DuckDB. A value that comes
 * again in the chunk (a long feed id, a status such as `in_transit_to`: every row of a poll) is
 * copied once; its later rows take the first one's `duckdb_string_t`, which points at the same
 * bytes (the heap never moves what it holds). A native call per value rather than per row.
 */
function writeLong<R>(
  vector: RawVector,
  rows: readonly R[],
  offset: number,
  count: number,
  col: ColumnDef<R>,
  long: readonly number[],
): void {
  const firstRow = new Map<string, number>();
  let again: number[] | null = null;
  for (const i of long) {
    const value = col.get(rows[offset + i]!) as string;
    const first = firstRow.get(value);
    if (first === undefined) {
      bindings.vector_assign_string_element(vector, i, value);
      firstRow.set(value, i);
    } else {
      again ??= [];
      again.push(i, first);
    }
  }
  if (!again) return;
  // the vector's slots as they are now (a copy), the repeats filled in, written back at once
  const slots = bindings.vector_get_data(vector, count * STRING_SLOT);
  for (let k = 0; k < again.length; k += 2) {
    const first = again[k + 1]! * STRING_SLOT;
    slots.copyWithin(again[k]! * STRING_SLOT, first, first + STRING_SLOT);
  }
  bindings.copy_data_to_vector(vector, 0, slots.buffer as ArrayBuffer, slots.byteOffset, count * STRING_SLOT);
}

/** Fixed-width columns: 2, 4 or 8 bytes per row, packed by `put` into the scratch words. */
function writeFixed<R>(
  vector: RawVector,
  rows: readonly R[],
  offset: number,
  count: number,
  col: ColumnDef<R>,
  width: 2 | 4 | 8,
  put: (i: number, value: unknown) => void,
): void {
  const nulls = new Nulls();
  for (let i = 0; i < count; i++) {
    const value = col.get(rows[offset + i]!);
    if (value === null || value === undefined) nulls.mark(i);
    else put(i, value);
  }
  bindings.copy_data_to_vector(vector, 0, scratch.words.buffer, 0, count * width);
  nulls.flush(vector, count);
}

function number(col: string, value: unknown): number {
  if (typeof value !== 'number') throw new TypeError(`${col}: expected a number, got ${typeof value}`);
  return value;
}

/** int64 little-endian as two 32-bit halves: no BigInt per value. Exact below 2^53. */
function putInt64(i: number, n: number): void {
  scratch.words[2 * i] = n >>> 0;
  int32[2 * i + 1] = Math.floor(n / TWO_POW_32);
}

function fillColumn<R>(
  chunk: DuckDBDataChunk,
  c: number,
  rows: readonly R[],
  offset: number,
  count: number,
  col: ColumnDef<R>,
): void {
  const vector = bindings.data_chunk_get_vector(chunk.chunk, c);
  const { name } = col;
  switch (col.kind) {
    case 'varchar':
      writeVarchar(vector, rows, offset, count, col);
      return;
    case 'double':
      writeFixed(vector, rows, offset, count, col, 8, (i, v) => {
        float64[i] = number(name, v);
      });
      return;
    case 'smallint':
      writeFixed(vector, rows, offset, count, col, 2, (i, v) => {
        int16[i] = number(name, v);
      });
      return;
    case 'integer':
      writeFixed(vector, rows, offset, count, col, 4, (i, v) => {
        int32[i] = number(name, v);
      });
      return;
    case 'bigint':
      writeFixed(vector, rows, offset, count, col, 8, (i, v) => putInt64(i, Math.trunc(number(name, v))));
      return;
    case 'timestamptz':
      writeFixed(vector, rows, offset, count, col, 8, (i, v) => putInt64(i, microsOfMs(number(name, v))));
      return;
    case 'date': {
      // a poll's rows share one or two service dates: parse each distinct text once
      let lastText: unknown;
      let lastDay = 0;
      writeFixed(vector, rows, offset, count, col, 4, (i, v) => {
        if (v !== lastText) {
          const day = epochDay(v as string);
          if (day === null) throw new TypeError(`${name}: ${JSON.stringify(v)} is not a YYYY-MM-DD date`);
          lastText = v;
          lastDay = day;
        }
        int32[i] = lastDay;
      });
      return;
    }
    case 'boolean': {
      // DuckDB booleans are one byte each
      const nulls = new Nulls();
      const bytes = scratch.bytes;
      for (let i = 0; i < count; i++) {
        const v = col.get(rows[offset + i]!);
        if (v === null || v === undefined) nulls.mark(i);
        else bytes[i] = v === true ? 1 : 0;
      }
      bindings.copy_data_to_vector(vector, 0, bytes.buffer, 0, count);
      nulls.flush(vector, count);
      return;
    }
    case 'varchar_list':
    case 'struct_list': {
      // nested values are rare (alerts, polls): the library's own vector writer handles them
      const out = chunk.getColumnVector(c);
      for (let i = 0; i < count; i++) {
        const v = col.get(rows[offset + i]!);
        out.setItem(i, v === null || v === undefined ? null : nested(col.kind, v));
      }
      out.flush();
      return;
    }
  }
}

function nested(kind: 'varchar_list' | 'struct_list', value: unknown): DuckDBValue {
  return kind === 'varchar_list'
    ? listValue(value as string[])
    : listValue((value as Record<string, DuckDBValue>[]).map((v) => structValue(v)));
}

/** Appends `rows` through `appender`, whose table columns must match `columns` in order. */
export function appendColumns<R>(appender: DuckDBAppender, columns: readonly ColumnDef<R>[], rows: readonly R[]): void {
  for (const _ of appendChunks(appender, columns, rows)) {
    // each chunk appended as the generator runs
  }
}

/**
 * As appendColumns, one chunk (2,048 rows) at a time: each is flushed into the transaction and
 * then `between` runs, where the caller lets the event loop turn. Appending a poll's rows is
 * synchronous work on the thread that answers requests and writes event streams (about 1.7 µs
 * a row, packing and flush): 10,000 rows would hold it for ~17 ms, 31,000 for ~50 ms.
 */
export async function appendColumnsInSlices<R>(
  appender: DuckDBAppender,
  columns: readonly ColumnDef<R>[],
  rows: readonly R[],
  between: () => Promise<void>,
): Promise<void> {
  for (const _ of appendChunks(appender, columns, rows)) {
    appender.flushSync();
    await between();
  }
}

function* appendChunks<R>(
  appender: DuckDBAppender,
  columns: readonly ColumnDef<R>[],
  rows: readonly R[],
): Generator<void> {
  if (rows.length === 0) return;
  if (appender.columnCount !== columns.length) {
    throw new Error(`appender has ${appender.columnCount} columns, writer defines ${columns.length}`);
  }
  const types = columns.map((col, c) => {
    const type = appender.columnType(c);
    if (type.typeId !== TYPE_OF_KIND[col.kind]) {
      throw new Error(`column ${c + 1} (${col.name}) is ${type.toString()} in the table, the writer fills ${col.kind}`);
    }
    return type;
  });
  for (let offset = 0; offset < rows.length; offset += CHUNK_ROWS) {
    const count = Math.min(CHUNK_ROWS, rows.length - offset);
    const chunk = DuckDBDataChunk.create(types, count);
    for (let c = 0; c < columns.length; c++) fillColumn(chunk, c, rows, offset, count, columns[c]!);
    appender.appendDataChunk(chunk);
    yield;
  }
}
