// The trip matching stage: a feed's strategies (feeds[].trip_matching) tried in order for each
// trip descriptor, every decision counted. See docs/guides/real-feeds.md.
import type { FeedConfig } from '../../core/config.ts';
import type { ScheduledTrip, ScheduleIndex } from '../../core/ports.ts';
import type { MatchStrategy, TripMatching, TripRelationship } from '../../core/types.ts';
import type { TripDescriptorMsg } from '../gtfs-rt-types.ts';
import { parseGtfsTime, parseStartDate } from '../../core/dates.ts';
import { parseNyctTripId } from '../../core/nyct-trip-id.ts';
import { matchExact } from './exact.ts';
import { matchNyct } from './nyct.ts';
import { matchNyctLoose } from './nyct-loose.ts';
import { runKey, tripKey, type MatchQuery, type Strategy } from './query.ts';
import { matchStart } from './start.ts';
import { MatchTally, type Outcome } from './tally.ts';

const STRATEGIES: Record<MatchStrategy, Strategy> = {
  exact: matchExact,
  start: matchStart,
  nyct: matchNyct,
  nyct_loose: matchNyctLoose,
};

// the id first; an id that is not the schedule's may still carry NYCT's origin and path (nyct
// applies only to ids of that shape); the start time is weaker evidence, and a train merely
// leaving some minutes after a scheduled trip the weakest
const AUTO: readonly MatchStrategy[] = ['exact', 'nyct', 'start', 'nyct_loose'];

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
  /** seconds the train runs behind the scheduled trip it was loosely given (nyct_loose); else null */
  late_s: number | null;
}

export interface MatchRequest {
  td: TripDescriptorMsg;
  relationship: TripRelationship;
  schedule: ScheduleIndex | undefined;
  timezone: string;
  now_ms: number;
}

/** A trip's match and each strategy's decision on the way, counted when the trip is looked up. */
interface Decided {
  match: TripMatch;
  steps: readonly (readonly [MatchStrategy, Outcome])[];
}

/** The steps of a trip matched by the first strategy tried, most trips: shared, not built per trip. */
const MATCHED_FIRST = Object.fromEntries(
  (Object.keys(STRATEGIES) as MatchStrategy[]).map((s) => [s, Object.freeze([Object.freeze([s, 'matched'] as const)])]),
) as Record<MatchStrategy, Decided['steps']>;

const NONE: TripMatch = Object.freeze({
  outcome: 'unmatched',
  strategy: null,
  trip: undefined,
  service_date: null,
  previous_day: false,
  late_s: null,
});

/** One per poll: its tally and its snapshot's decisions belong to that poll. */
export class TripMatcher {
  readonly order: readonly MatchStrategy[];
  private readonly tally = new MatchTally();
  private readonly aliases: ReadonlyMap<string, string>;
  private given: ReadonlyMap<string, string> = new Map();
  private readonly prepared = new Map<TripDescriptorMsg, Decided>();

  constructor(setting: FeedConfig['trip_matching'] = 'auto', routeAliases: FeedConfig['route_aliases'] = {}) {
    this.order = setting === 'auto' ? AUTO : typeof setting === 'string' ? [setting] : [...setting];
    this.aliases = new Map(Object.entries(routeAliases));
  }

  /** The schedule's route id for one the feed writes (feeds[].route_aliases). */
  route(routeId: string): string {
    return this.aliases.get(routeId) ?? routeId;
  }

  private readonly alias = (routeId: string): string => this.route(routeId);

