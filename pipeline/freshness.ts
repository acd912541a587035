import type { Config } from '../core/config.ts';
import type { Freshness } from '../core/types.ts';

export interface FreshnessInput {
  /** the newest header timestamp the feed reported */
  header_ms: number | null;
  /** when we last received a body that differed from the one before */
  changed_ms: number | null;
}

/**
 * Age comes from the feed's own header timestamp. A header ahead of our clock beyond the allowed
 * skew would stay "fresh" forever, so then (and without a header) the age is counted from when the
 * body last changed instead.
 */
export function freshnessAt(input: FreshnessInput, nowMs: number, cfg: Config['freshness']): Freshness {
  const header = input.header_ms;
  const reference = header !== null && header <= nowMs + cfg.max_future_s * 1000 ? header : input.changed_ms;
  if (reference === null) return 'expired';
  const ageS = (nowMs - reference) / 1000;
  if (ageS <= cfg.stale_after_s) return 'fresh';
  if (ageS <= cfg.expired_after_s) return 'stale';
  return 'expired';
}
