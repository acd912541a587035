// The admin channel's wire format: HTTP/1.1 with JSON bodies over the service's Unix socket.
// Operator commands run inside the service with its database and answer with what the command
// printed and its exit code, so a command gives the same output whether the service runs or not.

export const PING_PATH = '/v1/ping';
export const COMMAND_PATH = '/v1/commands/';
export const METRICS_PATH = '/metrics';

/** The parsed command line, as node:util parseArgs returns it. */
export interface CommandRequest {
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
}

export interface CommandResult {
  exit_code: number;
  stdout: string;
  stderr: string;
}

export interface PingAnswer {
  pid: number;
  started_at: string;
  db_path: string;
}

/** Where a command prints, line by line (a line has no trailing newline). */
export interface CommandIO {
  out(line: string): void;
  err(line: string): void;
}

/** An IO that keeps what is printed, for the answer over the socket. */
export function capturedIO(): CommandIO & { result(exitCode: number): CommandResult } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return {
    out: (line) => {
      stdout.push(`${line}\n`);
    },
    err: (line) => {
      stderr.push(`${line}\n`);
    },
    result: (exitCode) => ({ exit_code: exitCode, stdout: stdout.join(''), stderr: stderr.join('') }),
  };
}
