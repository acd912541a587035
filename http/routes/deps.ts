// What the issue-3 routes read, and small helpers they share.
import { ApiError } from '../../core/errors.ts';
import type { Mode } from '../../core/types.ts';
import type { RouteDirectory } from '../read/directory.ts';
import type { LiveIndex } from '../read/live-index.ts';
import type { FreshnessThresholds } from '../read/represent.ts';
import type { ApiReliabilitySnapshot } from './schemas.ts';

/** Filled by the reliability issue: last-7-day figures per bus route, held in memory. */
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
  const qs = query ? Object.entries(query).map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&') : '';
  return `${deps.baseUrl}${PREFIX}${path}${qs ? `?${qs}` : ''}`;
}

export const seg = encodeURIComponent;

/** 404 naming the first route or line id that neither a schedule nor the live data knows. */
export function assertKnown(
  deps: CoreRouteDeps, modes: readonly Mode[], ids: readonly string[] | undefined, what: 'route' | 'line', parameter: string = what,
): void {
  for (const id of ids ?? []) {
    const known = modes.some((m) => deps.directory.route(m, id) !== undefined || deps.index.routesSeen(m).has(id));
    if (!known) {
      throw new ApiError('not_found', `Unknown ${what} ${JSON.stringify(id)} for ${modes.join('/')}.`, {
        errors: [{ parameter, detail: `unknown ${what}` }],
      });
    }
  }
}

export function setOf<T>(values: readonly T[] | undefined): Set<T> | null {
  return values && values.length ? new Set(values) : null;
}
