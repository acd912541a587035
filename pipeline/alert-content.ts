// What one poll says about an alert, before the lifecycle adds status, version and times.
import type { ScheduleIndex } from '../core/ports.ts';
import { modeForRouteType } from '../core/route-type.ts';
import { MODES, type ActivePeriod, type Alert, type Mode } from '../core/types.ts';

export type AlertContent = Omit<Alert, 'status' | 'version' | 'first_seen_ms' | 'updated_ms' | 'resolved_ms'>;

/** An informed entity reduced to what alerts are filtered by. */
export interface InformedEntity {
  route_id: string | null;
  route_type: number | null;
  stop_id: string | null;
  trip_id: string | null;
  trip_route_id: string | null;
}

export interface AlertScope {
  modes: Mode[];
  routes: string[];
  stations: string[];
  trips: string[];
}

/**
 * Routes, stations (parent stations where known), trips and the modes they imply. A route the
 * schedule does not know takes the feed's configured mode (`feeds[].mode`), when it has one.
 */
export function alertScope(
  entities: readonly InformedEntity[], schedule: ScheduleIndex | undefined, defaultMode: Mode | null = null,
): AlertScope {
  const modes = new Set<Mode>();
  const routes = new Set<string>();
  const stations = new Set<string>();
  const trips = new Set<string>();
  const addRoute = (routeId: string): void => {
    routes.add(routeId);
    const route = schedule?.route(routeId);
    const mode = route ? route.mode : defaultMode;
    if (mode) modes.add(mode);
  };
  for (const e of entities) {
    if (e.route_id) addRoute(e.route_id);
    const typeMode = modeForRouteType(e.route_type);
    if (typeMode) modes.add(typeMode);
    if (e.stop_id) stations.add(schedule?.stop(e.stop_id)?.station_id ?? e.stop_id);
    if (e.trip_id) {
      trips.add(e.trip_id);
      const routeId = e.trip_route_id ?? schedule?.trip(e.trip_id)?.route_id;
      if (routeId) addRoute(routeId);
    } else if (e.trip_route_id) {
      addRoute(e.trip_route_id);
    }
  }
  return {
    modes: MODES.filter((m) => modes.has(m)),
    routes: [...routes].sort(),
    stations: [...stations].sort(),
    trips: [...trips].sort(),
  };
}

/** Sorted so that the same content always compares equal, whatever order the feed used. */
export function sortPeriods(periods: ActivePeriod[]): ActivePeriod[] {
  return periods.sort((a, b) => (a.start_ms ?? -Infinity) - (b.start_ms ?? -Infinity) || (a.end_ms ?? Infinity) - (b.end_ms ?? Infinity));
}

/** A stable fingerprint of the content fields: a new version is recorded when it changes. */
export function contentKey(a: AlertContent): string {
  return JSON.stringify([
    a.modes, a.impact, a.cause, a.severity, sortedEntries(a.header), sortedEntries(a.description), sortedEntries(a.url),
    a.active_periods.map((p) => [p.start_ms, p.end_ms]), a.routes, a.stations, a.trips,
  ]);
}

function sortedEntries(texts: Record<string, string>): [string, string][] {
  return Object.entries(texts).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}
