import type { Command } from '../command.ts';
import { operate } from '../run-operation.ts';

export const performanceCommand: Command = {
  name: 'performance',
  summary: 'Print how a route ran by day, week or period: on time, headways, bunching, travel, dwell, predictions',
  usage:
    'performance --route <id> [--mode bus|rail|streetcar] [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--group day|week|period] [--split] [--json] [--config <file>]',
  options: {
    route: { type: 'string' },
    mode: { type: 'string' },
    from: { type: 'string' },
    to: { type: 'string' },
    group: { type: 'string' },
    split: { type: 'boolean' },
    json: { type: 'boolean' },
    config: { type: 'string' },
  },
  optionHelp: {
    route: 'bus/streetcar route id or rail line id',
    mode: 'bus (default), rail or streetcar',
    from: 'first service date (default: 27 days before --to)',
    to: 'last service date (default: today in the agency time zone)',
    group: 'day (default), week (ISO) or period (the whole range)',
    split: 'one row per service day type: weekday, saturday, sunday',
    json: 'the measures as one JSON document',
    config: 'config file (JSON); TRANSIT_DB selects the database',
  },
  run: (args) => operate('performance', args),
};
