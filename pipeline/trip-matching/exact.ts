// `exact`: the realtime trip id is a trip id of the schedule.
import { UNMATCHED, type Strategy } from './query.ts';
import { serviceDayOf } from './service-day.ts';

export const matchExact: Strategy = (q) => {
  if (q.trip_id === null) return null;
  const trip = q.schedule.trip(q.trip_id);
  if (!trip) return UNMATCHED;
  const day = serviceDayOf(q, trip);
  return day ? { outcome: 'matched', trip, ...day } : { outcome: 'unmatched', known: trip };
};
