// The trips followed, by group, service date and trip id: a vehicle names its trip but not the
// instance, so it looks up every instance of the trip id here, once per vehicle and poll. Nested
// maps rather than one map keyed by the three joined: building and hashing a key string per
// vehicle was most of what following a vehicle that had not moved cost.
import type { TripState } from './trip-state.ts';

export class TripInstances {
  private readonly byGroup = new Map<string, Map<string, Map<string, TripState[]>>>();

  /** The instances of a trip followed now, in the order they were first seen; undefined when none. */
  of(group: string, serviceDate: string, tripId: string): readonly TripState[] | undefined {
    return this.byGroup.get(group)?.get(serviceDate)?.get(tripId);
  }

  add(state: TripState): void {
    let dates = this.byGroup.get(state.group);
    if (!dates) {
      dates = new Map();
      this.byGroup.set(state.group, dates);
    }
    let trips = dates.get(state.service_date);
    if (!trips) {
      trips = new Map();
      dates.set(state.service_date, trips);
    }
    const list = trips.get(state.trip_id);
    if (list) list.push(state);
    else trips.set(state.trip_id, [state]);
  }

  /** Forgets a closed trip; empty levels go with it, so memory follows the trips on the road. */
  remove(state: TripState): void {
    const dates = this.byGroup.get(state.group);
    const trips = dates?.get(state.service_date);
    const list = trips?.get(state.trip_id);
    if (!list) return;
    const at = list.indexOf(state);
    if (at >= 0) list.splice(at, 1);
    if (list.length > 0) return;
    trips!.delete(state.trip_id);
    if (trips!.size > 0) return;
    dates!.delete(state.service_date);
    if (dates!.size === 0) this.byGroup.delete(state.group);
  }
}
