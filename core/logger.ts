// The one logger: pino, JSON lines on stderr, or pino-pretty when stderr is a terminal. Components
// take a `log` option (a Logger) and name themselves with child({ component }); tests pass a
// silent or a capturing logger (test/support/logs.ts). Output meant for the user of a CLI command
// (tables, keys, summaries) is not logging: it goes to stdout through cli/output.ts.
import pino, { type DestinationStream, type Logger } from 'pino';
import pretty from 'pino-pretty';

export type { Logger };

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export function isLogLevel(value: unknown): value is LogLevel {
  return typeof value === 'string' && (LOG_LEVELS as readonly string[]).includes(value);
}

export interface LoggerOptions {
  level?: LogLevel;
  /** default: pretty when stderr is a terminal, JSON lines otherwise */
  pretty?: boolean;
  /** where JSON lines go instead of stderr (tests capture them) */
  destination?: DestinationStream;
}

const OPTIONS: pino.LoggerOptions = {
  // ISO times: log files are read by people as often as by machines
  timestamp: pino.stdTimeFunctions.isoTime,
  // `err` keeps type, message, stack and cause (pino's default serializer, named for clarity)
  serializers: { err: pino.stdSerializers.err },
};

export function createLogger(options: LoggerOptions = {}): Logger {
  const opts: pino.LoggerOptions = { ...OPTIONS, level: options.level ?? 'info' };
  if (options.destination) return pino(opts, options.destination);
  if (options.pretty ?? process.stderr.isTTY === true) {
    // in-process and synchronous, not a worker-thread transport: a bundled runtime cannot resolve
    // a transport's module by name, and a crash must not lose the last lines
    return pino(
      opts,
      pretty({
        sync: true,
        destination: 2,
        colorize: process.stderr.isTTY === true,
        translateTime: 'SYS:HH:MM:ss.l',
        singleLine: true,
        ignore: 'pid,hostname,component',
        messageFormat: '{if component}{component}: {end}{msg}',
      }),
    );
  }
  return pino(opts, pino.destination({ dest: 2, sync: true }));
}

let fallback: Logger | null = null;

/**
 * For components built without a logger (scripts, benches, tests that do not care): one
 * process-wide logger, so nothing is lost and nothing is printed twice. The CLI installs its own
 * with setDefaultLogger, so --log-level reaches them too.
 */
export function defaultLogger(): Logger {
  fallback ??= createLogger({
    level: isLogLevel(process.env.TRANSIT_LOG_LEVEL) ? process.env.TRANSIT_LOG_LEVEL : 'info',
  });
  return fallback;
}

export function setDefaultLogger(log: Logger): void {
  fallback = log;
}

/** The child logger a component writes through: every line carries `component`. */
export function componentLogger(log: Logger | undefined, component: string): Logger {
  return (log ?? defaultLogger()).child({ component });
}
