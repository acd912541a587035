// What every strategy is asked and what it may answer.
import type { ScheduledTrip, ScheduleIndex } from '../../core/ports.ts';
import type { TripRelationship } from '../../core/types.ts';
import type { TripDescriptorMsg } from '../gtfs-rt-types.ts';

export interface MatchQuery {
  td: TripDescriptorMsg;
  /** the realtime trip id; null when the descriptor has none */
  trip_id: string | null;
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
  | ({ outcome: 'matched'; trip: ScheduledTrip } & ServiceDay)
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
