// Stored alerts: the cross-mode list and one list per mode, with filters and keyset pagination.
import { z } from 'zod';
import { ALERT_STATUSES, MODES, type Alert, type Mode } from '../../core/types.ts';
import { paginate } from '../paginate.ts';
import { enumListParam, idListParam } from '../params.ts';
import { alertKey } from '../read/live-index.ts';
import { alertToApi, sourceToApi } from '../read/represent.ts';
import { defineRoute } from '../route.ts';
import type { RouteDef } from '../types.ts';
import { liveList, PREFIX, setOf, type CoreRouteDeps } from './deps.ts';
import { AlertPageSchema } from './schemas.ts';

/** GTFS-RT Alert.Effect values, lower case. */
export const IMPACTS = [
  'no_service',
  'reduced_service',
  'significant_delays',
  'detour',
  'additional_service',
  'modified_service',
  'other_effect',
  'unknown_effect',
  'stop_moved',
  'no_effect',
  'accessibility_issue',
] as const;

const status = enumListParam(ALERT_STATUSES, 'Alert status.').optional();
const station = idListParam('Station (or stop) id the alert informs.', 'place-pktrm', { kind: 'station' }).optional();
const source = idListParam('Feed id the alert came from.', 'mbta-alerts', { kind: 'source' }).optional();
const impact = enumListParam(IMPACTS, 'GTFS-RT effect.').optional();
const route = idListParam('Bus or streetcar route id.', '39', {
  kind: 'route',
  modes: ['bus', 'streetcar'],
  noun: 'route',
}).optional();
const line = idListParam('Rail line id.', 'Red', { kind: 'route', modes: ['rail'], noun: 'line' }).optional();
/** `route` of one mode's alert list: that mode's routes only */
const routeOf = (mode: 'bus' | 'streetcar') =>
  idListParam(`${mode === 'bus' ? 'Bus' : 'Streetcar'} route id.`, mode === 'bus' ? '39' : 'E', {
    kind: 'route',
    modes: [mode],
    noun: 'route',
  }).optional();

interface AlertFilter {
  modes: ReadonlySet<Mode> | null;
  status: ReadonlySet<string> | null;
  routes: ReadonlySet<string> | null;
  lines: ReadonlySet<string> | null;
  stations: ReadonlySet<string> | null;
  sources: ReadonlySet<string> | null;
  impacts: ReadonlySet<string> | null;
}

function intersects(values: readonly string[], wanted: ReadonlySet<string>): boolean {
  return values.some((v) => wanted.has(v));
}

export function matchesAlert(a: Alert, f: AlertFilter): boolean {
  if (f.modes && !a.modes.some((m) => f.modes!.has(m))) return false;
  if (f.status && !f.status.has(a.status)) return false;
  if (f.sources && !f.sources.has(a.feed_id)) return false;
  if (f.impacts && !f.impacts.has(a.impact)) return false;
  if (f.stations && !intersects(a.stations, f.stations)) return false;
  if (f.routes || f.lines) {
    // on the cross-mode list a route names a bus/streetcar route and a line a rail line;
    // given both, an alert matching either is kept
    const byRoute =
      !!f.routes && intersects(a.routes, f.routes) && (f.modes !== null || a.modes.some((m) => m !== 'rail'));
    const byLine = !!f.lines && intersects(a.routes, f.lines) && (f.modes !== null || a.modes.includes('rail'));
    if (!byRoute && !byLine) return false;
  }
  return true;
}

function listAlerts(deps: CoreRouteDeps, ctx: Parameters<RouteDef['handler']>[0], filter: AlertFilter) {
  const rows = deps.index.alerts().filter((a) => matchesAlert(a, filter));
  const feeds = deps.index.feeds();
  // a source no longer polled (removed from the config) cannot vouch for its alerts
  const page = paginate(rows, alertKey, ctx, (a) => alertToApi(a, feeds.get(a.feed_id)?.freshness ?? 'expired'));
  const sources = [...new Set(rows.map((a) => a.feed_id))].sort().flatMap((id) => {
    const health = feeds.get(id);
    return health ? [sourceToApi(health)] : [];
  });
  return { data: page.data, freshness: { sources }, meta: page.meta, links: page.links };
}

const SAME_AS_ALL_ALERTS = 'with the same filters and cursor as /api/v1/alerts.';
export function alertRoutes(deps: CoreRouteDeps): RouteDef[] {
  // a poll of a feed without alerts leaves these bodies cached
  const listing = liveList(['Alerts'], () => deps.index.alertsVersion());
  const all = defineRoute({
    id: 'listAlerts',
    method: 'GET',
    path: `${PREFIX}/alerts`,
    summary: 'Stored alerts of every mode',
    description:
      'Newest first (by first seen), stable under concurrent changes: walking the cursor never repeats or skips an ' +
      'alert that existed when the walk began.',
    ...listing,
    query: z.object({
      mode: enumListParam(MODES, 'Mode.').optional(),
      status,
      route,
      line,
      station,
      source,
      impact,
    }),
    response: AlertPageSchema,
    handler(ctx) {
      const q = ctx.query;
      return listAlerts(deps, ctx, {
        modes: setOf(q.mode),
        status: setOf(q.status),
        routes: setOf(q.route),
        lines: setOf(q.line),
        stations: setOf(q.station),
        sources: setOf(q.source),
        impacts: setOf(q.impact),
      });
    },
  });

  const perMode = (mode: Mode): RouteDef => {
    const routeParam = mode === 'rail' ? 'line' : 'route';
    return defineRoute({
      id: `list${mode[0]!.toUpperCase()}${mode.slice(1)}Alerts`,
      method: 'GET',
      path: `${PREFIX}/${mode}/alerts`,
      summary: `Stored ${mode} alerts`,
      description: `Alerts informing ${mode} service, newest first, ${SAME_AS_ALL_ALERTS}`,
      ...listing,
      query: z.object({ status, [routeParam]: mode === 'rail' ? line : routeOf(mode), station, source, impact }),
      response: AlertPageSchema,
      handler(ctx) {
        const q = ctx.query as Record<string, string[] | undefined>;
        return listAlerts(deps, ctx, {
          modes: new Set([mode]),
          status: setOf(q.status),
          routes: setOf(q[routeParam]),
          lines: null,
          stations: setOf(q.station),
          sources: setOf(q.source),
          impacts: setOf(q.impact),
        });
      },
    });
  };

  return [all, perMode('rail'), perMode('bus'), perMode('streetcar')];
}
