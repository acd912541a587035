// Bus and streetcar route directories (the rail line directory lives with rail).
import { defineRoute } from '../route.ts';
import type { RouteDef } from '../types.ts';
import { directoryBody, link, PREFIX, routeFields, seg, type CoreRouteDeps } from './deps.ts';
import { BusDirectorySchema, StreetcarDirectorySchema } from './schemas.ts';

export function directoryRoutes(deps: CoreRouteDeps): RouteDef[] {
  const bus = defineRoute({
    id: 'listBusRoutes',
    method: 'GET',
    path: `${PREFIX}/bus`,
    summary: 'Bus routes',
    description:
      'Every bus route of the imported schedules with its last-seven-day reliability snapshot (null until the route ' +
      'has finalized service days) and links to its realtime, alert and reliability resources.',
    tags: ['Bus', 'Directories'],
    auth: 'key',
    meter: 'request',
    cache: { version: () => `${deps.directory.version}:${deps.reliability?.version ?? '-'}` },
    response: BusDirectorySchema,
    handler() {
      return directoryBody(deps, 'bus', (r) => ({
        route_id: r.route_id,
        ...routeFields(r),
        reliability: deps.reliability?.snapshot(r.route_id) ?? null,
        links: {
          realtime: link(deps, `/bus/${seg(r.route_id)}/realtime`),
          alerts: link(deps, '/bus/alerts', { route: r.route_id }),
          reliability: link(deps, `/bus/${seg(r.route_id)}/reliability`),
        },
      }));
    },
  });

  const streetcar = defineRoute({
    id: 'listStreetcarRoutes',
    method: 'GET',
    path: `${PREFIX}/streetcar`,
    summary: 'Streetcar routes',
    description:
      'Every streetcar route of the imported schedules, the number of alerts active on it now, and links to its ' +
      'alerts, realtime and reliability resources.',
    tags: ['Streetcar', 'Directories'],
    auth: 'key',
    meter: 'request',
    cache: { version: () => `${deps.directory.version}:${deps.index.sliceVersion('alerts')}` },
    response: StreetcarDirectorySchema,
    handler() {
      const active = new Map<string, number>();
      for (const a of deps.index.alerts()) {
        if (a.status !== 'active' || !a.modes.includes('streetcar')) continue;
        for (const r of new Set(a.routes)) active.set(r, (active.get(r) ?? 0) + 1);
      }
      return directoryBody(deps, 'streetcar', (r) => ({
        route_id: r.route_id,
        ...routeFields(r),
        active_alerts: active.get(r.route_id) ?? 0,
        links: {
          alerts: link(deps, '/streetcar/alerts', { route: r.route_id }),
          realtime: link(deps, `/streetcar/${seg(r.route_id)}/realtime`),
          reliability: link(deps, `/streetcar/${seg(r.route_id)}/reliability`),
        },
      }));
    },
  });
  return [bus, streetcar];
}
