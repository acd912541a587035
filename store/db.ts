import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { type DuckDBConnection, DuckDBInstance, type DuckDBAppender, type DuckDBValue } from '@duckdb/node-api';
import { assetPath } from '../core/assets.ts';
import { defaultLogger, type Logger } from '../core/logger.ts';
import { makePrivateDirSync, restrictUmask, tightenSync } from '../core/private-files.ts';
import type { DurationObserver } from '../core/telemetry.ts';
import { inTransaction } from './sql.ts';

const MIGRATIONS_DIR = assetPath('store/migrations');

export type Params = Record<string, DuckDBValue> | DuckDBValue[];

export interface DbOpenOptions {
  /** run pending migrations (default true) */
  migrate?: boolean;
  /** DuckDB memory_limit: a size (`1GB`) or a share of RAM (`25%`); absent: DuckDB's 80% of RAM */
  memoryLimit?: string;
  /** DuckDB worker threads; absent: one per core */
  threads?: number;
  /**
   * false: a missing file is an error (DatabaseMissingError) instead of a new empty database;
   * for commands that read or change what a service stored (default true)
   */
  create?: boolean;
  /** where a tightened file mode is reported; default: the process's logger */
  log?: Logger;
}

/** Db.open with `create: false` on a path where no database exists. */
export class DatabaseMissingError extends Error {
  override name = 'DatabaseMissingError';
  constructor(readonly path: string) {
    super(`no database at ${resolve(path)}`);
  }
}

/** The files DuckDB keeps for the database at `path`: the file, its WAL and its spill folder. */
export function databaseFiles(path: string): { file: string; wal: string; temp: string } {
  return { file: path, wal: `${path}.wal`, temp: `${path}.tmp` };
}

/**
 * Makes the database's files owner-only before DuckDB opens them: files an earlier version (or
 * a permissive umask) left readable by others are tightened, and said so once.
 */
function privateDatabaseFiles(path: string, log: Logger | undefined): void {
  const files = databaseFiles(path);
  const tightened = [files.file, files.wal, files.temp].filter((f) => tightenSync(f));
  if (tightened.length) {
    (log ?? defaultLogger()).warn(
      { files: tightened },
      'database files were readable by other users of this host: made owner-only (0600 files, 0700 folders)',
    );
  }
}

/** The store section of the config as open options (every process that opens the file uses it). */
export function dbOptions(store: { memory_limit: string; threads?: number | undefined }): DbOpenOptions {
  return { memoryLimit: store.memory_limit, threads: store.threads };
}

/** DuckDB takes sizes, not shares: `25%` becomes that share of this machine's RAM in MiB. */
export function duckdbMemoryLimit(limit: string, ramBytes = totalmem()): string {
  const trimmed = limit.trim();
  if (!trimmed.endsWith('%')) return trimmed;
  const share = Number.parseFloat(trimmed) / 100;
  return `${Math.max(1, Math.floor((ramBytes * share) / 2 ** 20))}MiB`;
}

/**
 * One DuckDB file. All statements on the shared connection go through one queue, because a
 * DuckDB connection runs one statement at a time and a transaction must not interleave with
 * others. Readers that may run beside the writer open their own connection with `connect()`.
 */
export class Db {
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;
  private waiting = 0;
  private queueWait: DurationObserver | null = null;
  private readonly closing: (() => Promise<unknown>)[] = [];
  private closingRun: Promise<void> | null = null;

  private constructor(
    readonly path: string,
    readonly instance: DuckDBInstance,
    private readonly conn: DuckDBConnection,
  ) {}

  static async open(path: string, options: DbOpenOptions = {}): Promise<Db> {
    if (path !== ':memory:') {
      if (options.create === false && !existsSync(path)) throw new DatabaseMissingError(path);
      // DuckDB creates its WAL and spill files itself, later: only the umask keeps them private
      restrictUmask();
      makePrivateDirSync(dirname(path));
      privateDatabaseFiles(path, options.log);
    }
    // never download extensions: parquet, json and icu ship inside the binding
    const settings: Record<string, string> = {
      autoinstall_known_extensions: 'false',
      autoload_known_extensions: 'true',
    };
    // without a limit DuckDB takes up to 80% of RAM; past the limit it spills beside the file
    if (options.memoryLimit) settings.memory_limit = duckdbMemoryLimit(options.memoryLimit);
    if (options.threads) settings.threads = String(options.threads);
    if (path !== ':memory:') settings.temp_directory = `${path}.tmp`;
    const instance = await DuckDBInstance.create(path, settings);
    // a new file under a umask that ignored ours (another process's setting, a filesystem)
    if (path !== ':memory:') tightenSync(path);
    const db = new Db(path, instance, await instance.connect());
    if (options.migrate !== false) await db.migrate();
    return db;
  }

