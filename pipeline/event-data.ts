// Domain objects → event data: the public forms REST shares (core/public-forms.ts) and what only
// events carry (partial arrival updates, removed stops, a feed's previous freshness), checked at
// compile time against the event schemas (core/event-schemas.ts). Pure functions.
import { publicAlert, publicArrival, publicSource, publicVehicle, type PublicArrival } from '../core/public-forms.ts';
import type { EventData } from '../core/events.ts';
import type { FeedHealth } from '../core/ports.ts';
import type { Alert, Arrival, Freshness, Mode, TripObservation, VehiclePosition } from '../core/types.ts';
import { isoOr } from '../core/dates.ts';

export const alertData: (a: Alert) => EventData<'alert.created'> = publicAlert;
export const vehicleData: (v: VehiclePosition) => EventData<'vehicle.position'> = publicVehicle;

export type EventArrival = PublicArrival;
export const arrivalRow: (a: Arrival) => EventArrival = publicArrival;

/** `route_id` for bus and streetcar, `line` for rail, as REST names them. */
export function tripScope(
  mode: Mode | null,
  routeId: string | null,
): { mode: Mode | null; route_id: string | null; line: string | null } {
  return { mode, route_id: mode === 'rail' ? null : routeId, line: mode === 'rail' ? routeId : null };
}

export function arrivalUpdate(
  first: Arrival,
  partial: boolean,
  stopCount: number,
  changed: readonly Arrival[],
  removed: ReadonlyArray<{ stop_id: string; stop_sequence: number | null }>,
): EventData<'arrival.updated'> {
  return {
    source: first.feed_id,
    trip_id: first.trip_id,
    trip_instance: first.trip_instance,
    ...tripScope(first.mode, first.route_id),
    direction_id: first.direction_id,
    service_date: first.service_date,
    trip_relationship: first.trip_relationship,
    partial,
    stop_count: stopCount,
    arrivals: changed.map(arrivalRow),
    removed_stops: removed.map((r) => ({ stop_id: r.stop_id, stop_sequence: r.stop_sequence })),
  };
}

export function tripCancellation(
  t: TripObservation & { relationship: 'canceled' | 'deleted' },
): EventData<'trip.canceled'> {
  return {
    source: t.feed_id,
    trip_id: t.trip_id,
    service_date: t.service_date,
    ...tripScope(t.mode, t.route_id),
    trip_relationship: t.relationship,
    in_schedule: t.in_schedule,
    observed_at: isoOr(t.observed_ms, 0),
  };
}

export function feedChange(h: FeedHealth, previous: Freshness): EventData<'feed.stale'> {
  return { ...publicSource(h), previous_freshness: previous };
}
