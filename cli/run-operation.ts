// How the CLI runs an operator command: through the admin socket when a service answers there
// (it holds the database), else on the database file itself. Same output and exit code either way.
import { resolve } from 'node:path';
import { pingAdmin, runAdminCommand } from '../admin/client.ts';
import type { CommandIO, CommandRequest } from '../admin/protocol.ts';
import {
  adminSocketPath,
  type Config,
  ConfigError,
  configFile,
  DEFAULT_CONFIG,
  loadConfig,
  readConfigFile,
} from '../core/config.ts';
import { DatabaseMissingError, Db, dbOptions } from '../store/db.ts';
import { UsageError } from '../core/usage-error.ts';
import { executeOperation, OPERATIONS, type OperationName } from '../admin/operations/dispatch.ts';

/**
 * File arguments as absolute paths, so the service (whose working directory may differ) reads and
 * writes where the operator meant; URLs are left as they are.
 */
export function absolutePaths(request: CommandRequest): CommandRequest {
  const isUrl = (p: string) => /^[a-z][a-z0-9+.-]*:\/\//i.test(p);
  return { ...request, positionals: request.positionals.map((p) => (isUrl(p) ? p : resolve(p))) };
}

/** Lines to the process's stdout and stderr. */
export const STDIO: CommandIO = {
  out: (line) => {
    process.stdout.write(`${line}\n`);
  },
  err: (line) => {
    process.stderr.write(`${line}\n`);
  },
};

/** How long a CLI waits for a service that holds the database to answer on its socket (it may be starting). */
const STARTING_SERVICE_WAIT_MS = 15_000;

export function isLockError(err: unknown): boolean {
  return /Could not set lock on file|Conflicting lock is held/i.test((err as Error)?.message ?? '');
}

function lockHint(config: Readonly<Config>, socket: string | null, err: unknown): string {
  const pid = /\(PID (\d+)\)/.exec((err as Error).message)?.[1];
  const holder = pid ? `another process (PID ${pid})` : 'another process';
  const where = socket
    ? `no transit-api service answers on its admin socket ${socket}`
    : 'the admin socket is disabled in this config (admin.enabled: false)';
  return (
    `the database ${config.db_path} is held by ${holder} and ${where}. ` +
    'If that process is a service started with another config, pass the same --config (or TRANSIT_CONFIG); ' +
    'otherwise stop it and try again.'
  );
}

async function waitForAdmin(socket: string, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await pingAdmin(socket, 1_000)) return true;
    await new Promise((r) => setTimeout(r, 250));
  }
  return false;
}

/**
 * Where the command looked, and how to point it elsewhere: an operator command never leaves an
 * empty database where a typo or an unset TRANSIT_DB pointed it.
 */
export function missingDatabaseMessage(
  name: string,
  config: Readonly<Config>,
  socket: string | null,
  file: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): string {
  const from = env.TRANSIT_DB
    ? 'TRANSIT_DB'
    : file
      ? `db_path of ${resolve(file)}`
      : `the default db_path, with no --config or TRANSIT_CONFIG, relative to ${process.cwd()}`;
  const service = socket
    ? ` and no transit-api service answers on ${resolve(socket)}`
    : ' (the admin socket is disabled: admin.enabled false)';
  return [
    `no database at ${resolve(config.db_path)} (${from})${service}.`,
    `\`transit-api ${name}\` works on an existing database and does not create one. Point it at yours with ` +
      '--config <file> (or TRANSIT_CONFIG), the config the service runs with, or with TRANSIT_DB=<path>.',
    'A new database is made by `transit-api serve`, `ingest`, `replay`, `import-gtfs` or `keys create`.',
  ].join('\n');
}

/** Captured output is whole lines, each ending in a newline. */
function replay(text: string, print: (line: string) => void): void {
  if (text) for (const line of text.replace(/\n$/, '').split('\n')) print(line);
}

/** The request as the service sees it: the client's --config only located the service. */
function forwarded(request: CommandRequest): CommandRequest {
  const { config: _config, ...values } = request.values;
  return { values, positionals: request.positionals };
}

/** Runs the command in the service and prints what it printed. */
async function forward(socket: string, name: OperationName, request: CommandRequest, io: CommandIO): Promise<number> {
  const result = await runAdminCommand(socket, name, forwarded(request));
  replay(result.stdout, io.out);
  replay(result.stderr, io.err);
  return result.exit_code;
}

/**
 * The socket named by a config file that does not validate: `reload` after a bad edit still
 * reaches the service, which lists every problem and keeps its running config.
 */
function socketOfInvalidFile(path: string | undefined, env: NodeJS.ProcessEnv): string | null {
  let raw: Record<string, unknown> = {};
  try {
    const parsed = readConfigFile(configFile(path, env));
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed))
      raw = parsed as Record<string, unknown>;
  } catch {
    // unreadable or not JSON: the defaults locate the socket
  }
  const admin = (typeof raw.admin === 'object' && raw.admin !== null ? raw.admin : {}) as Record<string, unknown>;
  if (admin.enabled === false) return null;
  if (typeof admin.socket === 'string' && admin.socket) return admin.socket;
  const db = env.TRANSIT_DB || (typeof raw.db_path === 'string' && raw.db_path ? raw.db_path : DEFAULT_CONFIG.db_path);
  return `${db}.sock`;
}

export async function operate(name: OperationName, request: CommandRequest, io: CommandIO = STDIO): Promise<number> {
  // mistakes in the arguments are reported before any database or service is looked for
  OPERATIONS[name].check?.(request);
  let config: Readonly<Config>;
  try {
    config = loadConfig(request.values.config as string | undefined);
  } catch (err) {
    const socket =
      err instanceof ConfigError && OPERATIONS[name].serviceOnly
        ? socketOfInvalidFile(request.values.config as string | undefined, process.env)
        : null;
    if (!socket || !(await pingAdmin(socket))) throw err;
    return forward(socket, name, request, io);
  }
  const socket = adminSocketPath(config);
  const remote = () => forward(socket!, name, request, io);
  if (socket && (await pingAdmin(socket))) return remote();
  const operation = OPERATIONS[name];
  if (operation.serviceOnly) {
    io.err(
      socket
        ? `no transit-api service answers on ${socket}: \`${name}\` acts on a running service`
        : `\`${name}\` acts on a running service through its admin socket, which this config disables ` +
            `(admin.enabled: false)`,
    );
    return 1;
  }
  let db: Db;
  try {
    db = await Db.open(config.db_path, {
      ...dbOptions(config.store),
      create: operation.createsDatabase?.(request) ?? false,
    });
  } catch (err) {
    if (err instanceof DatabaseMissingError) {
      const file = configFile(request.values.config as string | undefined);
      throw new UsageError(missingDatabaseMessage(name, config, socket, file));
    }
    if (!isLockError(err)) throw err;
    // a service opens the database before its socket: give one that is starting time to answer
    if (socket && (await waitForAdmin(socket, STARTING_SERVICE_WAIT_MS))) return remote();
    io.err(lockHint(config, socket, err));
    return 1;
  }
  try {
    return await executeOperation(operation, { db, config, progress: process.stderr }, request, io);
  } finally {
    await db.close();
  }
}
