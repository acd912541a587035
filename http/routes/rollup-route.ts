// One route per mode for a rollup over the retained service days (reliability, performance):
// the same path shape, parameters, retained window, range defaults, id resolution, caching and
// errors; each rollup brings its computation, its row schema and its words.
import { z } from 'zod';
import { ApiError, invalidParameter } from '../../core/errors.ts';
import { wallClock } from '../../core/dates.ts';
import type { Mode } from '../../core/types.ts';
import { ServedIds } from '../../core/served-ids.ts';
import type { Db } from '../../store/db.ts';
import { ROLLUP_GROUPS, RollupInputError, type RollupGroup, type RollupResultBase } from '../../store/rollup-input.ts';
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
import { DEFAULT_RANGE_DAYS, requestWindow, resolveRange } from './rollup-range.ts';
import type { ApiRetainedWindow } from './rollup-schemas.ts';

export interface RollupRouteDeps {
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

type RollupResultOfRows = RollupResultBase<{ period: string; service_day: string }>;

export interface RollupAsked {
  /** the path's id read back to the stored one and the schedules it stands for, and the range */
  query: {
    mode: Mode;
    routeId: string;
    schedules: readonly string[] | null;
    group: RollupGroup;
    from: string;
    to: string;
    split: boolean;
  };
  timezone: string;
  now: Date;
  window: ApiRetainedWindow;
}

export interface RollupKind<Result extends RollupResultOfRows> {
  /** `reliability`, `performance`: the path's last segment and the operation id's last word */
  name: string;
  summary: (subject: string) => string;
  description: (mode: Mode, subject: string) => string;
  response: z.ZodType;
  compute(asked: RollupAsked): Promise<Result>;
  /** meta members of this rollup beside the shared ones, from its result */
  meta?(result: Result): Record<string, unknown>;
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

const capitalized = (name: string) => name[0]!.toUpperCase() + name.slice(1);

/** `routeId` as served: the rows' stored id is replaced by it. */
function toApi<Result extends RollupResultOfRows>(
  kind: RollupKind<Result>,
  result: Result,
  routeId: string,
  window: ApiRetainedWindow,
) {
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
      ...kind.meta?.(result),
      days_without_observations: result.days_without_observations,
      notes: result.notes,
    },
  };
}

async function answer<Result extends RollupResultOfRows>(
  kind: RollupKind<Result>,
  deps: RollupRouteDeps,
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
      `No ${mode} trips are retained yet: ${mode} ${kind.name} starts with the first service day a ${mode} ` +
        `trip is recorded.`,
    );
  }
  const range = resolveRange(mode, { from: ctx.query.from, to: ctx.query.to }, window, today);
  try {
    const result = await kind.compute({
      query: {
        mode,
        routeId: stored.id,
        schedules: stored.schedules,
        group: ctx.query.group ?? 'day',
        from: range.from,
        to: range.to,
        split: ctx.query.split === 'service_day',
      },
      timezone,
      now,
      window,
    });
    return toApi(kind, result, routeId, window);
  } catch (err) {
    if (!(err instanceof RollupInputError)) throw err;
    throw invalidParameter(err.parameter === 'route_id' ? parameter : err.parameter, err.detail);
  }
}

function rollupRoute<Result extends RollupResultOfRows>(
  kind: RollupKind<Result>,
  deps: RollupRouteDeps,
  windows: RetainedWindows,
  mode: Mode,
): RouteDef {
  // An answer costs 3 to 4 trips through the one DuckDB connection: it is cached until what the
  // rollup reads changes (a day finalized, schedules, the live days' counts recomputed), and at
  // most as long as the retained window is reused, so a new date or window shows within that.
  // A request after that bound also lets stale live counts start their recompute.
  const maxAgeMs = deps.windowMaxAgeMs ?? DEFAULT_WINDOW_MAX_AGE_MS;
  const version = () => `${reliabilityReadVersion(deps.db)}.${deps.ids?.().generation ?? 0}`;
  const cache = maxAgeMs > 0 ? { cache: { version, ttlMs: maxAgeMs } } : {};
  const parameter = mode === 'rail' ? 'line' : 'route_id';
  const subject = mode === 'rail' ? 'rail line' : `${mode} route`;
  return defineRoute({
    id: `get${TITLES[mode]}${capitalized(kind.name)}`,
    method: 'GET',
    path: `${PREFIX}/${mode}/{${parameter}}/${kind.name}`,
    summary: kind.summary(subject),
    description: kind.description(mode, subject),
    tags: [TITLES[mode], capitalized(kind.name)],
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
    response: kind.response,
    handler(ctx) {
      const routeId = (ctx.params as Record<string, string>)[parameter]!;
      return answer(kind, deps, windows, mode, routeId, parameter, ctx);
    },
  });
}

/** GET /api/v1/{rail/{line},bus/{route_id},streetcar/{route_id}}/<name>, in the specification's order. */
export function rollupRoutes<Result extends RollupResultOfRows>(
  kind: RollupKind<Result>,
  deps: RollupRouteDeps,
): RouteDef[] {
  const windows = new RetainedWindows(
    (mode) => retainedWindow(deps.db, mode),
    deps.windowMaxAgeMs ?? DEFAULT_WINDOW_MAX_AGE_MS,
  );
  return (['rail', 'bus', 'streetcar'] as const).map((mode) => rollupRoute(kind, deps, windows, mode));
}
