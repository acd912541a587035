// Reliability rollups per bus route, rail line and streetcar route: scheduled versus delivered
// trips by day, ISO week or the whole period, from the store's rollup queries.
import { z } from 'zod';
import { ApiError, invalidParameter } from '../../core/errors.ts';
import type { Mode } from '../../core/types.ts';
import { ServedIds } from '../../core/served-ids.ts';
import type { Db } from '../../store/db.ts';
import { wallClock } from '../../core/dates.ts';
import {
  isKnownRoute,
  reliabilityReadVersion,
  resolveTimezone,
  retainedWindow,
  rollup,
  ROLLUP_GROUPS,
  RollupInputError,
  type RollupResult,
} from '../../store/reliability/index.ts';
import { AS_SERVED, dateParam, enumParam, idValue } from '../params.ts';
import { RetainedWindows } from '../read/retained-windows.ts';
import { defineRoute } from '../route.ts';
import type { RequestContext, RouteDef } from '../types.ts';
import { PREFIX } from './deps.ts';
import { DEFAULT_RANGE_DAYS, requestWindow, resolveRange } from './reliability-range.ts';
import { ReliabilityRollupSchema, type ApiReliabilityRollup, type ApiRetainedWindow } from './reliability-schemas.ts';

export interface ReliabilityRouteDeps {
  db: Db;
  /** config.reliability: the agency time zone (absent: the newest schedule's) and when a service day ends */
  settings: { readonly timezone?: string | undefined; readonly service_day_end: string };
  /** the served ids (core/served-ids.ts): a route id in the path is read back to the stored one; default: as stored */
  ids?: () => ServedIds;
  /**
   * how long a mode's retained window, and an answer, are reused; default 10 s, 0 reloads the
   * window and answers afresh on every request
   */
  windowMaxAgeMs?: number;
}

const TITLES: Record<Mode, string> = { rail: 'Rail', bus: 'Bus', streetcar: 'Streetcar' };
const DEFAULT_WINDOW_MAX_AGE_MS = 10_000;
const ERRORS = ['not_found', 'no_retained_rows', 'outside_retention'] as const;

const query = z.object({
  group: enumParam(
    ROLLUP_GROUPS,
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

function rowId(routeId: string, period: string, serviceDay: string): string {
  return serviceDay === 'all' ? `${routeId}:${period}` : `${routeId}:${period}:${serviceDay}`;
}

/** `routeId` as served: the rows' stored id is replaced by it. */
function toApi(result: RollupResult, routeId: string, window: ApiRetainedWindow): ApiReliabilityRollup {
  return {
    data: result.rows.map((r) => ({ id: rowId(routeId, r.period, r.service_day), ...r, route_id: routeId })),
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
      days_without_observations: result.days_without_observations,
      notes: result.notes,
    },
  };
}

async function answer(
  deps: ReliabilityRouteDeps,
  windows: RetainedWindows,
  mode: Mode,
  routeId: string,
  parameter: string,
  ctx: RequestContext<Query>,
) {
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
      `No ${mode} trips are retained yet: ${mode} reliability starts with the first service day a ${mode} ` +
        `trip is recorded.`,
    );
  }
  const range = resolveRange(mode, { from: ctx.query.from, to: ctx.query.to }, window, today);
  try {
    const result = await rollup(
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
      { timezone, serviceDayEnd: deps.settings.service_day_end, now, historyFrom: window.from },
    );
    return toApi(result, routeId, window);
  } catch (err) {
    if (!(err instanceof RollupInputError)) throw err;
    const detail = err.message.slice(err.parameter.length + 2);
    throw invalidParameter(err.parameter === 'route_id' ? parameter : err.parameter, detail);
  }
}

function reliabilityRoute(deps: ReliabilityRouteDeps, windows: RetainedWindows, mode: Mode): RouteDef {
  // An answer costs 3 to 4 trips through the one DuckDB connection: it is cached until what the
  // rollup reads changes (a day finalized, schedules, the live days' counts recomputed), and at
  // most as long as the retained window is reused, so a new date or window shows within that.
  // A request after that bound also lets stale live counts start their recompute.
  const maxAgeMs = deps.windowMaxAgeMs ?? DEFAULT_WINDOW_MAX_AGE_MS;
  const version = () => `${reliabilityReadVersion(deps.db)}.${deps.ids?.().generation ?? 0}`;
  const cache = maxAgeMs > 0 ? { cache: { version, ttlMs: maxAgeMs } } : {};
  const parameter = mode === 'rail' ? 'line' : 'route_id';
  const subject = mode === 'rail' ? 'rail line' : `${mode} route`;
  const retained =
    mode === 'bus'
      ? 'Before any bus trip is retained the window is today alone (live figures).'
      : `404 no_retained_rows while no ${mode} trip is retained.`;
  return defineRoute({
    id: `get${TITLES[mode]}Reliability`,
    method: 'GET',
    path: `${PREFIX}/${mode}/{${parameter}}/reliability`,
    summary: `Reliability of one ${subject}`,
    description:
      `Scheduled versus delivered trips of one ${subject} by day, ISO week or the whole period: ` +
      '`scheduled` (the denominator) and `delivered` (the numerator) are always present, `delivered_pct` is null ' +
      'when nothing was scheduled; `delivered_pct_of_observed` beside it counts only the scheduled trips a feed ' +
      'saw (`observed`), ' +
      'and `meta.notes` says when more than half were never observed. Also canceled (CANCELED or DELETED at any poll ' +
      'of the day), partially canceled ' +
      '(SKIPPED stops), unobserved, pending and added trips, and with group=day the rolling 7-day figures. ' +
      'Finalized days are final; today and days not finalized yet are live (`final: false`). ' +
      'Any past day the schedule covers can be asked for: it is expanded on demand and finalized when it ' +
      'has observations; ' +
      "days on which no trip was seen are listed in `meta.days_without_observations` and counted in each row's " +
      '`days_observed`. ' +
      `from/to must lie inside the retained window (\`meta.retained_window\`; 400 outside_retention names ` +
      `it). ${retained} ` +
      `404 not_found when neither a schedule nor the retained history knows the ${mode === 'rail' ? 'line' : 'route'}.`,
    tags: [TITLES[mode], 'Reliability'],
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
    response: ReliabilityRollupSchema,
    handler(ctx) {
      const routeId = (ctx.params as Record<string, string>)[parameter]!;
      return answer(deps, windows, mode, routeId, parameter, ctx);
    },
  });
}

/** GET /api/v1/{rail/{line},bus/{route_id},streetcar/{route_id}}/reliability, in the specification's order. */
export function reliabilityRoutes(deps: ReliabilityRouteDeps): RouteDef[] {
  const windows = new RetainedWindows(
    (mode) => retainedWindow(deps.db, mode),
    deps.windowMaxAgeMs ?? DEFAULT_WINDOW_MAX_AGE_MS,
  );
  return [
    reliabilityRoute(deps, windows, 'rail'),
    reliabilityRoute(deps, windows, 'bus'),
    reliabilityRoute(deps, windows, 'streetcar'),
  ];
}
