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
 * Routes, stations (parent stations where known), trips and the modes they imply. The modes come
 * from every kind of selector: a route's mode, a route_type, a trip's route, and for a selector
 * that names only a stop, the modes of the routes calling there (GTFS-RT: all service at that
 * stop), so a station alert is found by the mode filters as it is by `station`. A route, trip
 * or stop the schedule cannot place takes the feed's configured mode (`feeds[].mode`), if any.
 */
export function alertScope(
  entities: readonly InformedEntity[],
  schedule: ScheduleIndex | undefined,
  defaultMode: Mode | null = null,
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
    if (e.stop_id) {
      const station = schedule?.stop(e.stop_id)?.station_id ?? e.stop_id;
      stations.add(station);
      // with a route, route_type or trip, the selector is that service at this stop: its mode only
      if (!e.route_id && !typeMode && !e.trip_id && !e.trip_route_id) {
        const atStation = schedule?.stationModes(station) ?? [];
        for (const m of atStation) modes.add(m);
        if (atStation.length === 0 && defaultMode) modes.add(defaultMode);
      }
    }
    if (e.trip_id) {
      trips.add(e.trip_id);
      const routeId = e.trip_route_id ?? schedule?.trip(e.trip_id)?.route_id;
      if (routeId) addRoute(routeId);
      else if (defaultMode) modes.add(defaultMode);
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
  return periods.sort(
    (a, b) => (a.start_ms ?? -Infinity) - (b.start_ms ?? -Infinity) || (a.end_ms ?? Infinity) - (b.end_ms ?? Infinity),
  );
}

/** A stable fingerprint of the content fields: a new version is recorded when it changes. */
export function contentKey(a: AlertContent): string {
  return JSON.stringify([
    a.modes,
    a.impact,
    a.cause,
    a.severity,
    sortedEntries(a.header),
    sortedEntries(a.description),
    sortedEntries(a.url),
    a.active_periods.map((p) => [p.start_ms, p.end_ms]),
    a.routes,
    a.stations,
    a.trips,
  ]);
}

function sortedEntries(texts: Record<string, string>): [string, string][] {
  return Object.entries(texts).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}
