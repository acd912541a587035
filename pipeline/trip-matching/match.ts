// The trip matching stage: a feed's strategies (feeds[].trip_matching) tried in order for each
// trip descriptor, every decision counted. See README, "Feeds that break the rules".
import type { FeedConfig } from '../../core/config.ts';
import type { ScheduledTrip, ScheduleIndex } from '../../core/ports.ts';
import type { MatchStrategy, TripMatching, TripRelationship } from '../../core/types.ts';
import type { TripDescriptorMsg } from '../gtfs-rt-types.ts';
import { parseGtfsTime, parseStartDate } from '../../core/dates.ts';
import { matchExact } from './exact.ts';
import { matchNyct } from './nyct.ts';
import type { MatchQuery, Strategy } from './query.ts';
import { matchStart } from './start.ts';
import { MatchTally } from './tally.ts';

const STRATEGIES: Record<MatchStrategy, Strategy> = { exact: matchExact, start: matchStart, nyct: matchNyct };

// the id first; an id that is not the schedule's may still carry NYCT's origin and path (nyct
// applies only to ids of that shape); the start time is the weakest evidence
const AUTO: readonly MatchStrategy[] = ['exact', 'nyct', 'start'];

// trips the feed itself says are not in the schedule: looked up by id only (route and mode), never
// given some scheduled trip that happens to start at the same time
const EXTRA_SERVICE: ReadonlySet<TripRelationship> = new Set(['added', 'new']);

export interface TripMatch {
  outcome: 'matched' | 'unmatched' | 'ambiguous';
  /** the strategy that decided; null when none applied */
  strategy: MatchStrategy | null;
  /** the matched trip, or a trip the feed names that does not run on the day */
  trip: ScheduledTrip | undefined;
  /** null unless matched: the caller falls back to start_date or the local date */
  service_date: string | null;
  previous_day: boolean;
}

export interface MatchRequest {
  td: TripDescriptorMsg;
  relationship: TripRelationship;
  schedule: ScheduleIndex | undefined;
  timezone: string;
  now_ms: number;
}

export class TripMatcher {
  readonly order: readonly MatchStrategy[];
  private readonly tally = new MatchTally();

  constructor(setting: FeedConfig['trip_matching'] = 'auto') {
    this.order = setting === 'auto' ? AUTO : typeof setting === 'string' ? [setting] : [...setting];
  }

  match(r: MatchRequest): TripMatch {
    const result = this.decide(r);
    this.tally.trip(result.outcome, result.previous_day);
    return result;
  }

  summary(): TripMatching | null {
    return this.tally.summary();
  }

  private decide(r: MatchRequest): TripMatch {
    const tripId = r.td.trip_id || null;
    if (!r.schedule)
      return { outcome: 'unmatched', strategy: null, trip: undefined, service_date: null, previous_day: false };
    const q: MatchQuery = {
      td: r.td,
      trip_id: tripId,
      relationship: r.relationship,
      start_date: parseStartDate(r.td.start_date),
      start_s: parseGtfsTime(r.td.start_time),
      schedule: r.schedule,
      timezone: r.timezone,
      now_ms: r.now_ms,
    };
    const order = EXTRA_SERVICE.has(r.relationship) ? this.order.filter((s) => s === 'exact') : this.order;
    let last: TripMatch = {
      outcome: 'unmatched',
      strategy: null,
      trip: undefined,
      service_date: null,
      previous_day: false,
    };
    for (const strategy of order) {
      const answer = STRATEGIES[strategy](q);
      if (answer === null) continue;
      this.tally.decision(strategy, answer.outcome);
      if (answer.outcome === 'matched') {
        return {
          outcome: 'matched',
          strategy,
          trip: answer.trip,
          service_date: answer.service_date,
          previous_day: answer.previous_day,
        };
      }
      const known = answer.outcome === 'unmatched' ? answer.known : undefined;
      // "several fit" says more than a later "none fits", so it is what the trip ends as
      if (last.outcome !== 'ambiguous' || known) {
        last = { outcome: answer.outcome, strategy, trip: known, service_date: null, previous_day: false };
      }
      // the feed's own id names a scheduled trip: another strategy must not swap in a different one
      if (known) break;
    }
    return last;
  }
}
