// The transit-api CLI as a child process, run from the sources: tests of what a command does see
// the code under test, never a dist/ bundle built from older sources. Under `npm test` that is
// the bundle scripts/test.mjs builds from the sources with the test files at the start of the run
// (TRANSIT_TEST_CLI: plain node, about a CPU-second less per child than loading the sources
// through tsx); otherwise (`npx tap x.test.ts`) the sources through tsx. The built runtime itself
// (bin/transit-api.js → dist/) is tested once, in test/built-runtime.test.ts.
import { spawn, type SpawnOptions } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const CLI_SOURCE = join(REPO_ROOT, 'cli', 'main.ts');

/** node's arguments for `transit-api <args>` from the sources (absolute paths: any cwd will do). */
export function cliArgv(...args: string[]): string[] {
  const bundle = process.env.TRANSIT_TEST_CLI;
  if (bundle) return ['--enable-source-maps', bundle, ...args];
  return ['--import', import.meta.resolve('tsx'), CLI_SOURCE, ...args];
}

/** An environment without what the test runner set for itself (coverage, loader flags). */
export function childEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, TRANSIT_CONFIG: '', ...extra };
  delete env.NODE_OPTIONS;
  return env;
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs node with `argv` to its end (killed after `timeoutMs`). */
export function runNode(argv: string[], options: SpawnOptions & { timeoutMs?: number } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, argv, { env: childEnv(), ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** Runs `transit-api <args>` from the sources to its end. */
export function runCli(args: string[], options: SpawnOptions & { timeoutMs?: number } = {}): Promise<CliResult> {
  return runNode(cliArgv(...args), options);
}
