// Rail: the line directory, and normalized arrivals with train, line and station summaries beside
// the rail vehicles' positions.
import { z } from 'zod';
import { DELAY_STATES, type Arrival } from '../../core/types.ts';
import { paginate } from '../paginate.ts';
import { enumListParam, enumParam, idListParam } from '../params.ts';
import { arrivalKey } from '../read/live-index.ts';
import { ageFreshness, arrivalToApi, sourceToApi } from '../read/represent.ts';
import { railSummaries } from '../read/summaries.ts';
import { defineRoute } from '../route.ts';
import type { RouteDef } from '../types.ts';
import {
  directoryBody,
  link,
  liveList,
  PREFIX,
  REALTIME_SLICES,
  routeFields,
  seg,
  setOf,
  type CoreRouteDeps,
} from './deps.ts';
import { RailDirectorySchema, RailRealtimeSchema } from './schemas.ts';
import { vehiclesToApi } from './vehicles.ts';

export function railRoutes(deps: CoreRouteDeps): RouteDef[] {
  const directory = defineRoute({
    id: 'listRailLines',
    method: 'GET',
    path: `${PREFIX}/rail`,
    summary: 'Rail lines',
    description:
      'Every rail line of the imported schedules, its stations in running order, and links to its realtime, alert ' +
      'and reliability resources.',
    tags: ['Rail', 'Directories'],
    auth: 'key',
    meter: 'request',
    cache: { version: () => deps.directory.version },
    response: RailDirectorySchema,
    handler() {
      return directoryBody(deps, 'rail', (r) => ({
        line: r.route_id,
        ...routeFields(r),
        stations: [...deps.directory.lineStations(r.route_id)],
        links: {
          realtime: link(deps, '/rail/realtime', { line: r.route_id }),
          alerts: link(deps, '/rail/alerts', { line: r.route_id }),
          reliability: link(deps, `/rail/${seg(r.route_id)}/reliability`),
        },
      }));
    },
  });

  const realtime = defineRoute({
    id: 'getRailRealtime',
    method: 'GET',
    path: `${PREFIX}/rail/realtime`,
    summary: 'Rail arrivals with delay summaries',
    description:
      'Normalized arrivals ordered by line, trip and stop sequence, with train, line and station delay summaries ' +
      'over every matching arrival, the rail vehicles of the requested lines (trains without ' +
      'coordinates placed at their stop), and the freshness of each rail source.',
    // ages and freshness move with the clock: a cached body lives one second
    ...liveList(['Rail', 'Realtime'], () => deps.index.versionOf(REALTIME_SLICES), 1_000),
    query: z.object({
      line: idListParam('Rail line id.', 'Red', { kind: 'route', modes: ['rail'], noun: 'line' }).optional(),
      station: idListParam('Station id (parent station), or a stop id.', 'place-pktrm', { kind: 'station' }).optional(),
      direction: enumParam(['0', '1'], 'GTFS direction_id.').optional(),
      delay_state: enumListParam(DELAY_STATES, 'Delay state.').optional(),
    }),
    response: RailRealtimeSchema,
    handler(ctx) {
      const q = ctx.query;
      const lines = setOf(q.line);
      const stations = setOf(q.station);
      const states = setOf(q.delay_state);
      const direction = q.direction === undefined ? null : Number(q.direction);
      const rows = deps.index
        .railArrivals()
        .filter(
          (a) =>
            (!lines || (a.route_id !== null && lines.has(a.route_id))) &&
            (!stations || stations.has(a.station_id) || stations.has(a.stop_id)) &&
            (direction === null || a.direction_id === direction) &&
            (!states || states.has(a.delay_state)),
        );
      const feeds = deps.index.feeds();
      // without a health record for the feed, the poll's own age tells
      const toApi = (a: Arrival) =>
        arrivalToApi(
          a,
          deps.directory.stationName(a.station_id),
          feeds.get(a.feed_id)?.freshness ?? ageFreshness((ctx.nowMs - a.observed_ms) / 1000, deps.thresholds),
        );
      const page = paginate(rows, arrivalKey, ctx, toApi);
      const vehicles = deps.index
        .vehicles('rail')
        .filter((v) => !lines || (v.route_id !== null && lines.has(v.route_id)));
      return {
        data: page.data,
        summaries: railSummaries(rows, (id) => deps.directory.stationName(id)),
        vehicles: vehiclesToApi(deps, vehicles, ctx.nowMs),
        freshness: { sources: deps.index.sources('rail').map(sourceToApi) },
        meta: page.meta,
        links: page.links,
      };
    },
  });

  return [directory, realtime];
}
