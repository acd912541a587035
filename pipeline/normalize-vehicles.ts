// VehiclePosition entities → vehicle rows and the trips they show running.
import type { Mode, PositionSource, TripObservation, VehiclePosition } from '../core/types.ts';
import {
  VEHICLE_STOP_STATUS_NAMES,
  has,
  int64,
  vehicleRef,
  type FeedEntityMsg,
  type VehiclePositionMsg,
} from './gtfs-rt-types.ts';
import { judgeTimestamp, secondsToMs, type NormalizeContext } from './normalize-context.ts';
import { resolveTrip, type ResolvedTrip } from './resolve-trip.ts';

export interface NormalizedVehicles {
  vehicles: VehiclePosition[];
  trips: TripObservation[];
}

interface Placement {
  lat: number;
  lon: number;
  source: PositionSource;
  stop_id: string | null;
}

const inRange = (lat: number, lon: number): boolean => lat >= -90 && lat <= 90 && lon >= -180 && lon <= 180;

export function normalizeVehicles(entities: readonly FeedEntityMsg[], ctx: NormalizeContext): NormalizedVehicles {
  const vehicles: VehiclePosition[] = [];
  const trips: TripObservation[] = [];
  const seenVehicles = new Set<string>();
  // trips by service date rather than by a `date|trip` string: no string built and hashed per
  // vehicle (a poll has one or two dates), and trip ids from the schedule come with their hash
  const seenTrips = new Map<string, Set<string>>();
  const schedule = ctx.schedule;
  const defaultMode = ctx.default_mode ?? null;

  for (const entity of entities) {
    const v = entity.vehicle!;
    const position = v.position;
    const hasFix =
      position !== undefined && position !== null && has(position, 'latitude') && has(position, 'longitude');
    // coordinates that are there but impossible are a broken fix, not a missing one: no stop stands in
    if (hasFix && !inRange(position.latitude!, position.longitude!)) {
      ctx.rejects.add('lat_lon_out_of_range');
      continue;
    }
    // entity ids are stable per vehicle in practice (not NYCT's); they stand in when nothing names it
    const vehicleId = vehicleRef(v.vehicle, v.trip) ?? entity.id!;
    if (seenVehicles.has(vehicleId)) {
      ctx.rejects.add('duplicate_entity');
      continue;
    }
    let timestampMs = ctx.header_ms ?? ctx.observed_ms;
    if (has(v, 'timestamp')) {
      const raw = int64(v.timestamp) ?? 0;
      if (raw > 0) {
        timestampMs = secondsToMs(raw).ms;
        const verdict = judgeTimestamp(timestampMs, ctx);
        if (verdict !== 'ok') {
          ctx.rejects.add(verdict);
          continue;
        }
      }
    }

    const td = v.trip;
    let tripId = td?.trip_id || null;
    let routeId = td?.route_id ? ctx.matcher.route(td.route_id) : null;
    // without an id, a route and start time can still find the trip (trip matching, `start`)
    const trip = td && (tripId || (routeId && td.start_time)) ? resolveTrip(td, ctx, false) : null;
    // a fix is read where it is, no placement object per vehicle: only a stop's place is looked up
    const placement: Placement | null = hasFix ? null : placeAtStop(v, trip, ctx);
    if (!hasFix && !placement) {
      ctx.rejects.add('no_position');
      continue;
    }
    seenVehicles.add(vehicleId);

    let mode: Mode | null;
    if (trip) {
      tripId = trip.trip_id;
      routeId = trip.route_id;
      mode = trip.mode;
      let seenOnDate = seenTrips.get(trip.service_date);
      if (!seenOnDate) {
        seenOnDate = new Set();
        seenTrips.set(trip.service_date, seenOnDate);
      }
      const seenBefore = seenOnDate.size;
      seenOnDate.add(tripId);
      if (seenOnDate.size > seenBefore) {
        trips.push({
          feed_id: ctx.feed_id,
          schedule_id: ctx.schedule_id,
          service_date: trip.service_date,
          trip_id: tripId,
          feed_trip_id: trip.feed_trip_id,
          route_id: routeId,
          mode,
          relationship: trip.relationship,
          skipped_stops: 0,
          source: 'vehicle_position',
          in_schedule: trip.in_schedule,
          observed_ms: ctx.observed_ms,
        });
      }
    } else {
      // a route the schedule knows keeps its mode, even none; anything else takes the feed's
      const route = routeId && schedule ? schedule.route(routeId) : undefined;
      mode = route ? route.mode : defaultMode;
    }

    vehicles.push({
      feed_id: ctx.feed_id,
      schedule_id: ctx.schedule_id,
      vehicle_id: vehicleId,
      route_id: routeId,
      trip_id: tripId,
      feed_trip_id: trip ? trip.feed_trip_id : null,
      mode,
      lat: placement ? placement.lat : position!.latitude!,
      lon: placement ? placement.lon : position!.longitude!,
      position_source: placement ? placement.source : 'gps',
      bearing: hasFix && has(position, 'bearing') ? (position.bearing ?? null) : null,
      speed_mps: hasFix && has(position, 'speed') ? (position.speed ?? null) : null,
      stop_id: placement ? placement.stop_id : v.stop_id || null,
      current_status: has(v, 'current_status') ? (VEHICLE_STOP_STATUS_NAMES[v.current_status ?? -1] ?? null) : null,
      timestamp_ms: timestampMs,
      observed_ms: ctx.observed_ms,
      service_date: trip?.service_date ?? null,
      stop_sequence: has(v, 'current_stop_sequence') ? (v.current_stop_sequence ?? null) : null,
    });
  }
  return { vehicles, trips };
}

/**
 * A vehicle without coordinates (NYCT's subway reports only where a train stands or heads) is
 * placed at its stop: `stop_id`, else the trip's stop at `current_stop_sequence` (the current
 * stop when STOPPED_AT, the next one otherwise). The schedule gives the stop's coordinates, or its
 * parent station's when the platform has none. null when neither names a stop the schedule places.
 */
export function placeAtStop(v: VehiclePositionMsg, trip: ResolvedTrip | null, ctx: NormalizeContext): Placement | null {
  const schedule = ctx.schedule;
  if (!schedule) return null;
  const at = (stopId: string): Placement | null => {
    const stop = schedule.stop(stopId);
    if (!stop) return null;
    const located = stop.lat !== null && stop.lon !== null ? stop : schedule.stop(stop.station_id);
    if (!located || located.lat === null || located.lon === null || !inRange(located.lat, located.lon)) return null;
    return { lat: located.lat, lon: located.lon, source: 'stop', stop_id: stopId };
  };
  const byId = v.stop_id ? at(v.stop_id) : null;
  if (byId) return byId;
  // the scheduled trip's own id: a realtime id matched by another rule differs from it
  const scheduledTripId = trip?.scheduled?.trip_id;
  if (!has(v, 'current_stop_sequence') || !scheduledTripId) return null;
  const sequence = v.current_stop_sequence;
  const stopTime = schedule.stopTimes(scheduledTripId).find((st) => st.stop_sequence === sequence);
  return stopTime ? at(stopTime.stop_id) : null;
}
