// Filters of GET /api/v1/events/stream (mode, route/line, types), normalized so that equal
// filters share one fan-out group and each event is matched once per group, not per client.
import type { EventType } from '../core/events.ts';
import type { Mode } from '../core/types.ts';
import type { StoredEvent } from './event-log.ts';

export interface EventFilter {
  /** any of these modes; absent or empty: all */
  readonly modes?: readonly Mode[];
  /** any of these route ids (bus, streetcar) or line ids (rail), matched against both; absent or empty: all */
  readonly routes?: readonly string[];
  /** any of these dotted types; absent or empty: all */
  readonly types?: readonly EventType[];
}

export interface NormalizedFilter {
  readonly modes: ReadonlySet<string> | null;
  readonly routes: ReadonlySet<string> | null;
  readonly types: ReadonlySet<string> | null;
  /** the same for equal filters, whatever the order or duplicates of their values */
  readonly key: string;
}

function normalizeList(values: readonly string[] | undefined): string[] | null {
  if (!values || values.length === 0) return null;
  return [...new Set(values)].sort();
}

export function normalizeFilter(filter: EventFilter): NormalizedFilter {
  const modes = normalizeList(filter.modes);
  const routes = normalizeList(filter.routes);
  const types = normalizeList(filter.types);
  return {
    modes: modes && new Set(modes),
    routes: routes && new Set(routes),
    types: types && new Set(types),
    key: JSON.stringify([modes, routes, types]),
  };
}

function anyIn(values: readonly string[], wanted: ReadonlySet<string>): boolean {
  for (const value of values) if (wanted.has(value)) return true;
  return false;
}

export function matchesFilter(filter: NormalizedFilter, event: StoredEvent): boolean {
  if (filter.types && !filter.types.has(event.type)) return false;
  if (filter.modes && !anyIn(event.modes, filter.modes)) return false;
  // route and line filters are checked by kind when the stream opens (http/known-ids.ts), so one
  // set matched against both keeps `route=39&line=Red` meaning either
  if (filter.routes && !anyIn(event.routes, filter.routes) && !anyIn(event.lines, filter.routes)) return false;
  return true;
}
