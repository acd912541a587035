// Performance measures per bus route, rail line and streetcar route from stop_events: on time,
// headways and bunching, excess wait, travel and dwell times, prediction accuracy, by day, ISO
// week or the whole period; the same parameters and retained window as reliability.
import { z } from 'zod';
import { ApiError, invalidParameter } from '../../core/errors.ts';
import { wallClock } from '../../core/dates.ts';
import type { Mode } from '../../core/types.ts';
import { ServedIds } from '../../core/served-ids.ts';
import type { Db } from '../../store/db.ts';
import {
  PERFORMANCE_GROUPS,
  PerformanceInputError,
  performanceRollup,
  type PerformanceResult,
  type PerformanceSettings,
} from '../../store/performance/index.ts';
import {
  isKnownRoute,
  reliabilityReadVersion,
  resolveTimezone,
  retainedWindow,
} from '../../store/reliability/index.ts';
import { AS_SERVED, dateParam, enumParam, idValue } from '../params.ts';
import { RetainedWindows } from '../read/retained-windows.ts';
import { defineRoute } from '../route.ts';
import type { RequestContext, RouteDef } from '../types.ts';
import { PREFIX } from './deps.ts';
import { DEFAULT_RANGE_DAYS, requestWindow, resolveRange } from './reliability-range.ts';
import type { ApiRetainedWindow } from './reliability-schemas.ts';
import { PerformanceRollupSchema, type ApiPerformanceRollup } from './performance-schemas.ts';

export interface PerformanceRouteDeps {
  db: Db;
  /** config.reliability: the agency time zone and when a service day ends */
  settings: { readonly timezone?: string | undefined; readonly service_day_end: string };
  /** config.performance */
  performance: PerformanceSettings;
  /** the served ids (core/served-ids.ts): a route id in the path is read back to the stored one; default: as stored */
  ids?: () => ServedIds;
  /** how long a retained window, and an answer, are reused; default 10 s, 0 answers afresh */
  windowMaxAgeMs?: number;
}

const TITLES: Record<Mode, string> = { rail: 'Rail', bus: 'Bus', streetcar: 'Streetcar' };
const DEFAULT_WINDOW_MAX_AGE_MS = 10_000;
const ERRORS = ['not_found', 'no_retained_rows', 'outside_retention'] as const;

const query = z.object({
  group: enumParam(
    PERFORMANCE_GROUPS,
    '`day` (default), ISO `week` (Monday to Sunday), or `period`: one row for the whole from..to.',
  ).optional(),
  from: dateParam(
    `First service date, YYYY-MM-DD, inside the retained window. Default: ${DEFAULT_RANGE_DAYS - 1} days before ` +
      `\`to\`, or the window's first day when later.`,
  ).optional(),
  to: dateParam(
    'Last service date, YYYY-MM-DD, inside the retained window. Default: today in the agency time zone.',
  ).optional(),
  split: enumParam(
    ['service_day'],
    '`service_day`: one row per service day type (weekday, saturday, sunday) in each group.',
  ).optional(),
});

type Query = z.output<typeof query>;

/** `routeId` as served: the rows' stored id is replaced by it. */
function toApi(result: PerformanceResult, routeId: string, window: ApiRetainedWindow): ApiPerformanceRollup {
  return {
    data: result.rows.map((r) => ({
      id: r.service_day === 'all' ? `${routeId}:${r.period}` : `${routeId}:${r.period}:${r.service_day}`,
      ...r,
      route_id: routeId,
    })),
    meta: {
      mode: result.mode,
      route_id: routeId,
      group: result.group,
      from: result.from,
      to: result.to,
      split: result.split ? 'service_day' : 'none',
      timezone: result.timezone,
      complete_through: result.complete_through,
      retained_window: window,
      on_time_window_s: result.on_time_window_s,
      min_observations: result.min_observations,
      days_without_observations: result.days_without_observations,
      notes: result.notes,
    },
  };
}

