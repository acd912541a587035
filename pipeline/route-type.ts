import type { Mode } from '../core/types.ts';

/**
 * GTFS route_type (basic and extended "Hierarchical Vehicle Type" codes) → served mode.
 * Types the service does not serve (ferry, gondola, funicular, air…) map to null.
 */
export function modeForRouteType(routeType: number | null | undefined): Mode | null {
  if (routeType == null || !Number.isInteger(routeType)) return null;
  if (routeType === 0) return 'streetcar';
  if (routeType === 1 || routeType === 2 || routeType === 12) return 'rail';
  if (routeType === 3 || routeType === 11) return 'bus';
  if (routeType >= 900 && routeType <= 906) return 'streetcar';
  if ((routeType >= 100 && routeType <= 117) || (routeType >= 400 && routeType <= 405)) return 'rail';
  if ((routeType >= 200 && routeType <= 209) || (routeType >= 700 && routeType <= 716) || routeType === 800) return 'bus';
  return null;
}
