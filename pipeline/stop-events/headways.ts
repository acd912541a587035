// Headways at a station for one route and direction on one service day: the actual one from the
// departures written so far, the scheduled one from the schedule's trips running that day.
import type { ScheduleIndex } from '../../core/ports.ts';

/** Departures kept per station, route and direction: enough to place one that comes a little late. */
const KEEP_DEPARTURES = 16;
/** Service days kept after the newest one seen (trips past midnight, late closes). */
const KEEP_DAYS = 2;

export interface HeadwayPlace {
  group: string;
  service_date: string;
  route_id: string;
  direction_id: number | null;
  station_id: string;
}

const placeKey = (p: HeadwayPlace): string => `${p.group}\n${p.route_id}\n${p.direction_id ?? ''}\n${p.station_id}`;

/** Keeps days in a map by date, dropping those more than KEEP_DAYS before the newest. */
class ByDay<T> {
  private readonly days = new Map<string, T>();
  private newest = '';

  constructor(private readonly make: () => T) {}

  get(date: string): T {
    let day = this.days.get(date);
    if (!day) {
      this.days.set(date, (day = this.make()));
      if (date > this.newest) {
        this.newest = date;
        const cutoff = Date.parse(date) - KEEP_DAYS * 86_400_000;
        for (const d of this.days.keys()) if (Date.parse(d) < cutoff) this.days.delete(d);
      }
    }
    return day;
  }

  get size(): number {
    return this.days.size;
  }
}

/** The departures written so far, per station, route and direction of each service day. */
export class DepartureLog {
  private readonly days = new ByDay(() => new Map<string, number[]>());

  /** Records a departure; returns the latest one before it at that place, or null for the first. */
  record(place: HeadwayPlace, departureMs: number): number | null {
    const day = this.days.get(place.service_date);
    const key = placeKey(place);
    let list = day.get(key);
    if (!list) day.set(key, (list = []));
    // kept sorted: a stop written late (a trip closed by timeout) still finds the one before it
    let i = list.length;
    while (i > 0 && list[i - 1]! > departureMs) i--;
    const before = i > 0 ? list[i - 1]! : null;
    list.splice(i, 0, departureMs);
    if (list.length > KEEP_DEPARTURES) list.shift();
    return before;
  }
}

/**
 * Scheduled departures (GTFS seconds) per station of each route and direction running on a
 * service day, built on first use from the schedule's trips (one pass over the route's trips).
 */
export class ScheduledHeadways {
  private readonly days = new ByDay(() => new Map<string, Map<string, number[]>>());

  /** Seconds since the scheduled departure before `departureS` at the place, or null (first of the day, no schedule). */
  headway(schedule: ScheduleIndex | undefined, place: HeadwayPlace, departureS: number): number | null {
    if (!schedule?.tripsOfRoute) return null;
    const day = this.days.get(place.service_date);
    const routeKey = `${place.group}\n${place.route_id}\n${place.direction_id ?? ''}`;
    let stations = day.get(routeKey);
    if (!stations) day.set(routeKey, (stations = departuresByStation(schedule, place)));
    const list = stations.get(place.station_id);
    if (!list) return null;
    // the latest strictly before: two trips leaving at the same second are not a headway of 0
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (list[mid]! < departureS) lo = mid + 1;
      else hi = mid;
    }
    return lo > 0 ? departureS - list[lo - 1]! : null;
  }
}

function departuresByStation(schedule: ScheduleIndex, place: HeadwayPlace): Map<string, number[]> {
  const byStation = new Map<string, number[]>();
  for (const trip of schedule.tripsOfRoute!(place.route_id)) {
    if (trip.direction_id !== place.direction_id) continue;
    if (!schedule.runsOn(trip.service_id, place.service_date)) continue;
    for (const st of schedule.stopTimes(trip.trip_id)) {
      const s = st.departure_s ?? st.arrival_s;
      if (s === null) continue;
      const station = schedule.stop(st.stop_id)?.station_id ?? st.stop_id;
      let list = byStation.get(station);
      if (!list) byStation.set(station, (list = []));
      list.push(s);
    }
  }
  for (const list of byStation.values()) list.sort((a, b) => a - b);
  return byStation;
}
