// What the core routes (alerts, realtime, directories) read, and small helpers they share.
import { assertKnownIds, directoryKnownIds } from '../known-ids.ts';
import type { LiveSlice } from '../../core/ports.ts';
import type { Mode } from '../../core/types.ts';
import type { DirectoryRoute, RouteDirectory } from '../read/directory.ts';
import type { LiveIndex } from '../read/live-index.ts';
import type { FreshnessThresholds } from '../read/represent.ts';
import type { RouteDef } from '../types.ts';
import type { ApiReliabilitySnapshot } from './schemas.ts';

/** Last-7-day reliability figures per bus route, held in memory (http/read/reliability-snapshots.ts). */
export interface ReliabilitySnapshots {
  /** changes whenever any snapshot changes (cache key of the directory body) */
  readonly version: number | string;
  snapshot(routeId: string): ApiReliabilitySnapshot | null;
}

export interface CoreRouteDeps {
  index: LiveIndex;
  directory: RouteDirectory;
  thresholds: FreshnessThresholds;
  /** absolute prefix for links to other resources; '' gives root-relative links */
  baseUrl: string;
  reliability?: ReliabilitySnapshots;
}

export const PREFIX = '/api/v1';

export function link(deps: CoreRouteDeps, path: string, query?: Record<string, string>): string {
  const qs = query
    ? Object.entries(query)
        .map(([k, v]) => `${k}=${encodeURIComponent(v)}`)
        .join('&')
    : '';
  return `${deps.baseUrl}${PREFIX}${path}${qs ? `?${qs}` : ''}`;
}

export const seg = encodeURIComponent;

/**
 * 404 naming the first route or line id that neither a schedule nor the live data knows: the rule
 * the request chain applies to query filters (http/known-ids.ts), here for ids in a path.
 */
export function assertKnown(
  deps: CoreRouteDeps,
  modes: readonly Mode[],
  ids: readonly string[] | undefined,
  what: 'route' | 'line',
  parameter: string = what,
): void {
  assertKnownIds(
    directoryKnownIds(deps.directory, deps.index),
    parameter,
    { kind: 'route', modes, noun: what },
    ids ?? [],
  );
}

/** What a vehicle or arrival body reads: positions and delays of every mode, every feed's health (sources). */
export const REALTIME_SLICES: readonly LiveSlice[] = [
  'vehicles:rail',
  'vehicles:bus',
  'vehicles:streetcar',
  'arrivals',
  'feeds',
];

/**
 * What every list of live data (alerts, vehicles, arrivals) is: a keyed, metered read, paged by
 * cursor, also an event stream, its body cached per `version` (of the live slices it reads).
 * Bodies holding ages and freshness move with the clock too: `cacheTtlMs` bounds how long one is reused.
 */
export function liveList(tags: readonly string[], version: () => string | number, cacheTtlMs?: number) {
  return {
    tags,
    auth: 'key',
    meter: 'request',
    paginated: true,
    sse: true,
    errors: ['not_found'],
    cache: { version, ...(cacheTtlMs === undefined ? {} : { ttlMs: cacheTtlMs }) },
  } as const satisfies Partial<RouteDef>;
}

/** What every directory entry (bus route, streetcar route, rail line) says about its route. */
export function routeFields(r: DirectoryRoute) {
  return {
    short_name: r.short_name,
    long_name: r.long_name,
    color: r.color,
    text_color: r.text_color,
    route_type: r.route_type,
    schedule: r.schedule,
    agency_name: r.agency_name,
  };
}

/** A directory body: one entry per route of the mode, then how many and from which schedules. */
export function directoryBody<T>(deps: CoreRouteDeps, mode: Mode, entry: (r: DirectoryRoute) => T) {
  const routes = deps.directory.routes(mode);
  return {
    data: routes.map((r) => entry(r)),
    meta: { count: routes.length, schedules: [...deps.directory.schedules] },
  };
}

export function setOf<T>(values: readonly T[] | undefined): Set<T> | null {
  return values?.length ? new Set(values) : null;
}
