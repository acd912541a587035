import type { Mode } from '../../core/types.ts';
import type { Db } from '../../store/db.ts';
import { formatPerformanceTable } from './performance-table.ts';
import { performanceRollup, type PerformanceSettings } from '../../store/performance/index.ts';
import { isKnownRoute } from '../../store/reliability/index.ts';
import type { ServedIds } from '../../core/served-ids.ts';
import { asUsageError, reportRange, type ReportOutput, type ReportRangeOptions } from './rollup-report.ts';
import type { RollupGroup } from '../../store/rollup-input.ts';

export interface PerformanceReportOptions extends ReportRangeOptions {
  mode: Mode;
  route: string;
  group: RollupGroup;
  split: boolean;
  json?: boolean;
  /** config.performance */
  performance: PerformanceSettings;
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
  const { timezone, now, from, to } = await reportRange(db, options);
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
    throw asUsageError(err);
  }
}
