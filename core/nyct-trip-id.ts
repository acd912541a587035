// NYCT subway trip ids. The realtime feeds name a trip by its origin time and path, e.g.
// `036050_2..S07R`: origin 036050 hundredths of a minute past midnight (06:00:30), route 2,
// direction S, path 07R. The agency's static GTFS embeds the same pieces at the end of its own
// ids (`AFA23GEN-1037-Sunday-00_000600_1..S03R`), and re-publishers carry them in an extra
// trips.txt column (`mta_trip_id`) beside the trip's first departure. Both the schedule index
// (store) and the matcher (pipeline) read them, so the parser lives here.

export interface NyctTripId {
  /** hundredths of a minute past midnight of the start date; null when the id carries none */
  origin: number | null;
  route: string;
  direction: 'N' | 'S';
  /** the path after the direction (`07R`), null when absent */
  path: string | null;
}

// origin (6 digits) optional for static columns; the route is padded to three characters with dots
const PATTERN = /(?:^|[^0-9])(?:(\d{6})_?)?([A-Z0-9]+)\.+([NS])([A-Z0-9]*)$/;

/** Parses a realtime or static NYCT-style id; null when the id does not follow the scheme. */
export function parseNyctTripId(id: string): NyctTripId | null {
  const m = PATTERN.exec(id);
  if (!m) return null;
  return {
    origin: m[1] === undefined ? null : Number(m[1]),
    route: m[2]!,
    direction: m[3] as 'N' | 'S',
    path: m[4] ? m[4] : null,
  };
}

/** 24 hours in hundredths of a minute: a trip of the previous service day after midnight. */
export const NYCT_DAY = 24 * 60 * 100;

/** GTFS seconds past the service day's origin → NYCT hundredths of a minute. */
export function nyctOriginOfSeconds(seconds: number): number {
  return Math.round((seconds * 100) / 60);
}

/** The key both sides of the NYCT lookup use. */
export function nyctKey(origin: number, route: string, direction: string): string {
  return `${origin}|${route}|${direction}`;
}

/** A static trip's place in the NYCT lookups: origin (hundredths of a minute), route, direction, path. */
export interface NyctStaticTrip {
  origin: number;
  route: string;
  direction: 'N' | 'S';
  path: string | null;
}

/**
 * Where a static trip sits in the NYCT lookups: from its own id when that follows the scheme,
 * else from an `mta_trip_id` column, the origin then taken from the trip's first departure.
 */
export function nyctStaticTrip(
  tripId: string,
  mtaTripId: string | null,
  routeId: string,
  firstDepartureS: number | null,
): NyctStaticTrip | null {
  // the column, when present, is the agency's own id; a trip id only looks like one by its shape
  const parsed = (mtaTripId ? parseNyctTripId(mtaTripId) : null) ?? parseNyctTripId(tripId);
  if (!parsed) return null;
  const origin = parsed.origin ?? (firstDepartureS === null ? null : nyctOriginOfSeconds(firstDepartureS));
  if (origin === null) return null;
  // the trip's route, not the id's: some lines' static ids name a sibling route in that position
  return { origin, route: routeId, direction: parsed.direction, path: parsed.path };
}
