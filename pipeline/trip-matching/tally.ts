// Every matching decision of one poll, counted per strategy and per trip.
import type { MatchCounts, MatchStrategy, TripMatching } from '../../core/types.ts';

export type Outcome = keyof MatchCounts;

export class MatchTally {
  private readonly strategies: Partial<Record<MatchStrategy, MatchCounts>> = {};
  private readonly trips: MatchCounts = { matched: 0, unmatched: 0, ambiguous: 0 };
  private previousDay = 0;

  /** one strategy's decision about one trip */
  decision(strategy: MatchStrategy, outcome: Outcome): void {
    this.strategies[strategy] ??= { matched: 0, unmatched: 0, ambiguous: 0 };
    this.strategies[strategy][outcome]++;
  }

  /** where one trip ended, after every strategy tried */
  trip(outcome: Outcome, previousDay: boolean): void {
    this.trips[outcome]++;
    if (previousDay) this.previousDay++;
  }

  /** null when no trip was looked up */
  summary(): TripMatching | null {
    const { matched, unmatched, ambiguous } = this.trips;
    const trips = matched + unmatched + ambiguous;
    if (trips === 0) return null;
    return {
      trips,
      matched,
      unmatched,
      ambiguous,
      previous_day: this.previousDay,
      match_rate: matched / trips,
      strategies: structuredClone(this.strategies),
    };
  }
}
