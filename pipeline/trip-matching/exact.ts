// `exact`: the realtime trip id is a trip id of the schedule.
import { UNMATCHED, type Strategy } from './query.ts';
import { serviceDayOf } from './service-day.ts';

export const matchExact: Strategy = (q) => {
  if (q.trip_id === null) return null;
  const trip = q.schedule.trip(q.trip_id);
  if (!trip) return UNMATCHED;
  const day = serviceDayOf(q, trip);
  // fields spelled out: a literal with a spread after its own fields takes the slow path, per trip
  return day
    ? { outcome: 'matched', trip, service_date: day.service_date, previous_day: day.previous_day }
    : { outcome: 'unmatched', known: trip };
};
