import { resolve } from 'node:path';
import { writeBackup, writeSnapshot, type SnapshotSummary } from '../../exports/snapshot.ts';
import { UsageError } from '../cli.ts';
import type { CommandIO, Operation } from './types.ts';

// `snapshot` (the analyst copy, private tables left out) and `backup` (the whole database, to
// restore from): both a consistent copy written beside the running service's writes.

function print(io: CommandIO, what: string, summary: SnapshotSummary, json: boolean): void {
  if (json) {
    io.out(
      JSON.stringify({ path: summary.path, taken_at: summary.taken_at, bytes: summary.bytes, tables: summary.tables }),
    );
    return;
  }
  const rows = summary.tables.reduce((n, t) => n + t.rows, 0);
  io.out(
    `${what} written to ${summary.path}: ${summary.tables.length} tables, ${rows} rows, ${summary.bytes} bytes, taken at ${summary.taken_at}`,
  );
}

export const snapshotOperation: Operation = {
  check({ positionals }) {
    if (positionals.length > 1) throw new UsageError('snapshot takes at most one file (default: snapshot.path)');
  },
  async run({ db, config }, { values, positionals }, io) {
    const path = resolve(positionals[0] ?? config.snapshot.path);
    print(io, 'snapshot', await writeSnapshot(db, path), values.json === true);
    return 0;
  },
};

export const backupOperation: Operation = {
  check({ positionals }) {
    if (positionals.length !== 1) throw new UsageError('backup takes one file: transit-api backup <file>');
  },
  async run({ db }, { values, positionals }, io) {
    print(io, 'backup', await writeBackup(db, resolve(positionals[0]!)), values.json === true);
    return 0;
  },
};
