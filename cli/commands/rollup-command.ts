import { ROLLUP_GROUPS } from '../../store/rollup-input.ts';
import type { Command } from '../command.ts';
import { operate } from '../run-operation.ts';

/**
 * `reliability` and `performance`: a route's rollup over a date range, with the same options;
 * each says what its route, mode and JSON mean.
 */
export function rollupCommand(
  name: 'reliability' | 'performance',
  summary: string,
  words: { route: string; mode: string; json: string; routeUsage: string },
): Command {
  return {
    name,
    summary,
    usage:
      `${name} ${words.routeUsage} [--mode bus|rail|streetcar] [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--group ` +
      `${ROLLUP_GROUPS.join('|')}] [--split] [--json] [--config <file>]`,
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
      route: words.route,
      mode: words.mode,
      from: 'first service date (default: 27 days before --to)',
      to: 'last service date (default: today in the agency time zone)',
      group: 'day (default), week (ISO) or period (the whole range)',
      split: 'one row per service day type: weekday, saturday, sunday',
      json: words.json,
      config: 'config file (JSON); TRANSIT_DB selects the database',
    },
    run: (args) => operate(name, args),
  };
}
