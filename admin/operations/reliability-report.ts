// The operator's reliability table (`transit-api reliability`): the same rollup the API serves,
// printed with formatRollupTable. The mode comes from the route or line id when not given: a
// rail agency asking for its line gets its line, not an empty bus table.
import type { Mode } from '../../core/types.ts';
import type { Db } from '../../store/db.ts';
import {
  reliabilityModes,
  retainedWindow,
  rollup,
  routeModes,
  type RollupGroup,
  type RollupQuery,
  type RollupResult,
} from '../../store/reliability/index.ts';
import { UsageError } from '../../core/usage-error.ts';
import { NO_SCHEDULE, type ServedIds } from '../../core/served-ids.ts';
import { formatRollupTable } from './reliability-table.ts';
import { asUsageError, reportRange, type ReportOutput, type ReportRangeOptions } from './rollup-report.ts';

export interface ReportOptions extends ReportRangeOptions {
  /**
   * absent: the mode of `route` (an id two modes share is refused: UsageError asking for --mode),
   * or without a route every mode that has routes
   */
  mode?: Mode;
  /** absent: every route of the mode with rows in the range */
  route?: string;
  group: RollupGroup;
  split: boolean;
  /** the rollup as JSON instead of the table: one document per mode, one line each */
  json?: boolean;
  /** `route` as the API serves it (core/served-ids.ts: `a:1` is route 1 of schedule a); default: as stored */
  ids?: ServedIds;
}

const what = (mode: Mode): string => (mode === 'rail' ? 'line' : 'route');

/**
 * The modes to report: the one asked for, else the route's own (looked up in the schedules and
 * retained history), else every mode with routes. A string is the error to print (exit 1).
 */
async function reportModes(db: Db, mode: Mode | undefined, route: string | undefined): Promise<Mode[] | string> {
  if (route === undefined) {
    if (mode !== undefined) return [mode];
    const modes = await reliabilityModes(db);
    return modes.length > 0
      ? modes
      : 'no route or line in any schedule nor in the retained history: import a schedule (transit-api import-gtfs) ' +
          'or ingest feeds first';
  }
  const modes = await routeModes(db, route);
  if (mode !== undefined) {
    if (modes.includes(mode)) return [mode];
    const name = `${mode} ${what(mode)} ${JSON.stringify(route)}`;
    return modes.length
      ? `no ${name}: it is a ${modes.map((m) => `${m} ${what(m)} (--mode ${m})`).join(' and a ')}`
      : `unknown ${name}: not in a schedule nor in the retained history`;
  }
  if (modes.length === 0) {
    return `unknown route or line ${JSON.stringify(route)}: not in a schedule nor in the retained history of any mode`;
  }
  if (modes.length > 1) {
    throw new UsageError(
      `${JSON.stringify(route)} is a ${modes.map((m) => `${m} ${what(m)}`).join(' and a ')}: say which with --mode ` +
        `${modes.join('|')}`,
    );
  }
  return modes;
}

/**
 * Every route of a mode when schedules share ids: each schedule's routes apart (one rollup per
 * schedule, and one for rows without one), named as the API serves them.
 */
async function everyRoute(
  ids: ServedIds,
  run: (scope: Partial<RollupQuery>) => Promise<RollupResult>,
): Promise<RollupResult> {
  let all: RollupResult | null = null;
  const rows: RollupResult['rows'] = [];
  for (const schedule of [...ids.schedules(), NO_SCHEDULE]) {
    const result = await run({ schedules: [schedule] });
    all ??= result;
    for (const row of result.rows)
      rows.push({ ...row, route_id: ids.serve(schedule === NO_SCHEDULE ? null : schedule, 'route', row.route_id) });
  }
  // by route as served, each route's rows in their order
  const order = new Map<string, number>();
  for (const id of [...new Set(rows.map((r) => r.route_id))].sort()) order.set(id, order.size);
  return {
    ...all!,
    rows: rows
      .map((r, i) => ({ r, i }))
      .sort((a, b) => order.get(a.r.route_id)! - order.get(b.r.route_id)! || a.i - b.i)
      .map((x) => x.r),
  };
}

/**
 * Prints the table (one per mode when no mode or route narrows it); 1 for an unknown route,
 * UsageError for a bad range or an id several modes share.
 */
export async function printReliabilityReport(db: Db, options: ReportOptions, io: ReportOutput): Promise<number> {
  const served = options.route;
  const stored = served === undefined ? undefined : options.ids?.resolve('route', served);
  const route = stored?.id ?? served;
  const modes = await reportModes(db, options.mode, route);
  if (typeof modes === 'string') {
    io.err(modes);
    return 1;
  }
  const { timezone, now, from, to } = await reportRange(db, options);
  const results: RollupResult[] = [];
  try {
    for (const mode of modes) {
      // as the API: the rolling figures do not reach into days before the mode's history began
      const history = (await retainedWindow(db, mode))?.earliest;
      const run = (scope: Partial<RollupQuery>) =>
        rollup(
          db,
          { mode, group: options.group, from, to, split: options.split, ...scope },
          {
            timezone,
            serviceDayEnd: options.settings.service_day_end,
            now,
            ...(history !== undefined ? { historyFrom: history } : {}),
          },
        );
      if (route !== undefined) results.push(await run({ routeId: route, schedules: stored?.schedules ?? null }));
      else if (!options.ids?.scoped) results.push(await run({}));
      else results.push(await everyRoute(options.ids, run));
    }
  } catch (err) {
    throw asUsageError(err);
  }
  // the route as it was asked for, as the API names it
  if (served !== undefined)
    for (const r of results) {
      r.route_id = served;
      for (const row of r.rows) row.route_id = served;
    }
  // every mode was asked for: the modes without a row in the range would only print "(no rows)"
  const shown =
    results.length > 1 && results.some((r) => r.rows.length > 0) ? results.filter((r) => r.rows.length > 0) : results;
  io.out(
    options.json
      ? shown.map((r) => `${JSON.stringify(r)}\n`).join('')
      : shown.map((r) => formatRollupTable(r)).join('\n'),
  );
  return 0;
}
