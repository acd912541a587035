import {
  MATCH_STRATEGIES,
  REJECT_REASONS,
  SUCCESSFUL_POLL_STATUSES,
  type FeedPoll,
  type MatchCounts,
  type MatchStrategy,
  type PollStatus,
  type RejectReason,
  type TripMatching,
} from '../core/types.ts';
import type { Db } from './db.ts';

// Reading back the poll log: for the status page and for restoring feed health after a restart.

/** A row of POLL_SELECT: a FeedPoll whose status is not checked yet and whose rejections are a list. */
type PollRow = Omit<FeedPoll, 'status' | 'rejected' | 'matching' | 'findings'> & {
  status: string;
  rejected_by_reason: { reason: string; count: number }[];
  trips_matched: number | null;
  trips_unmatched: number | null;
  trips_ambiguous: number | null;
  trips_previous_day: number | null;
  matching: ({ strategy: string } & MatchCounts)[] | null;
  findings: { rule: string; count: number; example: string | null }[] | null;
};

/** SQL condition on feed_polls.status: a poll that failed (neither data nor a confirmation of it). */
export const FAILED_POLL_SQL = `status NOT IN (${SUCCESSFUL_POLL_STATUSES.map((s) => `'${s}'`).join(', ')})`;

const KNOWN_REASONS: ReadonlySet<string> = new Set(REJECT_REASONS);
const KNOWN_STRATEGIES: ReadonlySet<string> = new Set(MATCH_STRATEGIES);

function toMatching(r: PollRow): TripMatching | null {
  if (r.trips_matched === null) return null;
  const [matched, unmatched, ambiguous] = [r.trips_matched, r.trips_unmatched ?? 0, r.trips_ambiguous ?? 0];
  const trips = matched + unmatched + ambiguous;
  const strategies: TripMatching['strategies'] = {};
  for (const { strategy, ...counts } of r.matching ?? []) {
    if (KNOWN_STRATEGIES.has(strategy)) strategies[strategy as MatchStrategy] = counts;
  }
  return {
    trips,
    matched,
    unmatched,
    ambiguous,
    previous_day: r.trips_previous_day ?? 0,
    match_rate: trips ? matched / trips : 0,
    strategies,
  };
}

function toPoll(r: PollRow): FeedPoll {
  const rejected: Partial<Record<RejectReason, number>> = {};
  for (const { reason, count } of r.rejected_by_reason) {
    if (KNOWN_REASONS.has(reason)) rejected[reason as RejectReason] = count;
  }
  return {
    feed_id: r.feed_id,
    polled_ms: r.polled_ms,
    status: r.status as PollStatus,
    http_status: r.http_status,
    bytes: r.bytes,
    duration_ms: r.duration_ms,
    header_timestamp_ms: r.header_timestamp_ms,
    entities: r.entities,
    vehicles: r.vehicles,
    trip_updates: r.trip_updates,
    alerts: r.alerts,
    stored: r.stored,
    rejected,
    matching: toMatching(r),
    error: r.error,
    ...(r.findings
      ? { findings: Object.fromEntries(r.findings.map((f) => [f.rule, { count: f.count, example: f.example }])) }
      : {}),
  };
}

const POLL_SELECT = `SELECT feed_id, epoch_ms(polled_at)::DOUBLE AS polled_ms, status, http_status, bytes::DOUBLE AS bytes,
  duration_ms, epoch_ms(header_timestamp)::DOUBLE AS header_timestamp_ms, entities, vehicles, trip_updates, alerts,
  stored, rejected_by_reason, error, trips_matched, trips_unmatched, trips_ambiguous, trips_previous_day, matching, findings
  FROM feed_polls`;

/** One feed's polls since `sinceMs` (epoch ms), oldest first, at most `limit`. */
export async function recentPolls(db: Db, feedId: string, sinceMs: number, limit = 10_000): Promise<FeedPoll[]> {
  const rows = await db.all<PollRow>(
    `SELECT * FROM (${POLL_SELECT} WHERE feed_id = $1 AND polled_at >= to_timestamp($2::DOUBLE / 1000)
       ORDER BY polled_at DESC LIMIT $3) ORDER BY polled_ms`,
    [feedId, Math.floor(sinceMs), limit],
  );
  return rows.map(toPoll);
}

/** The newest poll of every feed, by feed id. */
export async function lastPolls(db: Db): Promise<Map<string, FeedPoll>> {
  const rows = await db.all<PollRow>(
    `${POLL_SELECT} QUALIFY row_number() OVER (PARTITION BY feed_id ORDER BY polled_at DESC) = 1`,
  );
  return new Map(rows.map((r) => [r.feed_id, toPoll(r)]));
}
