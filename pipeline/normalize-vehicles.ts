// VehiclePosition entities → vehicle rows and the trips they show running.
import type { TripObservation, VehiclePosition } from '../core/types.ts';
import { VEHICLE_STOP_STATUS_NAMES, has, int64, type FeedEntityMsg } from './gtfs-rt-types.ts';
import { judgeTimestamp, secondsToMs, type NormalizeContext } from './normalize-context.ts';
import { resolveTrip } from './resolve-trip.ts';

export interface NormalizedVehicles {
  vehicles: VehiclePosition[];
  trips: TripObservation[];
}

export function normalizeVehicles(entities: readonly FeedEntityMsg[], ctx: NormalizeContext): NormalizedVehicles {
  const vehicles: VehiclePosition[] = [];
  const trips: TripObservation[] = [];
  const seenVehicles = new Set<string>();
  const seenTrips = new Set<string>();
  const schedule = ctx.schedule;

  for (const entity of entities) {
    const v = entity.vehicle!;
    const position = v.position;
    if (!position || !has(position, 'latitude') || !has(position, 'longitude')) {
      ctx.rejects.add('no_position');
      continue;
    }
    const lat = position.latitude;
    const lon = position.longitude;
    if (!(lat >= -90 && lat <= 90 && lon >= -180 && lon <= 180)) {
      ctx.rejects.add('lat_lon_out_of_range');
      continue;
    }
    // entity ids are stable per vehicle in practice; they stand in when the descriptor is empty
    const vehicleId = v.vehicle?.id || v.vehicle?.label || entity.id!;
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
    seenVehicles.add(vehicleId);

    const td = v.trip;
    let tripId = td?.trip_id || null;
    let routeId = td?.route_id || null;
    let mode = null;
    // without an id, a route and start time can still find the trip (trip matching, `start`)
    const trip = td && (tripId || (routeId && td.start_time)) ? resolveTrip(td, ctx, false) : null;
    if (trip) {
      tripId = trip.trip_id;
      routeId = trip.route_id;
      mode = trip.mode;
      const key = `${trip.service_date}|${tripId}`;
      if (!seenTrips.has(key)) {
        seenTrips.add(key);
        trips.push({
          feed_id: ctx.feed_id,
          service_date: trip.service_date,
          trip_id: tripId,
          route_id: routeId,
          mode,
          relationship: trip.relationship,
          skipped_stops: 0,
          source: 'vehicle_position',
          in_schedule: trip.in_schedule,
          observed_ms: ctx.observed_ms,
        });
      }
    } else if (routeId && schedule) {
      mode = schedule.route(routeId)?.mode ?? null;
    }

    vehicles.push({
      feed_id: ctx.feed_id,
      vehicle_id: vehicleId,
      route_id: routeId,
      trip_id: tripId,
      mode,
      lat,
      lon,
      bearing: has(position, 'bearing') ? position.bearing ?? null : null,
      speed_mps: has(position, 'speed') ? position.speed ?? null : null,
      stop_id: v.stop_id || null,
      current_status: has(v, 'current_status') ? VEHICLE_STOP_STATUS_NAMES[v.current_status ?? -1] ?? null : null,
      timestamp_ms: timestampMs,
      observed_ms: ctx.observed_ms,
    });
  }
  return { vehicles, trips };
}
