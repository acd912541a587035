// TripUpdate entities → arrival rows and one trip observation per trip.
import type { Arrival, TripObservation } from '../core/types.ts';
import { buildTripArrivals } from './arrivals.ts';
import {
  STOP_RELATIONSHIP,
  has,
  int64,
  vehicleRef,
  type FeedEntityMsg,
  type TripDescriptorMsg,
  type TripUpdateMsg,
} from './gtfs-rt-types.ts';
import { judgeTimestamp, secondsToMs, type NormalizeContext } from './normalize-context.ts';
import { resolveTrip } from './resolve-trip.ts';
import { instanceNames, tripUpdateIdentity } from './trip-instances.ts';

export interface NormalizedTripUpdates {
  arrivals: Arrival[];
  trips: TripObservation[];
}

export function normalizeTripUpdates(entities: readonly FeedEntityMsg[], ctx: NormalizeContext): NormalizedTripUpdates {
  const arrivals: Arrival[] = [];
  const trips: TripObservation[] = [];
  // TripUpdates that pass the checks, grouped by trip and start date: in a group of more than
  // one, a report of a train already seen is rejected as duplicate_trip (the first is kept) and the
  // others are instances of the trip (trip-instances.ts), e.g. frequency-based trips that repeat a
  // trip_id with different start times
  const accepted: { tu: TripUpdateMsg; td: TripDescriptorMsg }[] = [];
  const groups = new Map<string, TripUpdateMsg[]>();
  // identities are compared only within groups of two or more, rare enough to build them lazily
  const identities = new Map<TripUpdateMsg, string>();
  const identityOf = (tu: TripUpdateMsg): string => {
    let c = identities.get(tu);
    if (c === undefined) {
      c = tripUpdateIdentity(tu);
      identities.set(tu, c);
    }
    return c;
  };

  for (const entity of entities) {
    const tu = entity.trip_update!;
    const td = tu.trip;
    const tripId = td?.trip_id;
    // without an id, a route and start time can still find the trip (trip matching, `start`)
    if (!td || !(tripId || (td.route_id && td.start_time))) {
      ctx.rejects.add('missing_trip');
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
    // a trip without id is named by its route, direction and start time
    const key = tripId
      ? `${tripId}|${td.start_date ?? ''}`
      : `|${td.start_date ?? ''}|${td.start_time ?? ''}|${td.route_id}|${td.direction_id ?? ''}`;
    const group = groups.get(key);
    if (!group) groups.set(key, [tu]);
    else {
      const identity = identityOf(tu);
      if (group.some((other) => identityOf(other) === identity)) {
        ctx.rejects.add('duplicate_trip');
        continue;
      }
      group.push(tu);
    }
    accepted.push({ tu, td });
  }
  const instanceOf = new Map<TripUpdateMsg, string | null>();
  for (const group of groups.values()) {
    if (group.length < 2) continue;
    const names = instanceNames(group);
    group.forEach((tu, i) => {
      instanceOf.set(tu, names[i]!);
    });
  }

  for (const { tu, td } of accepted) {
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
      schedule_id: ctx.schedule_id,
      service_date: trip.service_date,
      trip_id: trip.trip_id,
      feed_trip_id: trip.feed_trip_id,
      route_id: trip.route_id,
      mode: trip.mode,
      relationship: trip.relationship,
      skipped_stops: skipped,
      source: 'trip_update',
      in_schedule: trip.in_schedule,
      observed_ms: ctx.observed_ms,
    });
    const rows = buildTripArrivals(
      {
        trip,
        updates,
        tripDelay: has(tu, 'delay') ? (tu.delay ?? null) : null,
        vehicleId: vehicleRef(tu.vehicle, td),
        tripInstance: instanceOf.get(tu) ?? null,
      },
      ctx,
    );
    for (const row of rows) arrivals.push(row);
  }
  return { arrivals, trips };
}
