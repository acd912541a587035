import { readFileSync } from 'node:fs';
import { assetPath } from '../core/assets.ts';
import { ConfigError } from '../core/config.ts';
import { runCommand, topHelp, UsageError, type Command } from './cli.ts';
import { exportCommand } from './commands/export.ts';
import { importGtfsCommand } from './commands/import-gtfs.ts';
import { ingestCommand } from './commands/ingest.ts';
import { keysCommand } from './commands/keys.ts';
import { reliabilityCommand } from './commands/reliability.ts';
import { serveCommand } from './commands/serve.ts';

const pkg = JSON.parse(readFileSync(assetPath('package.json'), 'utf8')) as { version: string };

const COMMANDS: readonly Command[] = [serveCommand, importGtfsCommand, ingestCommand, keysCommand, reliabilityCommand, exportCommand];

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    console.log(topHelp(COMMANDS, pkg.version));
    return 0;
  }
  if (name === '--version' || name === '-v') {
    console.log(pkg.version);
    return 0;
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) throw new UsageError(`unknown command ${JSON.stringify(name)}\n\n${topHelp(COMMANDS, pkg.version)}`);
  return runCommand(command, rest);
}

main(process.argv.slice(2)).then(
  (code) => { process.exitCode = code; },
  (err: unknown) => {
    if (err instanceof UsageError || err instanceof ConfigError) {
      console.error(err.message);
      process.exitCode = 2;
    } else {
      console.error(err instanceof Error ? err.message : err);
      if (process.env.TRANSIT_DEBUG) console.error(err);
      process.exitCode = 1;
    }
  },
);
