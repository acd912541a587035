// The analyst snapshot: a consistent copy of the database in its own DuckDB file that analysts
// open read-only (DuckDB CLI, Python) while the service keeps writing. Copied table by table
// inside one transaction on the Db queue, into a new file that is renamed over the old one, so
// a reader sees either the previous snapshot or the new one, never a partial copy.
import { componentLogger, type Logger } from '../core/logger.ts';
import { randomBytes } from 'node:crypto';
import { open, rename, rm, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { listValue, type DuckDBConnection } from '@duckdb/node-api';
import type { Config } from '../core/config.ts';
import { makePrivateDir, makePrivateFile } from '../core/private-files.ts';
import type { Db } from '../store/db.ts';
import { inTransaction, quoteIdent, sqlString } from '../store/sql.ts';
import { assertCronExpression, startCronJob } from '../core/cron-job.ts';

/**
 * Tables that never leave the service: API keys, per-customer usage and webhook endpoints (their
 * signing secrets, encrypted with a key only the service holds), messages and deliveries.
 */
export const PRIVATE_TABLE = /^(api_|webhook_)/;

export interface SnapshotTable {
  name: string;
  rows: number;
}

export interface SnapshotSummary {
  path: string;
  taken_at: string;
  tables: SnapshotTable[];
  bytes: number;
  ms: number;
}

export interface SnapshotOptions {
  /** tables to leave out; default: PRIVATE_TABLE */
  exclude?: (table: string) => boolean;
  now?: () => Date;
}

async function fsyncFile(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Writes a consistent read-only copy of `db` to `targetPath`. Runs on the Db queue, so no write
 * of this process interleaves, and inside one transaction, so every table is read as of the same
 * instant. Adds a `snapshot_info` table (taken_at, source, tables).
 */
export async function writeSnapshot(
  db: Db,
  targetPath: string,
  options: SnapshotOptions = {},
): Promise<SnapshotSummary> {
  const exclude = options.exclude ?? ((t: string) => PRIVATE_TABLE.test(t));
  const takenAt = (options.now ?? (() => new Date()))();
  return writeCopy(db, targetPath, takenAt, async (c, source, alias) => {
    const names = (
      await c.runAndReadAll(
        `SELECT table_name FROM duckdb_tables()
      WHERE database_name = $db AND schema_name = 'main' AND NOT temporary ORDER BY table_name`,
        { db: source },
      )
    )
      .getRowObjectsJS()
      .map((r) => String(r.table_name))
      .filter((t) => !exclude(t));
    const copied: SnapshotTable[] = [];
    for (const name of names) {
      const result = await c.runAndReadAll(`CREATE TABLE ${quoteIdent(alias)}.main.${quoteIdent(name)} AS
        SELECT * FROM ${quoteIdent(source)}.main.${quoteIdent(name)}`);
      copied.push({ name, rows: Number(result.getRowObjectsJS()[0]?.Count ?? 0) });
    }
    await c.run(
      `CREATE TABLE ${quoteIdent(alias)}.main.snapshot_info AS
      SELECT $taken::TIMESTAMPTZ AS taken_at, $source::VARCHAR AS source, $tables::VARCHAR[] AS tables`,
      {
        taken: takenAt.toISOString(),
        source: db.path,
        tables: listValue(copied.map((t) => t.name)),
      },
    );
    return copied;
  });
}

/**
 * The online backup: the whole database (every table, keys and webhook secrets included, with
 * its sequences, constraints, indexes and migration record) copied by DuckDB's COPY FROM
 * DATABASE in one transaction, through the snapshot's temp file, checkpoint and rename. The
 * file is a working database: stop the service, put it at `db_path`, start again.
 */
export async function writeBackup(
  db: Db,
  targetPath: string,
  options: Pick<SnapshotOptions, 'now'> = {},
): Promise<SnapshotSummary> {
  const takenAt = (options.now ?? (() => new Date()))();
  return writeCopy(db, targetPath, takenAt, async (c, source, alias) => {
    await c.run(`COPY FROM DATABASE ${quoteIdent(source)} TO ${quoteIdent(alias)}`);
    const names = (
      await c.runAndReadAll(
        `SELECT schema_name, table_name FROM duckdb_tables()
      WHERE database_name = $db AND NOT temporary ORDER BY schema_name, table_name`,
        { db: alias },
      )
    ).getRowObjectsJS();
    const copied: SnapshotTable[] = [];
    for (const r of names) {
      // counted at the source, in the transaction that copied it: with other connections open,
      // the copy's own rows are not visible until the transaction commits
      const table = `${quoteIdent(source)}.${quoteIdent(String(r.schema_name))}.${quoteIdent(String(r.table_name))}`;
      const count = (await c.runAndReadAll(`SELECT count(*)::BIGINT AS n FROM ${table}`)).getRowObjectsJS()[0]?.n;
      copied.push({ name: String(r.table_name), rows: Number(count ?? 0) });
    }
    return copied;
  });
}

/**
 * The file mechanics shared by the snapshot and the backup: `fill` writes into a new file
 * attached as `alias`, on the Db queue and inside one transaction; the file is checkpointed,
 * detached, synced and renamed over `targetPath`, so a reader sees the previous copy or the new
 * one, never a partial one.
 */
async function writeCopy(
  db: Db,
  targetPath: string,
  takenAt: Date,
  fill: (c: DuckDBConnection, source: string, alias: string) => Promise<SnapshotTable[]>,
): Promise<SnapshotSummary> {
  const started = performance.now();
  const target = resolve(targetPath);
  if (resolve(db.path) === target) throw new RangeError("the copy's path must differ from the database path");
  await makePrivateDir(dirname(target));
  const temp = `${target}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  const alias = `snapshot_${randomBytes(4).toString('hex')}`;
  try {
    const tables = await db.exclusive(async (c) => {
      const source = String((await c.runAndReadAll('SELECT current_database() AS name')).getRowObjectsJS()[0]?.name);
      await c.run(`ATTACH ${sqlString(temp)} AS ${quoteIdent(alias)}`);
      try {
        return await inTransaction(c, () => fill(c, source, alias));
      } finally {
        // CHECKPOINT folds the copy's WAL into its file: the copy is one self-contained file
        await c.run(`CHECKPOINT ${quoteIdent(alias)}`).catch(() => undefined);
        await c.run(`DETACH ${quoteIdent(alias)}`);
      }
    });
    await rm(`${temp}.wal`, { force: true });
    // a copy holds what the database holds (a backup: key hashes, webhook secrets): owner-only
    await makePrivateFile(temp);
    await fsyncFile(temp);
    // an old WAL beside the target would be replayed onto the new file by the next opener
    await rm(`${target}.wal`, { force: true });
    await rename(temp, target);
    await fsyncFile(dirname(target)).catch(() => undefined);
    const { size } = await stat(target);
    return { path: target, taken_at: takenAt.toISOString(), tables, bytes: size, ms: performance.now() - started };
  } catch (err) {
    await rm(temp, { force: true }).catch(() => undefined);
    await rm(`${temp}.wal`, { force: true }).catch(() => undefined);
    throw err;
  }
}

export interface SnapshotJob {
  runOnce(): Promise<SnapshotSummary>;
  stop(): Promise<void>;
}

export interface SnapshotJobOptions extends SnapshotOptions {
  /** write one right away (default false) */
  runAtStart?: boolean;
  log?: Logger;
  onSnapshot?: (summary: SnapshotSummary) => void;
  onSnapshotFailed?: (err: unknown) => void;
}

/**
 * Writes the snapshot on `snapshot.cron`; runs never overlap, a failure is logged and retried
 * next time. With `snapshot.enabled: false` nothing is scheduled (runOnce still works).
 */
export async function scheduleSnapshot(
  db: Db,
  config: Pick<Readonly<Config>, 'snapshot'>,
  options: SnapshotJobOptions = {},
): Promise<SnapshotJob> {
  const { path, cron: expression } = config.snapshot;
  assertCronExpression('snapshot.cron', expression);
  const log = componentLogger(options.log, 'snapshot');
  let running: Promise<SnapshotSummary> | null = null;
  const runOnce = (): Promise<SnapshotSummary> => {
    running ??= writeSnapshot(db, path, options)
      .then(
        (summary) => {
          options.onSnapshot?.(summary);
          return summary;
        },
        (err: unknown) => {
          options.onSnapshotFailed?.(err);
          throw err;
        },
      )
      .finally(() => {
        running = null;
      });
    return running;
  };
  if (!config.snapshot.enabled)
    return {
      runOnce,
      async stop() {
        await running?.catch(() => undefined);
      },
    };
  const job = startCronJob({
    key: 'snapshot.cron',
    expression,
    name: 'analyst-snapshot',
    log,
    failure: 'writing the analyst snapshot failed',
    run: runOnce,
  });
  if (options.runAtStart) await runOnce().catch((err: unknown) => log.error({ err }, 'first snapshot failed'));
  return {
    runOnce,
    async stop() {
      await job.stop();
      await running?.catch(() => undefined);
    },
  };
}
