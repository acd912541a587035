// The schedule's trips, routes, stops and trip shapes as the rules look them up: each answer kept
// per loaded schedule in an IdTable, as a feed names the same few thousand ids poll after poll and
// a schedule index does not change once loaded (a new import is a new index). The index's Maps
// would hash every id fresh from the decoder again.
import type { ScheduledRoute, ScheduledStop, ScheduledTrip, ScheduleIndex, ShapeLine } from '../../core/ports.ts';
import { IdTable } from './id-table.ts';

/**
 * Answers kept per table: past it the table starts afresh (a feed of ids made up per poll, or
 * weeks of trip ids), so memory stays at a few MB per schedule.
 */
const MAX_KEPT = 1 << 16;

class Remembered<V> {
  private readonly table = new IdTable<V>();
  constructor(private readonly lookup: (id: string) => V) {}

  get(id: string): V {
    const at = this.table.indexOf(id);
    if (at >= 0) return this.table.valueAt(at);
    const value = this.lookup(id);
    if (this.table.size >= MAX_KEPT) this.table.clear();
    this.table.add(id, value);
    return value;
  }
}

export class ScheduleLookups {
  private readonly trips: Remembered<ScheduledTrip | undefined>;
  private readonly routes: Remembered<ScheduledRoute | undefined>;
  private readonly stops: Remembered<ScheduledStop | undefined>;
  private readonly shapes: Remembered<ShapeLine | undefined> | null;

  constructor(schedule: ScheduleIndex) {
    this.trips = new Remembered((id) => schedule.trip(id));
    this.routes = new Remembered((id) => schedule.route(id));
    this.stops = new Remembered((id) => schedule.stop(id));
    const shapeOf = schedule.tripShape?.bind(schedule);
    this.shapes = shapeOf ? new Remembered(shapeOf) : null;
  }

  trip(id: string): ScheduledTrip | undefined {
    return this.trips.get(id);
  }

  route(id: string): ScheduledRoute | undefined {
    return this.routes.get(id);
  }

  stop(id: string): ScheduledStop | undefined {
    return this.stops.get(id);
  }

  /** undefined without shapes (or without one for the trip) */
  tripShape(id: string): ShapeLine | undefined {
    return this.shapes?.get(id);
  }
}

const kept = new WeakMap<ScheduleIndex, ScheduleLookups>();

export function scheduleLookups(schedule: ScheduleIndex): ScheduleLookups {
  let lookups = kept.get(schedule);
  if (!lookups) {
    lookups = new ScheduleLookups(schedule);
    kept.set(schedule, lookups);
  }
  return lookups;
}
