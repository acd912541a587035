import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { Config } from '../core/config.ts';
import { defaultLogger, isLogLevel, LOG_LEVELS, type Logger } from '../core/logger.ts';
import { UsageError } from '../core/usage-error.ts';
import { print } from './output.ts';

// A command is data: its options, its help, and what it runs. `main.ts` holds the table.

export type OptionSpec = NonNullable<ParseArgsConfig['options']>;

export interface Command {
  name: string;
  summary: string;
  usage: string;
  options: OptionSpec;
  /** lines of help per option, in order */
  optionHelp: Record<string, string>;
  allowPositionals?: boolean;
  run(args: CommandArgs): Promise<number>;
}

export interface CommandArgs {
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
  /** the arguments in order (node:util parseArgs tokens), for commands whose positionals belong to the option before them */
  tokens: ArgToken[];
  /** the process's logger (stderr); what the command prints for its user goes through output.ts */
  log: Logger;
  /** call once the config is loaded: its log_level (or TRANSIT_LOG_LEVEL) applies unless --log-level was given */
  useConfig(config: Readonly<Pick<Config, 'log_level'>>): void;
}

/** Accepted by every command: --log-level beats TRANSIT_LOG_LEVEL, which beats the config's log_level. */
const GLOBAL_OPTIONS: OptionSpec = { 'log-level': { type: 'string' } };
const GLOBAL_HELP: Record<string, string> = {
  'log-level': `${LOG_LEVELS.join('|')} (default info; or TRANSIT_LOG_LEVEL, or log_level in the config)`,
};

export type ArgToken =
  | { kind: 'option'; name: string; value: string | undefined }
  | { kind: 'positional'; value: string }
  | { kind: 'option-terminator' };

export function commandHelp(cmd: Command): string {
  const lines = [`transit-api ${cmd.usage}`, '', cmd.summary];
  const names = Object.keys(cmd.options);
  if (names.length) {
    lines.push('', 'Options:');
    for (const name of names) {
      const spec = cmd.options[name]!;
      const flag = `--${name}${spec.type === 'string' ? ' <value>' : ''}`;
      lines.push(`  ${flag.padEnd(24)} ${cmd.optionHelp[name] ?? ''}`);
    }
  }
  for (const [name, help] of Object.entries(GLOBAL_HELP)) lines.push(`  ${`--${name} <value>`.padEnd(24)} ${help}`);
  lines.push(`  ${'--help'.padEnd(24)} show this help`);
  return lines.join('\n');
}

export function topHelp(commands: readonly Command[], version: string): string {
  return [
    `transit-api ${version}: transit alerts, realtime and reliability API`,
    '',
    'Usage: transit-api <command> [options]',
    '',
    'Commands:',
    ...commands.map((c) => `  ${c.name.padEnd(14)} ${c.summary}`),
    '',
    'Global: --version, --help, --log-level <level>. Config: --config <file.json> or TRANSIT_CONFIG;',
    'env overrides TRANSIT_PORT, TRANSIT_DB and TRANSIT_LOG_LEVEL. `transit-api <command> --help` for details.',
  ].join('\n');
}

export async function runCommand(cmd: Command, argv: string[], log: Logger = defaultLogger()): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    print(commandHelp(cmd));
    return 0;
  }
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: { ...cmd.options, ...GLOBAL_OPTIONS },
      allowPositionals: cmd.allowPositionals ?? false,
      strict: true,
      tokens: true,
    });
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\n\n${commandHelp(cmd)}`);
  }
  const { 'log-level': level, ...values } = parsed.values as Record<string, string | boolean | undefined>;
  if (level !== undefined) {
    if (!isLogLevel(level))
      throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join(', ')}, got ${JSON.stringify(level)}`);
    log.level = level;
  }
  return cmd.run({
    values,
    positionals: parsed.positionals,
    tokens: (parsed.tokens ?? []).map(
      (tok): ArgToken =>
        tok.kind === 'option'
          ? { kind: 'option', name: tok.name, value: tok.value }
          : tok.kind === 'positional'
            ? { kind: 'positional', value: tok.value }
            : { kind: 'option-terminator' },
    ),
    log,
    useConfig(config) {
      if (level === undefined) log.level = config.log_level;
    },
  });
}
