// Domain objects (epoch ms, feed ids) → the public form REST responses and event data share
// (ISO 8601, `source`, `line` for rail). One function per thing, so an event and the REST
// resource for the same thing cannot drift apart; each channel adds only what is its own
// (REST: freshness, age, station names; events: the previous freshness of a feed).
import type { EventData } from './events.ts';
import type { FeedHealth } from './ports.ts';
import { publicText } from './public-text.ts';
import type { Alert, Arrival, VehiclePosition } from './types.ts';
import { iso, isoOr } from './dates.ts';

export type PublicAlert = EventData<'alert.created'>;
export type PublicVehicle = EventData<'vehicle.position'>;
export type PublicArrival = EventData<'arrival.updated'>['arrivals'][number];
export type PublicSource = Omit<EventData<'feed.stale'>, 'previous_freshness'>;

export function publicAlert(a: Alert): PublicAlert {
  return {
    id: a.id,
    source: a.feed_id,
    entity_id: a.entity_id,
    modes: [...a.modes],
    status: a.status,
    impact: a.impact,
    cause: a.cause,
    severity: a.severity,
    header: { ...a.header },
    description: { ...a.description },
    url: { ...a.url },
    active_periods: a.active_periods.map((p) => ({ start: iso(p.start_ms), end: iso(p.end_ms) })),
    routes: [...a.routes],
    stations: [...a.stations],
    trips: [...a.trips],
    version: a.version,
    first_seen_at: isoOr(a.first_seen_ms, a.updated_ms),
    updated_at: isoOr(a.updated_ms, a.first_seen_ms),
    resolved_at: iso(a.resolved_ms),
  };
}

/** When a vehicle reported its position: a report without a usable timestamp is dated by the poll that saw it. */
export function reportedMs(v: VehiclePosition): number {
  return iso(v.timestamp_ms) ? v.timestamp_ms : v.observed_ms;
}

export function publicVehicle(v: VehiclePosition): PublicVehicle {
  return {
    id: `${v.feed_id}:${v.vehicle_id}`,
    source: v.feed_id,
    vehicle_id: v.vehicle_id,
    route_id: v.route_id,
    trip_id: v.trip_id,
    feed_trip_id: v.feed_trip_id ?? null,
    lat: v.lat,
    lon: v.lon,
    position_source: v.position_source,
    bearing: v.bearing,
    speed_mps: v.speed_mps,
    stop_id: v.stop_id,
    current_status: v.current_status,
    timestamp: isoOr(reportedMs(v), v.observed_ms),
    observed_at: isoOr(v.observed_ms, 0),
  };
}

export function arrivalId(a: Arrival): string {
  const trip = a.trip_instance === null ? a.trip_id : `${a.trip_id}~${a.trip_instance}`;
  return `${a.feed_id}:${trip}:${a.stop_sequence ?? a.stop_id}`;
}

export function publicArrival(a: Arrival): PublicArrival {
  return {
    id: arrivalId(a),
    source: a.feed_id,
    trip_id: a.trip_id,
    feed_trip_id: a.feed_trip_id ?? null,
    trip_instance: a.trip_instance,
    line: a.mode === 'rail' ? a.route_id : null,
    station_id: a.station_id,
    stop_id: a.stop_id,
    stop_sequence: a.stop_sequence,
    direction_id: a.direction_id,
    service_date: a.service_date,
    scheduled_at: iso(a.scheduled_ms),
    predicted_at: iso(a.predicted_ms),
    delay_s: a.delay_s === null ? null : Math.round(a.delay_s),
    delay_state: a.delay_state,
    trip_relationship: a.trip_relationship,
    in_schedule: a.in_schedule,
    vehicle_id: a.vehicle_id,
    observed_at: isoOr(a.observed_ms, 0),
  };
}

export function publicSource(h: FeedHealth): PublicSource {
  return {
    source: h.feed_id,
    kind: h.kind,
    freshness: h.freshness,
    header_timestamp: iso(h.header_timestamp_ms),
    last_poll_at: iso(h.last_poll_ms),
    last_success_at: iso(h.last_success_ms),
    last_status: h.last_status,
    // API keys are held by third parties: the feed's URL, tokens and paths stay with the operator
    last_error: publicText(h.last_error),
  };
}
