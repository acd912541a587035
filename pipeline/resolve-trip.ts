// A TripDescriptor resolved against the static schedule through the trip matching stage
// (pipeline/trip-matching/): route, mode, direction, service date and the instant GTFS stop
// times count from.
import type { ScheduledStopTime, ScheduledTrip } from '../core/ports.ts';
import { localDate, parseGtfsTime, parseStartDate, serviceDayOriginMs } from '../core/dates.ts';
import type { Mode, TripRelationship } from '../core/types.ts';
import { TRIP_RELATIONSHIP_NAMES, has, type TripDescriptorMsg } from './gtfs-rt-types.ts';
import type { NormalizeContext } from './normalize-context.ts';
import type { MatchRequest } from './trip-matching/match.ts';

export interface ResolvedTrip {
  /** the schedule's id of the matched trip, else the feed's own */
  trip_id: string;
  /** the feed's own trip id when it is not `trip_id` (trip matching gave another); else null */
  feed_trip_id: string | null;
  route_id: string | null;
  mode: Mode | null;
  direction_id: number | null;
  relationship: TripRelationship;
  /** always set: from the match, from start_date, or the local date of the poll */
  service_date: string;
  in_schedule: boolean;
  scheduled: ScheduledTrip | undefined;
  stopTimes: readonly ScheduledStopTime[];
  /** epoch ms that the trip's GTFS times count from (shifted for DUPLICATED trips); null without schedule or times */
  origin_ms: number | null;
}

/** A vehicle's trip needs no stop times: one shared empty list rather than one per vehicle. */
const NO_STOP_TIMES: readonly ScheduledStopTime[] = Object.freeze([]);

// Trips the schedule does not run as published, even when their trip_id names a scheduled trip.
const EXTRA_SERVICE: ReadonlySet<TripRelationship> = new Set(['added', 'new', 'duplicated']);

export function tripRelationship(td: TripDescriptorMsg | undefined): TripRelationship {
  if (!td || !has(td, 'schedule_relationship')) return 'scheduled';
  return (TRIP_RELATIONSHIP_NAMES[td.schedule_relationship ?? 0] ?? 'scheduled') as TripRelationship;
}

/** What trip matching is asked about a descriptor of this poll. */
export function matchRequest(td: TripDescriptorMsg, ctx: NormalizeContext): MatchRequest {
  return {
    td,
    relationship: tripRelationship(td),
    schedule: ctx.schedule,
    timezone: ctx.timezone,
    now_ms: ctx.header_ms ?? ctx.observed_ms,
  };
}

/**
 * Null when the descriptor names no trip and no strategy found one. `withTimes: false` skips the
 * stop times and their origin when the caller needs only route, mode and service date (vehicle
 * positions: thousands per poll).
 */
export function resolveTrip(td: TripDescriptorMsg, ctx: NormalizeContext, withTimes = true): ResolvedTrip | null {
  const request = matchRequest(td, ctx);
  const { relationship, schedule, now_ms: now } = request;
  const match = ctx.matcher.match(request);
  const scheduled = match.trip;
  const feedTripId = td.trip_id || null;
  const tripId = match.outcome === 'matched' ? scheduled!.trip_id : feedTripId;
  if (tripId === null) return null;
  const routeId = (td.route_id ? ctx.matcher.route(td.route_id) : null) ?? scheduled?.route_id ?? null;
  const route = routeId && schedule ? schedule.route(routeId) : undefined;
  const serviceDate = match.service_date ?? parseStartDate(td.start_date) ?? localDate(now, ctx.timezone);
  const stopTimes = scheduled && withTimes ? schedule!.stopTimes(scheduled.trip_id) : NO_STOP_TIMES;

  let origin: number | null = scheduled && withTimes ? serviceDayOriginMs(serviceDate, ctx.timezone) : null;
  if (origin !== null && relationship === 'duplicated') {
    // a DUPLICATED trip runs the original's stop pattern from its own start_time
    const start = parseGtfsTime(td.start_time);
    const first = stopTimes[0];
    const firstS = first ? (first.departure_s ?? first.arrival_s) : null;
    if (start !== null && firstS != null) origin += (start - firstS) * 1000;
  }

  return {
    trip_id: tripId,
    feed_trip_id: feedTripId === tripId ? null : feedTripId,
    route_id: routeId,
    // a route the schedule knows keeps its mode, even none (ferries); an unknown one takes the feed's
    mode: route ? route.mode : (ctx.default_mode ?? null),
    direction_id: has(td, 'direction_id') ? (td.direction_id ?? null) : (scheduled?.direction_id ?? null),
    relationship,
    service_date: serviceDate,
    // in the schedule means scheduled on that service date, not merely listed in trips.txt
    in_schedule: match.outcome === 'matched' && !EXTRA_SERVICE.has(relationship),
    scheduled,
    stopTimes,
    origin_ms: origin,
  };
}
