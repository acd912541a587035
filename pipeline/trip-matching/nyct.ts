// `nyct`: NYCT subway ids (core/nyct-trip-id.ts). The realtime id's origin time, route and
// direction are looked up among static trips whose own ids, or `mta_trip_id` column beside their
// first departure, carry the same; the path (`07R`) then separates trips leaving together.
import { NYCT_DAY, nyctKey, parseNyctTripId } from '../../core/nyct-trip-id.ts';
import type { NyctScheduledTrip, ScheduledTrip } from '../../core/ports.ts';
import { NYCT_TRIP_DESCRIPTOR } from '../gtfs-rt-types.ts';
import { decide, type MatchQuery, type ServiceDay, type Strategy } from './query.ts';
import { probeDays } from './service-day.ts';

// the extension's Direction enum; EAST and WEST are not used by the subway ids' N/S
const EXTENSION_DIRECTION: Record<number, 'N' | 'S'> = { 1: 'N', 3: 'S' };

export interface NyctRealtimeId {
  /** hundredths of a minute past midnight of the start date */
  origin: number;
  direction: 'N' | 'S';
  path: string | null;
  /** the schedule's routes to look in, in order: the descriptor's route_id, then the id's (both aliased) */
  routes: readonly string[];
}

/** The realtime id read as an NYCT id with an origin; null when it is not one. */
export function nyctRealtimeId(q: MatchQuery): NyctRealtimeId | null {
  const id = q.trip_id === null ? null : parseNyctTripId(q.trip_id);
  if (!id || id.origin === null) return null;
  // the extension states the direction outright; the id's letter is the fallback
  const direction = EXTENSION_DIRECTION[q.td[NYCT_TRIP_DESCRIPTOR]?.direction ?? 0] ?? id.direction;
  const idRoute = q.alias(id.route);
  const routes = q.route_id && q.route_id !== idRoute ? [q.route_id, idRoute] : [idRoute];
  return { origin: id.origin, direction, path: id.path, routes };
}

export const matchNyct: Strategy = (q) => {
  const id = nyctRealtimeId(q);
  if (!id) return null;
  // hundredths of a minute → seconds only to pick the day; the lookup stays in hundredths
  const days = probeDays(q, Math.round(id.origin * 0.6));
  for (const route of id.routes) {
    const found: ({ trip: ScheduledTrip } & ServiceDay)[] = [];
    for (const [k, day] of days.entries()) {
      const candidates = q.schedule.nyctTrips(nyctKey(id.origin + k * NYCT_DAY, route, id.direction));
      for (const c of samePath(candidates, id.path)) {
        if (q.schedule.runsOn(c.trip.service_id, day.service_date)) {
          found.push({ trip: c.trip, service_date: day.service_date, previous_day: day.previous_day });
        }
      }
    }
    if (found.length) return decide(found);
  }
  return decide([]);
};

/** A static trip with the realtime path, or whose id gives none; any trip when the realtime id gives none. */
export function pathFits(staticPath: string | null, realtimePath: string | null): boolean {
  return realtimePath === null || staticPath === null || staticPath === realtimePath;
}

function samePath(candidates: readonly NyctScheduledTrip[], path: string | null): readonly NyctScheduledTrip[] {
  if (path === null) return candidates;
  return candidates.filter((c) => pathFits(c.path, path));
}
