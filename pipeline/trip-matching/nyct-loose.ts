// `nyct_loose`: an NYCT id whose origin no scheduled trip has. NYCT's realtime ids carry the
// origin time of the timetable the dispatchers run, which for a train put back during the day is
// later than the published one (philmatu/nyct-rt-proxy's LazyTripMatcher: "coerced" matches).
// Such a train gets the nearest earlier scheduled trip of its route and direction, running on the
// day, with a path that fits as in `nyct`, when it leaves 0–3,600 s after that trip; before 03:00
// also the previous service day's trips past 24:00. A scheduled run goes to one train only:
// the one naming it by its own id, else the least late (TripMatcher.prepare).
import type { ScheduledTrip } from '../../core/ports.ts';
import { nyctRealtimeId, pathFits } from './nyct.ts';
import { decide, runKey, tripKey, UNMATCHED, type ServiceDay, type Strategy, type StrategyAnswer } from './query.ts';
import { probeDays } from './service-day.ts';

/** the latest a train may leave after the scheduled trip it is given, inclusive */
export const LOOSE_MAX_LATE_S = 3_600;
/** origins before 03:00 (hundredths of a minute) may be the previous service day's trips past 24:00 */
const PREVIOUS_DAY_BEFORE = 3 * 60 * 100;
const DAY_S = 86_400;

type Candidate = { trip: ScheduledTrip } & ServiceDay;

export const matchNyctLoose: Strategy = (q) => {
  const id = nyctRealtimeId(q);
  if (!id) return null;
  // fifths of a second: origins are hundredths of a minute (0.6 s), departures whole seconds,
  // so lateness compares in integers (3,601 s is not 3,600.000…1)
  const originFifths = id.origin * 3;
  const days = probeDays(q, Math.round(id.origin * 0.6));
  const probed = id.origin < PREVIOUS_DAY_BEFORE ? days : days.slice(0, 1);
  for (const route of id.routes) {
    const trips = q.schedule.nyctRouteTrips(route, id.direction);
    if (trips.length === 0) continue;
    let best = Infinity;
    let nearest: Candidate[] = [];
    for (const [k, day] of probed.entries()) {
      const at = originFifths + k * DAY_S * 5;
      // walk back from the last trip leaving at or before the train, while still within the window
      for (let i = lastAtOrBefore(trips, at) - 1; i >= 0; i--) {
        const c = trips[i]!;
        const late = at - c.start_s * 5;
        if (late > LOOSE_MAX_LATE_S * 5 || late > best) break;
        if (!pathFits(c.path, id.path) || !q.schedule.runsOn(c.trip.service_id, day.service_date)) continue;
        if (late < best) {
          best = late;
          nearest = [];
        }
        nearest.push({ trip: c.trip, service_date: day.service_date, previous_day: day.previous_day });
      }
    }
    if (nearest.length === 0) continue;
    return givenToThisTrain(decide(nearest), q, best / 5);
  }
  return UNMATCHED;
};

/** The nearest trip, unless the snapshot gives it to another train: then none (no older trip is tried). */
function givenToThisTrain(answer: StrategyAnswer, q: Parameters<Strategy>[0], lateS: number): StrategyAnswer {
  if (answer.outcome !== 'matched') return answer;
  const owner = q.given.get(runKey(answer.trip.trip_id, answer.service_date));
  if (owner !== undefined && owner !== tripKey(q)) return UNMATCHED;
  return { ...answer, late_s: lateS };
}

/** Index past the last trip whose first departure (in fifths of a second) is at or before `at`. */
function lastAtOrBefore(trips: readonly { start_s: number }[], at: number): number {
  let lo = 0;
  let hi = trips.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (trips[mid]!.start_s * 5 <= at) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
