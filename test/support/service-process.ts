// `transit-api serve` as a child process, and the CLI run beside it, as an operator does.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { Command } from '../../cli/command.ts';
import { UsageError } from '../../core/usage-error.ts';
import { backupCommand, snapshotCommand } from '../../cli/commands/copies.ts';
import { exportCommand } from '../../cli/commands/export.ts';
import { importGtfsCommand } from '../../cli/commands/import-gtfs.ts';
import { keysCommand } from '../../cli/commands/keys.ts';
import { reliabilityCommand } from '../../cli/commands/reliability.ts';
import { performanceCommand } from '../../cli/commands/performance.ts';
import { reloadCommand, statusCommand } from '../../cli/commands/status.ts';
import { absolutePaths, operate } from '../../cli/run-operation.ts';
import type { OperationName } from '../../admin/operations/dispatch.ts';
import { ConfigError } from '../../core/config.ts';
import { childEnv, cliArgv, REPO_ROOT, runCli } from './cli.ts';

export interface CliResult {
  code: number | null;
  out: string;
  err: string;
}

/**
 * Runs `transit-api …` to completion; with `shell`, runs that bash script instead, where
 * `"$0" "$@"` is the CLI (for pipes: `"$0" "$@" keys create … | head -1`).
 */
export async function cli(args: readonly string[], options: { shell?: string } = {}): Promise<CliResult> {
  const r = options.shell
    ? await runShell(options.shell)
    : await runCli([...args], { cwd: REPO_ROOT, timeoutMs: 90_000 });
  return { code: r.code, out: r.stdout, err: r.stderr };
}

function runShell(script: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', script, process.execPath, ...cliArgv()], {
      cwd: REPO_ROOT,
      env: childEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString('utf8');
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString('utf8');
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const COMMANDS: Record<OperationName, Command> = {
  keys: keysCommand,
  reliability: reliabilityCommand,
  performance: performanceCommand,
  export: exportCommand,
  'import-gtfs': importGtfsCommand,
  snapshot: snapshotCommand,
  backup: backupCommand,
  status: statusCommand,
  reload: reloadCommand,
};

/**
 * An operator command in this process, as the CLI runs it (its own argument parsing, the socket
 * or the file, the output it prints, the exit code main.ts gives errors). A child process costs
 * seconds of compiling on a busy machine; the ones that matter (pipes, exit codes) use `cli`.
 */
export async function op(name: OperationName, argv: readonly string[]): Promise<CliResult> {
  const out: string[] = [];
  const err: string[] = [];
  const io = {
    out: (l: string) => {
      out.push(`${l}\n`);
    },
    err: (l: string) => {
      err.push(`${l}\n`);
    },
  };
  const command = COMMANDS[name];
  let code: number;
  try {
    const { values, positionals } = parseArgs({
      args: [...argv],
      options: command.options,
      allowPositionals: command.allowPositionals ?? false,
      strict: true,
    });
    const request = { values: values as Record<string, string | boolean | undefined>, positionals };
    // as the commands do: file arguments are the caller's, made absolute for the service
    code = await operate(
      name,
      ['backup', 'snapshot', 'import-gtfs'].includes(name) ? absolutePaths(request) : request,
      io,
    );
  } catch (e) {
    if (!(e instanceof UsageError || e instanceof ConfigError)) throw e;
    io.err(e.message);
    code = 2;
  }
  return { code, out: out.join(''), err: err.join('') };
}

export interface ServiceProcess {
  child: ChildProcess;
  url: string;
  /** everything printed so far (stdout and stderr) */
  output(): string;
  /** resolves with the exit code once the process ends */
  exited: Promise<number | null>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Starts `serve --config <file>` and resolves once it listens and its admin socket is up (or,
 * with `ready`, once its output matches: an edge has no admin socket).
 */
export async function startServe(
  configPath: string,
  extraArgs: readonly string[] = [],
  options: { ready?: RegExp } = {},
): Promise<ServiceProcess> {
  const child = spawn(process.execPath, cliArgv('serve', '--config', configPath, ...extraArgs), {
    cwd: REPO_ROOT,
    env: childEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  const append = (c: Buffer) => {
    text += c.toString('utf8');
  };
  child.stdout!.on('data', append);
  child.stderr!.on('data', append);
  // a test ended by its timeout (SIGTERM from tap) skips its teardown: the service must not outlive it
  const orphan = () => child.kill('SIGKILL');
  const terminated = () => {
    orphan();
    process.kill(process.pid, 'SIGTERM'); // the default action, now that this listener is gone
  };
  process.once('exit', orphan);
  process.once('SIGTERM', terminated);
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => {
      process.off('exit', orphan);
      process.off('SIGTERM', terminated);
      resolve(code);
    }),
  );
  const deadline = Date.now() + 90_000;
  const ready = options.ready ?? /admin socket /;
  while (!ready.test(text)) {
    if (child.exitCode !== null) throw new Error(`serve exited ${child.exitCode} before listening:\n${text}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`serve did not start:\n${text}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  const url = /listening on (http:\/\/\S+)/.exec(text)![1]!;
  return {
    child,
    url,
    exited,
    output: () => text,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** A private folder under the system temp dir: short enough for a Unix socket path. */
export function tempDir(teardown: (fn: () => void) => void, prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export function writeJson(path: string, value: unknown): void {
  writeFileSync(path, JSON.stringify(value, null, 2));
}

export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined | null | false>,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
