// A logger that keeps its JSON lines in memory, for tests that assert what was logged.
import { createLogger, type Logger, type LogLevel } from '../../core/logger.ts';

export interface LogLine {
  level: number;
  msg: string;
  component?: string;
  err?: { type: string; message: string; stack: string };
  [field: string]: unknown;
}

export interface CapturedLogs {
  logger: Logger;
  lines: LogLine[];
  /** messages, optionally of one component */
  messages(component?: string): string[];
}

export const LEVELS: Record<Exclude<LogLevel, 'silent'>, number> = {
  trace: 10,
  debug: 20,
  info: 30,
  warn: 40,
  error: 50,
  fatal: 60,
};

/** A logger that drops everything. */
export const silentLogger: Logger = createLogger({ level: 'silent', destination: { write: () => undefined } });

export function captureLogs(level: LogLevel = 'debug'): CapturedLogs {
  const lines: LogLine[] = [];
  const logger = createLogger({
    level,
    destination: { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) },
  });
  return {
    logger,
    lines,
    messages: (component) =>
      lines.filter((l) => component === undefined || l.component === component).map((l) => l.msg),
  };
}

/** A logger that hands each line (warn and above by default) to `each`, for tests that collect messages. */
export function logInto(each: (msg: string, line: LogLine) => void, level: LogLevel = 'warn'): Logger {
  return createLogger({
    level,
    destination: {
      write: (text: string) => {
        const line = JSON.parse(text) as LogLine;
        each(line.msg, line);
      },
    },
  });
}
