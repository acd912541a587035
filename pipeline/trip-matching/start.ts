// `start`: a trip the feed does not name by a known id, found by its route, direction (when
// given) and first departure on its start date, or at that time + 24 h on the day before.
import type { ScheduledTrip } from '../../core/ports.ts';
import { has } from '../gtfs-rt-types.ts';
import { decide, type ServiceDay, type Strategy } from './query.ts';
import { probeDays } from './service-day.ts';

export const matchStart: Strategy = (q) => {
  const routeId = q.route_id;
  if (!routeId || q.start_s === null) return null;
  const direction = has(q.td, 'direction_id') ? (q.td.direction_id ?? null) : null;
  const found: ({ trip: ScheduledTrip } & ServiceDay)[] = [];
  for (const day of probeDays(q, q.start_s)) {
    for (const trip of q.schedule.tripsStartingAt(routeId, direction, day.start_s)) {
      if (q.schedule.runsOn(trip.service_id, day.service_date)) {
        found.push({ trip, service_date: day.service_date, previous_day: day.previous_day });
      }
    }
  }
  return decide(found);
};
