import { readFileSync } from 'node:fs';
import { assetPath } from '../core/assets.ts';
import { ConfigError } from '../core/config.ts';
import { createLogger, isLogLevel, setDefaultLogger } from '../core/logger.ts';
import { restrictUmask } from '../core/private-files.ts';
import { runCommand, topHelp, type Command } from './command.ts';
import { UsageError } from '../core/usage-error.ts';
import { backupCommand, snapshotCommand } from './commands/copies.ts';
import { exportCommand } from './commands/export.ts';
import { importGtfsCommand } from './commands/import-gtfs.ts';
import { initCommand } from './commands/init.ts';
import { ingestCommand } from './commands/ingest.ts';
import { keysCommand } from './commands/keys.ts';
import { performanceCommand } from './commands/performance.ts';
import { reliabilityCommand } from './commands/reliability.ts';
import { replayCommand } from './commands/replay.ts';
import { serveCommand } from './commands/serve.ts';
import { reloadCommand, statusCommand } from './commands/status.ts';
import { validateCommand } from './commands/validate.ts';
import { print, printError } from './output.ts';

const pkg = JSON.parse(readFileSync(assetPath('package.json'), 'utf8')) as { version: string };

const COMMANDS: readonly Command[] = [
  initCommand,
  serveCommand,
  statusCommand,
  reloadCommand,
  importGtfsCommand,
  ingestCommand,
  replayCommand,
  validateCommand,
  keysCommand,
  reliabilityCommand,
  performanceCommand,
  exportCommand,
  snapshotCommand,
  backupCommand,
];

// every file this process or DuckDB creates is its user's alone (docs/guides/operating.md, Files and permissions)
restrictUmask();
// one logger for the process; an invalid TRANSIT_LOG_LEVEL is reported by the config check
const envLevel = process.env.TRANSIT_LOG_LEVEL;
const log = createLogger({ level: isLogLevel(envLevel) ? envLevel : 'info' });
setDefaultLogger(log);
// a crash still ends the process as Node ends it; the log gets one structured line with the stack first
process.on('uncaughtExceptionMonitor', (err, origin) =>
  log.fatal({ err, origin }, 'uncaught exception: the process ends'),
);

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    print(topHelp(COMMANDS, pkg.version));
    return 0;
  }
  if (name === '--version' || name === '-v') {
    print(pkg.version);
    return 0;
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) throw new UsageError(`unknown command ${JSON.stringify(name)}\n\n${topHelp(COMMANDS, pkg.version)}`);
  return runCommand(command, rest, log);
}

// A reader that went away (`keys create … | head -1`, a closed pipe) is no failure: the work is
// done (the key is stored) and there is nobody left to tell. Later writes are dropped.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE' || err.code === 'ERR_STREAM_DESTROYED') return;
    throw err;
  });
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    if (err instanceof UsageError || err instanceof ConfigError) {
      // the person at the terminal made a mistake: the message, no stack
      printError(err.message);
      process.exitCode = 2;
    } else {
      log.fatal({ err }, err instanceof Error ? err.message : String(err));
      process.exitCode = 1;
    }
  },
);
