// Bus and streetcar vehicle positions, for a mode or one route, with route summaries and route
// freshness summaries.
import { z } from 'zod';
import type { Mode, VehiclePosition } from '../../core/types.ts';
import { paginate } from '../paginate.ts';
import { AS_SERVED, idListParam, idValue } from '../params.ts';
import { vehicleKey } from '../read/live-index.ts';
import { sourceToApi, vehicleToApi } from '../read/represent.ts';
import { vehicleSummaries } from '../read/summaries.ts';
import { defineRoute } from '../route.ts';
import type { RequestContext, RouteDef } from '../types.ts';
import { assertKnown, liveList, PREFIX, REALTIME_SLICES, type CoreRouteDeps } from './deps.ts';
import { VehicleRealtimeSchema, type ApiVehicle } from './schemas.ts';

type VehicleMode = Extract<Mode, 'bus' | 'streetcar'>;

function title(mode: VehicleMode): string {
  return mode === 'bus' ? 'Bus' : 'Streetcar';
}

/** Vehicles in API form with their trip's delay, in the order given. Bus, streetcar and rail share it. */
export function vehiclesToApi(deps: CoreRouteDeps, vehicles: readonly VehiclePosition[], nowMs: number): ApiVehicle[] {
  const feeds = deps.index.feeds();
  const delays = deps.index.tripDelays();
  const delayOf = (v: VehiclePosition): number | null => {
    if (v.trip_id === null) return null;
    const trip = `${v.feed_id}\u0000${v.trip_id}`;
    return delays.get(`${trip}\u0000${v.vehicle_id}`) ?? delays.get(trip) ?? null;
  };
  return vehicles.map((v) => vehicleToApi(v, nowMs, feeds.get(v.feed_id)?.freshness, delayOf(v), deps.thresholds));
}

function vehiclesBody(deps: CoreRouteDeps, mode: VehicleMode, ctx: RequestContext, routes: ReadonlySet<string> | null) {
  const rows = deps.index.vehicles(mode).filter((v) => !routes || (v.route_id !== null && routes.has(v.route_id)));
  const all = vehiclesToApi(deps, rows, ctx.nowMs);
  const summaries = vehicleSummaries(all);
  // the page is cut from the already-mapped rows, in the same (keyset) order
  const byId = new Map(rows.map((v, i) => [v, all[i]!]));
  const page = paginate(rows, vehicleKey, ctx, (v) => byId.get(v)!);
  return {
    data: page.data,
    summaries: { routes: summaries.routes },
    freshness: { sources: deps.index.sources(mode).map(sourceToApi), routes: summaries.freshness },
    meta: page.meta,
    links: page.links,
  };
}

export function vehicleRoutes(deps: CoreRouteDeps, mode: VehicleMode): RouteDef[] {
  // ages and freshness move with the clock: a cached body lives one second
  const listing = liveList([title(mode), 'Realtime'], () => deps.index.versionOf(REALTIME_SLICES), 1_000);
  const list = defineRoute({
    id: `get${title(mode)}Realtime`,
    method: 'GET',
    path: `${PREFIX}/${mode}/realtime`,
    summary: `${title(mode)} vehicle positions`,
    description:
      `Positions from the GTFS Realtime feeds, ordered by route and vehicle, with route summaries ` +
      `(vehicles, mean delay, newest and oldest position age) and route freshness summaries over every ` +
      `matching vehicle.`,
    ...listing,
    query: z.object({
      route: idListParam(`${title(mode)} route id.`, mode === 'bus' ? '39' : 'E', {
        kind: 'route',
        modes: [mode],
        noun: 'route',
      }).optional(),
    }),
    response: VehicleRealtimeSchema,
    handler(ctx) {
      return vehiclesBody(deps, mode, ctx, ctx.query.route ? new Set(ctx.query.route) : null);
    },
  });

  const one = defineRoute({
    id: `get${title(mode)}RouteRealtime`,
    method: 'GET',
    path: `${PREFIX}/${mode}/{route_id}/realtime`,
    summary: `Vehicle positions on one ${mode} route`,
    description: `As /api/v1/${mode}/realtime for one route. 404 when no schedule or live feed knows the route.`,
    ...listing,
    params: z.object({ route_id: idValue(`${title(mode)} route id. ${AS_SERVED}`, mode === 'bus' ? '39' : 'E') }),
    response: VehicleRealtimeSchema,
    handler(ctx) {
      assertKnown(deps, [mode], [ctx.params.route_id], 'route', 'route_id');
      return vehiclesBody(deps, mode, ctx, new Set([ctx.params.route_id]));
    },
  });
  return [list, one];
}
