// How the CLI runs an operator command: through the admin socket when a service answers there
// (it holds the database), else on the database file itself. Same output and exit code either way.
import { resolve } from 'node:path';
import { pingAdmin, runAdminCommand } from '../admin/client.ts';
import type { CommandIO, CommandRequest } from '../admin/protocol.ts';
import { adminSocketPath, loadConfig, type Config } from '../core/config.ts';
import { Db, dbOptions } from '../store/db.ts';
import { executeOperation, OPERATIONS, type OperationName } from './operations/index.ts';

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
  out: (line) => { process.stdout.write(`${line}\n`); },
  err: (line) => { process.stderr.write(`${line}\n`); },
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
  return `the database ${config.db_path} is held by ${holder} and ${where}. `
    + 'If that process is a service started with another config, pass the same --config (or TRANSIT_CONFIG); '
    + 'otherwise stop it and try again.';
}

async function waitForAdmin(socket: string, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await pingAdmin(socket, 1_000)) return true;
    await new Promise((r) => setTimeout(r, 250));
  }
  return false;
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

export async function operate(name: OperationName, request: CommandRequest, io: CommandIO = STDIO): Promise<number> {
  // mistakes in the arguments are reported before any database or service is looked for
  OPERATIONS[name].check?.(request);
  const config = loadConfig(request.values.config as string | undefined);
  const socket = adminSocketPath(config);
  const remote = async (): Promise<number> => {
    const result = await runAdminCommand(socket!, name, forwarded(request));
    replay(result.stdout, io.out);
    replay(result.stderr, io.err);
    return result.exit_code;
  };
  if (socket && await pingAdmin(socket)) return remote();
  const operation = OPERATIONS[name];
  if (operation.serviceOnly) {
    io.err(socket
      ? `no transit-api service answers on ${socket}: \`${name}\` acts on a running service`
      : `\`${name}\` acts on a running service through its admin socket, which this config disables (admin.enabled: false)`);
    return 1;
  }
  let db: Db;
  try {
    db = await Db.open(config.db_path, dbOptions(config.store));
  } catch (err) {
    if (!isLockError(err)) throw err;
    // a service opens the database before its socket: give one that is starting time to answer
    if (socket && await waitForAdmin(socket, STARTING_SERVICE_WAIT_MS)) return remote();
    io.err(lockHint(config, socket, err));
    return 1;
  }
  try {
    return await executeOperation(operation, { db, config, progress: process.stderr }, request, io);
  } finally {
    await db.close();
  }
}