  /** Runs `fn` alone on the shared connection. */
  exclusive<T>(fn: (conn: DuckDBConnection) => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new Error('database is closed'));
    const queuedAt = performance.now();
    this.waiting++;
    const run = this.queue.then(() => {
      this.waiting--;
      this.queueWait?.((performance.now() - queuedAt) / 1000);
      return fn(this.conn);
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Statements waiting for the shared connection (the one running excluded). */
  get queueDepth(): number {
    return this.waiting;
  }

  /** Reports how long each statement waited for the shared connection (metrics). */
  observeQueueWait(observer: DurationObserver | null): void {
    this.queueWait = observer;
  }

  async run(sql: string, params?: Params): Promise<void> {
    await this.exclusive((c) => c.run(sql, params as never));
  }

  /** Rows as plain JS objects (BIGINT → bigint, TIMESTAMPTZ → Date, DATE → Date). */
  all<T = Record<string, unknown>>(sql: string, params?: Params): Promise<T[]> {
    return this.exclusive(async (c) => {
      const reader = await c.runAndReadAll(sql, params as never);
      return reader.getRowObjectsJS() as T[];
    });
  }

  /** Rows with JSON-friendly values (BIGINT and timestamps as strings). */
  json<T = Record<string, unknown>>(sql: string, params?: Params): Promise<T[]> {
    return this.exclusive(async (c) => {
      const reader = await c.runAndReadAll(sql, params as never);
      return reader.getRowObjectsJson() as T[];
    });
  }

  /** BEGIN … COMMIT around `fn` on the shared connection; ROLLBACK when it throws. */
  transaction<T>(fn: (conn: DuckDBConnection) => Promise<T>): Promise<T> {
    return this.exclusive((c) => inTransaction(c, fn));
  }

  /** Appends with the DuckDB appender inside the queue; the appender is closed (flushed) after. */
  append(table: string, fill: (appender: DuckDBAppender) => void): Promise<void> {
    return this.exclusive(async (c) => {
      const appender = await c.createAppender(table);
      try {
        fill(appender);
      } finally {
        appender.closeSync();
      }
    });
  }

  /** A separate connection for work that must not wait behind the shared queue. */
  connect(): Promise<DuckDBConnection> {
    return this.instance.connect();
  }

  async migrate(): Promise<string[]> {
    const files = readdirSync(MIGRATIONS_DIR)
      .filter((f) => /^\d{3}_.+\.sql$/.test(f))
      .sort();
    return this.exclusive(async (c) => {
      await c.run(`CREATE TABLE IF NOT EXISTS schema_migrations (
        version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`);
      const done = new Set(
        (await c.runAndReadAll('SELECT version FROM schema_migrations'))
          .getRowObjectsJS()
          .map((r) => Number(r.version)),
      );
      const pending = files.filter((file) => !done.has(Number(file.slice(0, 3))));
      if (pending.length === 0) return pending;
      // all pending migrations in one transaction: an upgrade lands whole or not at all, and a new
      // file commits once instead of once per migration (a third less CPU to create one)
      await inTransaction(c, async () => {
        for (const file of pending) {
          try {
            await c.run(readFileSync(join(MIGRATIONS_DIR, file), 'utf8'));
            await c.run('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [
              Number(file.slice(0, 3)),
              file,
            ]);
          } catch (err) {
            throw new Error(
              `migration ${file} failed (no migration of this run was applied): ${(err as Error).message}`,
            );
          }
        }
      });
      return pending;
    });
  }

  /** Runs `hook` when the file closes, before new statements are refused (a writer's last rows). */
  beforeClose(hook: () => Promise<unknown>): void {
    this.closing.push(hook);
  }

  close(): Promise<void> {
    this.closingRun ??= this.shutdown();
    return this.closingRun;
  }

  private async shutdown(): Promise<void> {
    // a hook that fails loses what it held, not the close: the file must still be released
    for (const hook of this.closing.splice(0)) await hook().catch(() => undefined);
    // refuse new statements first: one queued while we wait would run on a closed connection
    this.closed = true;
    await this.queue;
    // CHECKPOINT folds the WAL into the file so analysts and restarts see everything
    await this.conn.run('CHECKPOINT').catch(() => undefined);
    this.conn.closeSync();
    this.instance.closeSync();
  }
}
