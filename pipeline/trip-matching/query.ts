// What every strategy is asked and what it may answer.
import type { ScheduledTrip, ScheduleIndex } from '../../core/ports.ts';
import type { TripRelationship } from '../../core/types.ts';
import type { TripDescriptorMsg } from '../gtfs-rt-types.ts';

export interface MatchQuery {
  td: TripDescriptorMsg;
  /** the realtime trip id; null when the descriptor has none */
  trip_id: string | null;
  /** the descriptor's route_id through the feed's route aliases; null when it has none */
  route_id: string | null;
  /** a route id the feed writes (also inside its trip ids) → the schedule's (feeds[].route_aliases) */
  alias(routeId: string): string;
  /**
   * Scheduled trip runs (`trip_id|service_date`) the snapshot gives to some train: to one named
   * by its own id, or to the least late of the trains loosely matched to it; the value is that
   * train's feed key (tripKey), '' when it is not a loose match. Empty until the snapshot is
   * prepared (TripMatcher.prepare).
   */
  given: ReadonlyMap<string, string>;
  relationship: TripRelationship;
  /** start_date as 'YYYY-MM-DD', null when absent or malformed */
  start_date: string | null;
  /** start_time in seconds, null when absent or malformed */
  start_s: number | null;
  schedule: ScheduleIndex;
  timezone: string;
  /** the instant the feed describes (header time, else poll time) */
  now_ms: number;
}

export interface ServiceDay {
  service_date: string;
  /** the day before start_date: a trip past 24:00 published with the calendar date */
  previous_day: boolean;
}

export type StrategyAnswer =
  /** `late_s`: how far the train runs behind the trip it was loosely given (nyct_loose only) */
  | ({ outcome: 'matched'; trip: ScheduledTrip; late_s?: number } & ServiceDay)
  /** several trips fit equally well; none is chosen */
  | { outcome: 'ambiguous' }
  /**
   * nothing fits. `known` is a trip the id names that does not run on the day: it still gives
   * route and mode, and no later strategy may replace the feed's own id with another trip.
   */
  | { outcome: 'unmatched'; known?: ScheduledTrip };

/** A strategy answers null when the descriptor lacks what it needs (not counted). */
export type Strategy = (q: MatchQuery) => StrategyAnswer | null;

export const UNMATCHED: StrategyAnswer = Object.freeze({ outcome: 'unmatched' });
export const AMBIGUOUS: StrategyAnswer = Object.freeze({ outcome: 'ambiguous' });

/** One answer from the candidates a lookup found on each probed day. */
export function decide(found: readonly ({ trip: ScheduledTrip } & ServiceDay)[]): StrategyAnswer {
  if (found.length === 0) return UNMATCHED;
  if (found.length > 1) return AMBIGUOUS;
  return { outcome: 'matched', ...found[0]! };
}

/** A run of a scheduled trip: what one train at most may be given. */
export const runKey = (tripId: string, serviceDate: string): string => `${tripId}|${serviceDate}`;

/**
 * The feed's own name of a train, shared by its trip update and its vehicle (which may leave out
 * start_date): its trip id.
 */
export const tripKey = (q: Pick<MatchQuery, 'trip_id'>): string => q.trip_id ?? '';