async function answer(
  deps: PerformanceRouteDeps,
  windows: RetainedWindows,
  mode: Mode,
  routeId: string,
  parameter: string,
  ctx: RequestContext<Query>,
): Promise<ApiPerformanceRollup> {
  const what = mode === 'rail' ? 'line' : 'route';
  // `a:1` is route 1 of schedule a; the rows of those schedules only
  const stored = (deps.ids?.() ?? ServedIds.NONE).resolve('route', routeId);
  if (!(await isKnownRoute(deps.db, mode, stored.id, stored.schedules))) {
    throw new ApiError('not_found', `Unknown ${what} ${JSON.stringify(routeId)} for ${mode}.`, {
      errors: [{ parameter, detail: `unknown ${what}` }],
    });
  }
  const timezone = await resolveTimezone(deps.db, deps.settings.timezone);
  const now = new Date(ctx.nowMs);
  const today = wallClock(now, timezone).date;
  const window = requestWindow(mode, await windows.get(mode), today);
  if (!window) {
    throw new ApiError(
      'no_retained_rows',
      `No ${mode} trips are retained yet: ${mode} performance starts with the first service day a ${mode} ` +
        `trip is recorded.`,
    );
  }
  const range = resolveRange(mode, { from: ctx.query.from, to: ctx.query.to }, window, today);
  try {
    const result = await performanceRollup(
      deps.db,
      {
        mode,
        routeId: stored.id,
        schedules: stored.schedules,
        group: ctx.query.group ?? 'day',
        from: range.from,
        to: range.to,
        split: ctx.query.split === 'service_day',
      },
      deps.performance,
      { timezone, serviceDayEnd: deps.settings.service_day_end, now },
    );
    return toApi(result, routeId, window);
  } catch (err) {
    if (!(err instanceof PerformanceInputError)) throw err;
    const detail = err.message.slice(err.parameter.length + 2);
    throw invalidParameter(err.parameter === 'route_id' ? parameter : err.parameter, detail);
  }
}

function performanceRoute(deps: PerformanceRouteDeps, windows: RetainedWindows, mode: Mode): RouteDef {
  // cached until a day is finalized, and at most windowMaxAgeMs: days not finalized move with
  // every poll, and are recomputed from stop_events at most that often
  const maxAgeMs = deps.windowMaxAgeMs ?? DEFAULT_WINDOW_MAX_AGE_MS;
  const version = () => `${reliabilityReadVersion(deps.db)}.${deps.ids?.().generation ?? 0}`;
  const cache = maxAgeMs > 0 ? { cache: { version, ttlMs: maxAgeMs } } : {};
  const parameter = mode === 'rail' ? 'line' : 'route_id';
  const subject = mode === 'rail' ? 'rail line' : `${mode} route`;
  return defineRoute({
    id: `get${TITLES[mode]}Performance`,
    method: 'GET',
    path: `${PREFIX}/${mode}/{${parameter}}/performance`,
    summary: `Performance of one ${subject}`,
    description:
      `How the ${subject} ran, by day, ISO week or the whole period, from its stop events (each train or bus at each ` +
      'stop it served, with actual and scheduled times): on-time, early and late shares of arrivals, median headway ' +
      'beside the scheduled one, headways on time (0.75–1.25 × scheduled) and bunched (≤ 0.5 ×), excess wait, ' +
      'travel time of complete trips (median and 90th percentile), median dwell, and prediction accuracy by horizon. ' +
      'A figure from fewer than `meta.min_observations` observations is null and `notes` says why (never 0). ' +
      'Days are final with reliability (`final`); today and days not finalized are computed live. Parameters, ' +
      `retained window and errors as the reliability endpoint's; 404 not_found when no schedule nor history knows ` +
      `the ${mode === 'rail' ? 'line' : 'route'}.`,
    tags: [TITLES[mode], 'Performance'],
    auth: 'key',
    meter: 'request',
    sse: true,
    ...cache,
    errors: ERRORS,
    params: z.object({
      [parameter]: idValue(
        `${mode === 'rail' ? 'Rail line id.' : `${TITLES[mode]} route id.`} ${AS_SERVED}`,
        mode === 'rail' ? 'Red' : mode === 'bus' ? '39' : 'E',
      ),
    }),
    query,
    response: PerformanceRollupSchema,
    handler(ctx) {
      const routeId = (ctx.params as Record<string, string>)[parameter]!;
      return answer(deps, windows, mode, routeId, parameter, ctx);
    },
  });
}

/** GET /api/v1/{rail/{line},bus/{route_id},streetcar/{route_id}}/performance. */
export function performanceRoutes(deps: PerformanceRouteDeps): RouteDef[] {
  const windows = new RetainedWindows(
    (mode) => retainedWindow(deps.db, mode),
    deps.windowMaxAgeMs ?? DEFAULT_WINDOW_MAX_AGE_MS,
  );
  return [
    performanceRoute(deps, windows, 'rail'),
    performanceRoute(deps, windows, 'bus'),
    performanceRoute(deps, windows, 'streetcar'),
  ];
}
