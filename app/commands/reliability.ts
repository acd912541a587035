import { loadConfig } from '../../core/config.ts';
import { MODES, type Mode } from '../../core/types.ts';
import type { Command } from '../cli.ts';
import { UsageError } from '../cli.ts';

const GROUPS = ['day', 'week', 'period'] as const;

function oneOf<T extends string>(name: string, value: string | undefined, allowed: readonly T[], fallback: T): T {
  if (value === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(value)) throw new UsageError(`--${name} must be one of ${allowed.join(', ')}`);
  return value as T;
}

export const reliabilityCommand: Command = {
  name: 'reliability',
  summary: 'Print scheduled, delivered and canceled trips of a route by day, week or period',
  usage: 'reliability [--route <id>] [--mode bus|rail|streetcar] [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--group day|week|period] [--split] [--config <file>]',
  options: {
    route: { type: 'string' }, mode: { type: 'string' }, from: { type: 'string' }, to: { type: 'string' },
    group: { type: 'string' }, split: { type: 'boolean' }, config: { type: 'string' },
  },
  optionHelp: {
    route: 'bus/streetcar route id or rail line id (default: every route of the mode)',
    mode: 'bus (default), rail or streetcar',
    from: 'first service date (default: 27 days before --to)',
    to: 'last service date (default: today in the agency time zone)',
    group: 'day (default), week (ISO) or period (the whole range)',
    split: 'one row per service day type: weekday, saturday, sunday',
    config: 'config file (JSON); TRANSIT_DB selects the database',
  },
  async run({ values }) {
    const mode = oneOf<Mode>('mode', values.mode as string | undefined, MODES, 'bus');
    const group = oneOf('group', values.group as string | undefined, GROUPS, 'day');
    const config = loadConfig(values.config as string | undefined);
    const [{ Db, dbOptions }, { printReliabilityReport }] = await Promise.all([import('../../store/db.ts'), import('../reliability-report.ts')]);
    const db = await Db.open(config.db_path, dbOptions(config.store));
    try {
      return await printReliabilityReport(db, {
        mode, group, split: values.split === true, settings: config.reliability,
        ...(values.route !== undefined ? { route: values.route as string } : {}),
        ...(values.from !== undefined ? { from: values.from as string } : {}),
        ...(values.to !== undefined ? { to: values.to as string } : {}),
      }, { out: (text) => process.stdout.write(text), err: (line) => console.error(line) });
    } finally {
      await db.close();
    }
  },
};
