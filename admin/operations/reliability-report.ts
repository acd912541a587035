// The operator's reliability table (`transit-api reliability`): the same rollup the API serves,
// printed with formatRollupTable.
import type { Mode } from '../../core/types.ts';
import type { Db } from '../../store/db.ts';
import { wallClock } from '../../core/dates.ts';
import {
  addDays,
  isKnownRoute,
  isServiceDate,
  resolveTimezone,
  rollup,
  RollupInputError,
  type RollupGroup,
} from '../../store/reliability/index.ts';
import { UsageError } from '../../core/usage-error.ts';
import { formatRollupTable } from './reliability-table.ts';

export const DEFAULT_REPORT_DAYS = 28;

export interface ReportOptions {
  mode: Mode;
  /** absent: every route of the mode with rows in the range */
  route?: string;
  group: RollupGroup;
  /** default: DEFAULT_REPORT_DAYS - 1 days before `to` */
  from?: string;
  /** default: today in the agency time zone */
  to?: string;
  split: boolean;
  /** the rollup as one JSON document instead of the table */
  json?: boolean;
  /** config.reliability */
  settings: { readonly timezone?: string | undefined; readonly service_day_end: string };
  now?: Date;
}

export interface ReportOutput {
  out(text: string): void;
  err(line: string): void;
}

/** Prints the table; 1 for an unknown route, UsageError for a bad range. */
export async function printReliabilityReport(db: Db, options: ReportOptions, io: ReportOutput): Promise<number> {
  const { mode, route } = options;
  if (route !== undefined && !(await isKnownRoute(db, mode, route))) {
    io.err(
      `unknown ${mode} ${mode === 'rail' ? 'line' : 'route'} ${JSON.stringify(route)}: not in a schedule nor in the retained history`,
    );
    return 1;
  }
  const timezone = await resolveTimezone(db, options.settings.timezone);
  const now = options.now ?? new Date();
  const to = options.to ?? wallClock(now, timezone).date;
  if (!isServiceDate(to)) throw new UsageError('--to must be a date as YYYY-MM-DD');
  const from = options.from ?? addDays(to, -(DEFAULT_REPORT_DAYS - 1));
  try {
    const result = await rollup(
      db,
      {
        mode,
        group: options.group,
        from,
        to,
        split: options.split,
        ...(route !== undefined ? { routeId: route } : {}),
      },
      { timezone, serviceDayEnd: options.settings.service_day_end, now },
    );
    io.out(options.json ? `${JSON.stringify(result)}\n` : formatRollupTable(result));
    return 0;
  } catch (err) {
    if (!(err instanceof RollupInputError)) throw err;
    const option = err.parameter === 'route_id' ? 'route' : err.parameter;
    throw new UsageError(`--${option}: ${err.message.slice(err.parameter.length + 2)}`);
  }
}
