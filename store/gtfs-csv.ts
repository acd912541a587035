import type { DuckDBConnection } from '@duckdb/node-api';
import { sqlString } from './sql.ts';

// DuckDB's CSV reader configured for GTFS: the dialect is fixed by the GTFS spec rather than
// sniffed (the sniffer guesses `|` or `;` on short or ragged files), everything is read as
// text, and a file that is not UTF-8 (some agencies export Windows Latin-1) is read again as
// Latin-1 instead of failing the import.

export type CsvEncoding = 'utf-8' | 'latin-1';

const CSV_OPTIONS = [
  'header = true',
  'all_varchar = true',
  `delim = ','`,
  `quote = '"'`,
  `escape = '"'`,
  // ragged rows (trailing columns left out) are common; null_padding needs the serial reader
  'null_padding = true',
  'parallel = false',
].join(', ');

/** `read_csv(...)` for a GTFS file, to use in FROM. */
export function readCsvSql(path: string, encoding: CsvEncoding = 'utf-8'): string {
  return `read_csv(${sqlString(path)}, ${CSV_OPTIONS}, encoding = '${encoding}')`;
}

/** DuckDB's CSV errors run to 30 lines; the first and the reason are what a person needs. */
export function describeCsvError(err: unknown): string {
  const lines = String((err as Error)?.message ?? err)
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const head = lines[0] ?? 'unknown error';
  const reason = lines
    .slice(1, 4)
    .find((l) => !/^(Original Line|Possible Solution|LINE \d)/.test(l) && !l.includes(' = '));
  return reason ? `${head}: ${reason}` : head;
}

function isEncodingError(err: unknown): boolean {
  return /not utf-8 encoded|invalid unicode/i.test(String((err as Error)?.message ?? err));
}

/** Runs `read` as UTF-8, and once more as Latin-1 when DuckDB finds the bytes are not UTF-8. */
export async function withEncoding<T>(
  read: (encoding: CsvEncoding) => Promise<T>,
  first: CsvEncoding = 'utf-8',
): Promise<{ value: T; encoding: CsvEncoding }> {
  try {
    return { value: await read(first), encoding: first };
  } catch (err) {
    if (first === 'latin-1' || !isEncodingError(err)) throw err;
    return { value: await read('latin-1'), encoding: 'latin-1' };
  }
}

/** The file's column names as written in its header. */
export async function csvHeader(conn: DuckDBConnection, path: string, encoding: CsvEncoding): Promise<string[]> {
  return (await conn.runAndReadAll(`SELECT * FROM ${readCsvSql(path, encoding)} LIMIT 0`)).columnNames();
}