  /**
   * Decides every trip of a snapshot before any is looked up, so that a scheduled run is given to
   * one train whatever their order in the feed: to the train naming it by its own id (or found by
   * any other strategy), else to the least late of the trains loosely matched to it; the others
   * stay unmatched. Without it (a caller that looks trips up one by one) nyct_loose decides each
   * trip alone.
   */
  prepare(descriptors: readonly TripDescriptorMsg[], requestOf: (td: TripDescriptorMsg) => MatchRequest): void {
    this.prepared.clear();
    this.given = new Map();
    if (!this.order.includes('nyct_loose')) return;
    // only an NYCT-shaped id can be matched loosely: those are decided first, and the others only
    // when one was (their runs go to the trains naming them by their own ids). Until then nothing
    // is given, so a trip is decided alike now or when looked up: most feeds have no such ids, and
    // deciding and keeping every trip up front was a fifth of normalizing a 5,000-vehicle poll.
    const others: TripDescriptorMsg[] = [];
    const loose: { request: MatchRequest; run: string; train: string; late: number }[] = [];
    for (const td of descriptors) {
      if (!mayMatchLoosely(td)) {
        others.push(td);
        continue;
      }
      if (this.prepared.has(td)) continue;
      const request = requestOf(td);
      const decided = this.decide(request);
      this.prepared.set(request.td, decided);
      const m = decided.match;
      if (m.outcome === 'matched' && m.late_s !== null)
        loose.push({
          request,
          run: runKey(m.trip!.trip_id, m.service_date!),
          train: tripKey(queryKeys(request)),
          late: m.late_s,
        });
    }
    if (loose.length === 0) return;
    for (const td of others) {
      if (!this.prepared.has(td)) this.prepared.set(td, this.decide(requestOf(td)));
    }
    // runs a train has by its own id (or any strategy but nyct_loose)
    const byOwnId = new Set<string>();
    for (const { match: m } of this.prepared.values()) {
      if (m.outcome === 'matched' && m.late_s === null) byOwnId.add(runKey(m.trip!.trip_id, m.service_date!));
    }
    const given = new Map<string, string>([...byOwnId].map((run) => [run, '']));
    const least = new Map<string, number>();
    for (const l of loose) {
      if (byOwnId.has(l.run)) continue;
      const best = least.get(l.run);
      if (best === undefined || l.late < best) {
        least.set(l.run, l.late);
        given.set(l.run, l.train);
      } else if (l.late === best && given.get(l.run) !== l.train) {
        given.set(l.run, ''); // two trains equally late for one trip: neither is given it
      }
    }
    this.given = given;
    for (const l of loose) {
      if (given.get(l.run) !== l.train) this.prepared.set(l.request.td, this.decide(l.request));
    }
  }

  match(r: MatchRequest): TripMatch {
    const decided = this.prepared.get(r.td) ?? this.decide(r);
    const steps = decided.steps;
    for (let i = 0; i < steps.length; i++) this.tally.decision(steps[i]![0], steps[i]![1]);
    const result = decided.match;
    this.tally.trip(result.outcome, result.previous_day);
    return result;
  }

  summary(): TripMatching | null {
    return this.tally.summary();
  }

  private decide(r: MatchRequest): Decided {
    const steps: [MatchStrategy, Outcome][] = [];
    if (!r.schedule) return { match: NONE, steps };
    const routeId = r.td.route_id ? this.route(r.td.route_id) : null;
    const q: MatchQuery = {
      td: r.td,
      trip_id: r.td.trip_id || null,
      start_date: parseStartDate(r.td.start_date),
      route_id: routeId,
      alias: this.alias,
      given: this.given,
      relationship: r.relationship,
      start_s: parseGtfsTime(r.td.start_time),
      schedule: r.schedule,
      timezone: r.timezone,
      now_ms: r.now_ms,
    };
    const order = EXTRA_SERVICE.has(r.relationship) ? this.order.filter((s) => s === 'exact') : this.order;
    let last: TripMatch = NONE;
    for (const strategy of order) {
      const answer = STRATEGIES[strategy](q);
      if (answer === null) continue;
      if (answer.outcome === 'matched') {
        const match: TripMatch = {
          outcome: 'matched',
          strategy,
          trip: answer.trip,
          service_date: answer.service_date,
          previous_day: answer.previous_day,
          late_s: answer.late_s ?? null,
        };
        if (steps.length === 0) return { match, steps: MATCHED_FIRST[strategy] };
        steps.push([strategy, 'matched']);
        return { match, steps };
      }
      steps.push([strategy, answer.outcome]);
      const known = answer.outcome === 'unmatched' ? answer.known : undefined;
      // "several fit" says more than a later "none fits", so it is what the trip ends as
      if (last.outcome !== 'ambiguous' || known) {
        last = { ...NONE, outcome: answer.outcome, strategy, trip: known };
      }
      // the feed's own id names a scheduled trip: another strategy must not swap in a different one
      if (known) break;
    }
    return { match: last, steps };
  }
}

/** Whether nyct_loose could match the trip: its id is an NYCT realtime id, with an origin (nyct.ts). */
function mayMatchLoosely(td: TripDescriptorMsg): boolean {
  // an NYCT id has a dot before its direction: most ids are told apart without the pattern
  return td.trip_id?.includes('.') ? (parseNyctTripId(td.trip_id)?.origin ?? null) !== null : false;
}

function queryKeys(r: MatchRequest): Pick<MatchQuery, 'trip_id' | 'start_date'> {
  return { trip_id: r.td.trip_id || null, start_date: parseStartDate(r.td.start_date) };
}
