// The operator's performance table (`transit-api performance`): the same measures the API
// serves, printed with formatPerformanceTable.
import { wallClock } from '../../core/dates.ts';
import type { Mode } from '../../core/types.ts';
import type { Db } from '../../store/db.ts';
import { formatPerformanceTable } from './performance-table.ts';
import {
  PerformanceInputError,
  performanceRollup,
  type PerformanceGroup,
  type PerformanceSettings,
} from '../../store/performance/index.ts';
import { addDays, isKnownRoute, isServiceDate, resolveTimezone } from '../../store/reliability/index.ts';
import { UsageError } from '../../core/usage-error.ts';
import type { ServedIds } from '../../core/served-ids.ts';
import { DEFAULT_REPORT_DAYS, type ReportOutput } from './reliability-report.ts';

export interface PerformanceReportOptions {
  mode: Mode;
  route: string;
  group: PerformanceGroup;
  from?: string;
  to?: string;
  split: boolean;
  json?: boolean;
  /** config.reliability */
  settings: { readonly timezone?: string | undefined; readonly service_day_end: string };
  /** config.performance */
  performance: PerformanceSettings;
  now?: Date;
  /** `route` as the API serves it (core/served-ids.ts); default: as stored */
  ids?: ServedIds;
}

/** Prints the table; 1 for an unknown route, UsageError for a bad range. */
export async function printPerformanceReport(
  db: Db,
  options: PerformanceReportOptions,
  io: ReportOutput,
): Promise<number> {
  const { mode, route } = options;
  const stored = options.ids?.resolve('route', route) ?? { id: route, schedules: null };
  if (!(await isKnownRoute(db, mode, stored.id, stored.schedules))) {
    io.err(
      `unknown ${mode} ${mode === 'rail' ? 'line' : 'route'} ${JSON.stringify(route)}: not in a schedule nor in the ` +
        `retained history`,
    );
    return 1;
  }
  const timezone = await resolveTimezone(db, options.settings.timezone);
  const now = options.now ?? new Date();
  const to = options.to ?? wallClock(now, timezone).date;
  if (!isServiceDate(to)) throw new UsageError('--to must be a date as YYYY-MM-DD');
  const from = options.from ?? addDays(to, -(DEFAULT_REPORT_DAYS - 1));
  try {
    const result = await performanceRollup(
      db,
      { mode, routeId: stored.id, schedules: stored.schedules, group: options.group, from, to, split: options.split },
      options.performance,
      { timezone, serviceDayEnd: options.settings.service_day_end, now },
    );
    result.route_id = route;
    for (const row of result.rows) row.route_id = route;
    io.out(options.json ? `${JSON.stringify(result)}\n` : formatPerformanceTable(result));
    return 0;
  } catch (err) {
    if (!(err instanceof PerformanceInputError)) throw err;
    const option = err.parameter === 'route_id' ? 'route' : err.parameter;
    throw new UsageError(`--${option}: ${err.message.slice(err.parameter.length + 2)}`);
  }
}
