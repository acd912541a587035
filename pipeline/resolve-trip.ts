// A TripDescriptor resolved against the static schedule: route, mode, direction, service date and
// the instant GTFS stop times count from.
import type { ScheduledStopTime, ScheduledTrip } from '../core/ports.ts';
import { localDate } from '../core/time-zone.ts';
import type { Mode, TripRelationship } from '../core/types.ts';
import { TRIP_RELATIONSHIP_NAMES, has, type TripDescriptorMsg } from './gtfs-rt-types.ts';
import type { NormalizeContext } from './normalize-context.ts';
import { candidateServiceDates, parseGtfsTime, parseStartDate, serviceDayOriginMs } from './service-time.ts';

export interface ResolvedTrip {
  trip_id: string;
  route_id: string | null;
  mode: Mode | null;
  direction_id: number | null;
  relationship: TripRelationship;
  /** always set: from start_date, inferred from the schedule, or the local date of the poll */
  service_date: string;
  in_schedule: boolean;
  scheduled: ScheduledTrip | undefined;
  stopTimes: readonly ScheduledStopTime[];
  /** epoch ms that the trip's GTFS times count from (shifted for DUPLICATED trips); null without schedule or times */
  origin_ms: number | null;
}

// Trips the schedule does not run as published, even when their trip_id names a scheduled trip.
const EXTRA_SERVICE: ReadonlySet<TripRelationship> = new Set(['added', 'new', 'duplicated']);

export function tripRelationship(td: TripDescriptorMsg | undefined): TripRelationship {
  if (!td || !has(td, 'schedule_relationship')) return 'scheduled';
  return (TRIP_RELATIONSHIP_NAMES[td.schedule_relationship ?? 0] ?? 'scheduled') as TripRelationship;
}

/**
 * `withTimes: false` skips the stop times and their origin when the caller needs only route, mode
 * and service date (vehicle positions: thousands per poll).
 */
export function resolveTrip(td: TripDescriptorMsg, tripId: string, ctx: NormalizeContext, withTimes = true): ResolvedTrip {
  const relationship = tripRelationship(td);
  const schedule = ctx.schedule;
  const scheduled = schedule?.trip(tripId);
  const routeId = (td.route_id || null) ?? scheduled?.route_id ?? null;
  const route = routeId && schedule ? schedule.route(routeId) : undefined;
  const explicitDate = parseStartDate(td.start_date);
  const needTimes = scheduled !== undefined && (withTimes || explicitDate === null);
  const stopTimes = needTimes ? schedule!.stopTimes(tripId) : [];
  const inferred = explicitDate === null && scheduled ? inferServiceDate(scheduled, stopTimes, ctx) : null;
  const serviceDate = explicitDate ?? inferred ?? localDate(ctx.header_ms ?? ctx.observed_ms, ctx.timezone);
  // in the schedule means scheduled on that service date, not merely listed in trips.txt
  const runs = scheduled !== undefined
    && (explicitDate === null ? inferred !== null : schedule!.runsOn(scheduled.service_id, explicitDate));

  let origin: number | null = scheduled && withTimes ? serviceDayOriginMs(serviceDate, ctx.timezone) : null;
  if (origin !== null && relationship === 'duplicated') {
    // a DUPLICATED trip runs the original's stop pattern from its own start_time
    const start = parseGtfsTime(td.start_time);
    const first = stopTimes[0];
    const firstS = first ? first.departure_s ?? first.arrival_s : null;
    if (start !== null && firstS != null) origin += (start - firstS) * 1000;
  }

  return {
    trip_id: tripId,
    route_id: routeId,
    mode: route?.mode ?? null,
    direction_id: has(td, 'direction_id') ? td.direction_id ?? null : scheduled?.direction_id ?? null,
    relationship,
    service_date: serviceDate,
    in_schedule: runs && !EXTRA_SERVICE.has(relationship),
    scheduled,
    stopTimes,
    origin_ms: origin,
  };
}

/**
 * Without start_date, the service date is the one (of yesterday, today, tomorrow in the agency
 * zone) on which the trip runs and whose scheduled span is nearest to now; after midnight a late
 * trip still belongs to yesterday's service.
 */
function inferServiceDate(
  trip: ScheduledTrip, stopTimes: readonly ScheduledStopTime[], ctx: NormalizeContext,
): string | null {
  const schedule = ctx.schedule!;
  const now = ctx.header_ms ?? ctx.observed_ms;
  const first = stopTimes[0];
  const last = stopTimes[stopTimes.length - 1];
  const startS = first ? first.departure_s ?? first.arrival_s ?? 0 : 0;
  const endS = last ? last.arrival_s ?? last.departure_s ?? startS : startS;
  let best: string | null = null;
  let bestDistance = Infinity;
  for (const date of candidateServiceDates(now, ctx.timezone)) {
    if (!schedule.runsOn(trip.service_id, date)) continue;
    const origin = serviceDayOriginMs(date, ctx.timezone);
    const start = origin + startS * 1000;
    const end = origin + endS * 1000;
    const distance = now < start ? start - now : now > end ? now - end : 0;
    if (distance < bestDistance) {
      best = date;
      bestDistance = distance;
    }
  }
  return best;
}
