import { parseArgs, type ParseArgsConfig } from 'node:util';

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
  run(args: { values: Record<string, string | boolean | undefined>; positionals: string[] }): Promise<number>;
}

export class UsageError extends Error {}

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
    'Global: --version, --help. Config: --config <file.json> or TRANSIT_CONFIG;',
    'env overrides TRANSIT_PORT and TRANSIT_DB. `transit-api <command> --help` for details.',
  ].join('\n');
}

export async function runCommand(cmd: Command, argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(commandHelp(cmd));
    return 0;
  }
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: cmd.options, allowPositionals: cmd.allowPositionals ?? false, strict: true });
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\n\n${commandHelp(cmd)}`);
  }
  return cmd.run({ values: parsed.values as Record<string, string | boolean | undefined>, positionals: parsed.positionals });
}
