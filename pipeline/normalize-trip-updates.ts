// TripUpdate entities → arrival rows and one trip observation per trip.
import type { Arrival, TripObservation } from '../core/types.ts';
import { buildTripArrivals } from './arrivals.ts';
import { STOP_RELATIONSHIP, has, int64, type FeedEntityMsg } from './gtfs-rt-types.ts';
import { judgeTimestamp, secondsToMs, type NormalizeContext } from './normalize-context.ts';
import { resolveTrip } from './resolve-trip.ts';

export interface NormalizedTripUpdates {
  arrivals: Arrival[];
  trips: TripObservation[];
}

export function normalizeTripUpdates(entities: readonly FeedEntityMsg[], ctx: NormalizeContext): NormalizedTripUpdates {
  const arrivals: Arrival[] = [];
  const trips: TripObservation[] = [];
  // the same trip twice in one feed: the first is kept. start_date/start_time are part of the key
  // because frequency-based trips legitimately repeat a trip_id with different starts.
  const seen = new Set<string>();

  for (const entity of entities) {
    const tu = entity.trip_update!;
    const td = tu.trip;
    const tripId = td?.trip_id;
    // without an id, a route and start time can still find the trip (trip matching, `start`)
    if (!td || !(tripId || (td.route_id && td.start_time))) {
      ctx.rejects.add('missing_trip');
      continue;
    }
    const key = `${tripId ?? ''}|${td.start_date ?? ''}|${td.start_time ?? ''}|${tripId ? '' : td.route_id}|${tripId ? '' : td.direction_id ?? ''}`;
    if (seen.has(key)) {
      ctx.rejects.add('duplicate_trip');
      continue;
    }
    if (has(tu, 'timestamp')) {
      const raw = int64(tu.timestamp) ?? 0;
      const verdict = raw > 0 ? judgeTimestamp(secondsToMs(raw).ms, ctx) : 'ok';
      if (verdict !== 'ok') {
        ctx.rejects.add(verdict);
        continue;
      }
    }
    seen.add(key);

    const trip = resolveTrip(td, ctx);
    if (!trip) {
      ctx.rejects.add('missing_trip');
      continue;
    }
    const updates = tu.stop_time_update ?? [];
    let skipped = 0;
    for (const u of updates) if (u.schedule_relationship === STOP_RELATIONSHIP.SKIPPED) skipped++;
    trips.push({
      feed_id: ctx.feed_id,
      service_date: trip.service_date,
      trip_id: trip.trip_id,
      route_id: trip.route_id,
      mode: trip.mode,
      relationship: trip.relationship,
      skipped_stops: skipped,
      source: 'trip_update',
      in_schedule: trip.in_schedule,
      observed_ms: ctx.observed_ms,
    });
    const rows = buildTripArrivals({
      trip,
      updates,
      tripDelay: has(tu, 'delay') ? tu.delay ?? null : null,
      vehicleId: tu.vehicle?.id || tu.vehicle?.label || null,
    }, ctx);
    for (const row of rows) arrivals.push(row);
  }
  return { arrivals, trips };
}
