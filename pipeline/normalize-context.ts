// What every normalizer needs to know about the poll it works on, and the reject tally they share.
import type { Config } from '../core/config.ts';
import type { ScheduleIndex } from '../core/ports.ts';
import type { Mode, RejectReason } from '../core/types.ts';
import type { TripMatcher } from './trip-matching/match.ts';

export class RejectTally {
  readonly counts: Partial<Record<RejectReason, number>> = {};

  add(reason: RejectReason, n = 1): void {
    this.counts[reason] = (this.counts[reason] ?? 0) + n;
  }
}

export interface NormalizeContext {
  feed_id: string;
  /** the schedule the feed's ids belong to, stamped on every row (null: none); absent: not stamped */
  schedule_id?: string | null;
  /** when our poll received the body */
  observed_ms: number;
  /** the feed header's timestamp when it passed the checks, for rows that carry none */
  header_ms: number | null;
  schedule: ScheduleIndex | undefined;
  /** the schedule's agency zone, else the feed's configured zone, else UTC */
  timezone: string;
  /** the feed's configured mode (`feeds[].mode`), for entities whose route the schedule cannot resolve */
  default_mode?: Mode | null;
  freshness: Config['freshness'];
  delay: Config['delay'];
  rejects: RejectTally;
  /** the feed's trip matching strategies and this poll's counts */
  matcher: TripMatcher;
  /** feeds[].allow_old_snapshots: times older than freshness.max_age_days are kept, not rejected */
  allow_old_snapshots?: boolean;
}

export type TimestampVerdict = 'ok' | 'timestamp_future' | 'timestamp_too_old';

/**
 * Future and years-old timestamps are judged against the poll time and the freshness config; old
 * ones pass when the feed allows old snapshots (archives, replay).
 */
export function judgeTimestamp(
  ms: number,
  ctx: Pick<NormalizeContext, 'observed_ms' | 'freshness' | 'allow_old_snapshots'>,
): TimestampVerdict {
  if (ms > ctx.observed_ms + ctx.freshness.max_future_s * 1000) return 'timestamp_future';
  if (!ctx.allow_old_snapshots && ms < ctx.observed_ms - ctx.freshness.max_age_days * 86_400_000)
    return 'timestamp_too_old';
  return 'ok';
}

/** Why a whole snapshot is rejected: its header lies outside the freshness bounds. */
export interface SnapshotRejection {
  reason: Exclude<TimestampVerdict, 'ok'>;
  header_ms: number;
  /** the header was sent in milliseconds and read back as such */
  header_was_ms: boolean;
}

/**
 * A snapshot is as old as its header says: rows of a snapshot outside the bounds would carry
 * service dates of some other day, so the header's verdict applies to the snapshot whole.
 */
export function judgeHeader(
  ms: number,
  wasMs: boolean,
  ctx: Pick<NormalizeContext, 'observed_ms' | 'freshness' | 'allow_old_snapshots'>,
): SnapshotRejection | null {
  const verdict = judgeTimestamp(ms, ctx);
  return verdict === 'ok' ? null : { reason: verdict, header_ms: ms, header_was_ms: wasMs };
}

/**
 * POSIX seconds as ms. Values past 1e11 s (year 5138) can only be milliseconds sent in a seconds
 * field; they are divided back rather than trusted as far-future instants.
 */
export function secondsToMs(seconds: number): { ms: number; wasMs: boolean } {
  if (seconds > 1e11) return { ms: Math.round(seconds), wasMs: true };
  return { ms: Math.round(seconds * 1000), wasMs: false };
}
