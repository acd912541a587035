import { existsSync } from 'node:fs';
import { chmod, copyFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { PRIVATE_FILE_MODE } from '../../core/private-files.ts';
import { writeBackup, writeSnapshot, type SnapshotSummary } from '../../exports/analyst-snapshot.ts';
import { UsageError } from '../../core/usage-error.ts';
import { signingSecretFile } from '../../core/signing-secret.ts';
import type { CommandIO, Operation } from './types.ts';

// `snapshot` (the analyst copy, private tables left out) and `backup` (the whole database, to
// restore from): both a consistent copy written beside the running service's writes.

function print(
  io: CommandIO,
  what: string,
  summary: SnapshotSummary,
  json: boolean,
  secretFile: string | null = null,
): void {
  if (json) {
    io.out(
      JSON.stringify({
        path: summary.path,
        taken_at: summary.taken_at,
        bytes: summary.bytes,
        tables: summary.tables,
        ...(what === 'backup' ? { secret_file: secretFile } : {}),
      }),
    );
    return;
  }
  const rows = summary.tables.reduce((n, t) => n + t.rows, 0);
  io.out(
    `${what} written to ${summary.path}: ${summary.tables.length} tables, ${rows} rows, ${summary.bytes} bytes, ` +
      `taken at ${summary.taken_at}`,
  );
  if (secretFile)
    io.out(
      `the generated signing secret copied to ${secretFile}: restore it beside the database, it decrypts ` +
        `the webhook secrets`,
    );
}

/**
 * The generated signing secret beside the backup (`<backup>.secret`, 0600): webhook secrets in
 * the copy are encrypted with it, so a backup restored without it has endpoints that cannot sign.
 * A configured signing_secret lives in the config, which the operator keeps.
 */
async function copySecretFile(dbPath: string, target: string): Promise<string | null> {
  const source = signingSecretFile(dbPath);
  if (!source || !existsSync(source)) return null;
  const copy = `${target}.secret`;
  await copyFile(source, copy);
  await chmod(copy, PRIVATE_FILE_MODE);
  return copy;
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
  async run({ db, config }, { values, positionals }, io) {
    const summary = await writeBackup(db, resolve(positionals[0]!));
    const secretFile = await copySecretFile(config.db_path, summary.path);
    print(io, 'backup', summary, values.json === true, secretFile);
    return 0;
  },
};
