import type { Mode } from './types.ts';

/**
 * route_type → served mode. Base types and the extended (Google "Hierarchical Vehicle Type")
 * types, as inclusive ranges. One table for both the import's SQL (store/gtfs-tables.ts
 * `modeSql`) and code that classifies a route_type on its own (alert scopes), so a route and an
 * alert naming its type cannot land in different modes.
 */
export const ROUTE_TYPE_MODES: readonly { mode: Mode; from: number; to: number }[] = [
  { mode: 'streetcar', from: 0, to: 0 },
  { mode: 'streetcar', from: 900, to: 906 },
  { mode: 'rail', from: 1, to: 2 },
  { mode: 'rail', from: 100, to: 117 },
  { mode: 'rail', from: 400, to: 405 },
  // monorail runs like a metro line: riders look for it among the rail lines
  { mode: 'rail', from: 12, to: 12 },
  { mode: 'bus', from: 3, to: 3 },
  { mode: 'bus', from: 200, to: 209 },
  { mode: 'bus', from: 700, to: 716 },
  // trolleybuses stop and run like buses
  { mode: 'bus', from: 11, to: 11 },
  { mode: 'bus', from: 800, to: 800 },
];

/**
 * The mode a route_type is served as; null for types kept but not served (ferry, …) and for a missing or non-integer
 * type.
 */
export function modeForRouteType(routeType: number | null | undefined): Mode | null {
  if (routeType == null || !Number.isInteger(routeType)) return null;
  return ROUTE_TYPE_MODES.find((r) => routeType >= r.from && routeType <= r.to)?.mode ?? null;
}
