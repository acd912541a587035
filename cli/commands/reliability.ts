import type { Command } from '../command.ts';
import { operate } from '../run-operation.ts';

export const reliabilityCommand: Command = {
  name: 'reliability',
  summary: 'Print scheduled, delivered and canceled trips of a route by day, week or period',
  usage:
    'reliability [--route <id>] [--mode bus|rail|streetcar] [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--group ' +
    'day|week|period] [--split] [--json] [--config <file>]',
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
    route: 'bus/streetcar route id or rail line id (default: every route of the mode)',
    mode: "bus, rail or streetcar (default: the route's or line's own; without --route, every mode with routes)",
    from: 'first service date (default: 27 days before --to)',
    to: 'last service date (default: today in the agency time zone)',
    group: 'day (default), week (ISO) or period (the whole range)',
    split: 'one row per service day type: weekday, saturday, sunday',
    json: 'the rollup as JSON: one document per mode, one line each',
    config: 'config file (JSON); TRANSIT_DB selects the database',
  },
  run: (args) => operate('reliability', args),
};
