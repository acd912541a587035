// The server's signing secret: it signs cursors and download links, and keys the encryption of
// webhook secrets in the database. A configured `signing_secret` wins; without one, the first
// start generates it into `<db_path>.secret` (0600) and later starts read it back, so links,
// cursors and webhook endpoints survive restarts with nothing to configure.
import { randomBytes } from 'node:crypto';
import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import type { Config } from './config.ts';
import type { Logger } from './logger.ts';
import { PRIVATE_FILE_MODE, tightenSync } from './private-files.ts';

export interface SigningSecret {
  secret: string;
  /** config: signing_secret; file: read from `file`; generated: written to `file` now; process: this process only */
  source: 'config' | 'file' | 'generated' | 'process';
  /** the file beside the database (null for an in-memory database) */
  file: string | null;
  /**
   * secrets that open what earlier ones sealed: previous_signing_secrets, and the generated file's
   * secret once a configured signing_secret replaced it
   */
  previous: string[];
}

const MIN_LENGTH = 16;

/** Where a generated secret is kept: beside the database, like its WAL. */
export function signingSecretFile(dbPath: string): string | null {
  return dbPath === ':memory:' ? null : `${dbPath}.secret`;
}

function readSecretFile(file: string): string | null {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  const secret = text.trim();
  if (secret.length < MIN_LENGTH) {
    throw new Error(
      `${file} holds no usable signing secret (at least ${MIN_LENGTH} characters): restore it from a backup, ` +
        'or set signing_secret in the config',
    );
  }
  return secret;
}

/** Writes a new secret only where none exists: two processes starting at once keep the first one's. */
function createSecretFile(file: string): string | null {
  const secret = randomBytes(32).toString('base64url');
  let fd: number;
  try {
    fd = openSync(file, 'wx', PRIVATE_FILE_MODE);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return null;
    throw err;
  }
  try {
    writeSync(fd, `${secret}\n`);
  } finally {
    closeSync(fd);
  }
  return secret;
}

export function resolveSigningSecret(
  config: Pick<Readonly<Config>, 'signing_secret' | 'previous_signing_secrets' | 'db_path'>,
  log: Logger,
): SigningSecret {
  const file = signingSecretFile(config.db_path);
  if (file && tightenSync(file)) log.warn({ file }, 'the signing secret file was readable by other users: made 0600');
  const stored = file ? readSecretFile(file) : null;
  const previous = [...config.previous_signing_secrets];
  if (config.signing_secret) {
    if (stored && stored !== config.signing_secret) {
      previous.push(stored);
      log.info(
        { file },
        'signing_secret is set in the config: the generated secret in this file is kept only to re-encrypt what it ' +
          'sealed and can be deleted once the service has started',
      );
    }
    return { secret: config.signing_secret, source: 'config', file, previous };
  }
  if (!file) {
    log.warn(
      'signing_secret is not set and the database is in memory: cursors and download links stop working when this ' +
        'process ends (set "signing_secret", 16 characters or more, in the config)',
    );
    return { secret: randomBytes(32).toString('base64url'), source: 'process', file, previous };
  }
  if (stored) return { secret: stored, source: 'file', file, previous };
  const created = createSecretFile(file);
  if (created === null) return { secret: readSecretFile(file)!, source: 'file', file, previous };
  log.info(
    { file },
    'no signing_secret in the config: generated one and keep it in this file (0600) so signed links, cursors and ' +
      'webhook endpoints survive restarts. Back it up with the database, or set "signing_secret" (16 characters or ' +
      'more) in the config to choose it yourself (docs/guides/operating.md, Files and permissions)',
  );
  return { secret: created, source: 'generated', file, previous };
}
