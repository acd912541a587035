// What a decoded snapshot means for its feed: usable, or rejected whole with a message that names
// the cause and the config key that changes it.
import type { Config } from '../core/config.ts';
import type { RejectReason } from '../core/types.ts';
import type { SnapshotRejection } from './normalize-context.ts';
import type { NormalizedPoll } from './normalize-feed.ts';
import { instantText } from '../core/dates.ts';

const HINTS: Partial<Record<RejectReason, string>> = {
  timestamp_too_old: 'feeds[].allow_old_snapshots keeps times older than freshness.max_age_days',
  timestamp_future: "freshness.max_future_s sets how far ahead of this server's clock a time may be",
};

const count = (n: number) => n.toLocaleString('en-US');

export function rejectionMessage(r: SnapshotRejection, polledMs: number, freshness: Config['freshness']): string {
  const header = r.header_was_ms
    ? `header timestamp sent in milliseconds, read as ${instantText(r.header_ms)},`
    : `header timestamp ${instantText(r.header_ms)}`;
  if (r.reason === 'timestamp_future') {
    const aheadS = Math.round((r.header_ms - polledMs) / 1000);
    return (
      `snapshot rejected: ${header} is ${count(aheadS)} s ahead of this server's clock, beyond ` +
      `freshness.max_future_s (${freshness.max_future_s}); fix the feed's clock, or raise freshness.max_future_s`
    );
  }
  const days = Math.floor((polledMs - r.header_ms) / 86_400_000);
  return (
    `snapshot rejected: ${header} is ${count(days)} days old, beyond freshness.max_age_days ` +
    `(${freshness.max_age_days}); set feeds[].allow_old_snapshots to store old snapshots with their own service dates`
  );
}

/** Reasons that reject entities (a header in milliseconds is read back, not rejected). */
function entityRejections(rows: NormalizedPoll): [RejectReason, number][] {
  return (Object.entries(rows.rejected) as [RejectReason, number][]).filter(
    ([reason, n]) => reason !== 'header_timestamp_ms' && n > 0,
  );
}

/**
 * Why the snapshot cannot be used, or null when it can: its header lies outside the freshness
 * bounds, or it carried entities and every one of them was rejected.
 */
export function snapshotProblem(rows: NormalizedPoll, polledMs: number, freshness: Config['freshness']): string | null {
  if (rows.rejection) return rejectionMessage(rows.rejection, polledMs, freshness);
  const produced = rows.vehicles.length + rows.trips.length + rows.arrivals.length + rows.alerts.length;
  const rejected = entityRejections(rows);
  if (rows.entities === 0 || produced > 0 || rejected.length === 0) return null;
  const reasons = rejected.map(([reason, n]) => `${reason} ${count(n)}`).join(', ');
  const hints = rejected.flatMap(([reason]) => (HINTS[reason] ? [HINTS[reason]] : []));
  return `every entity rejected (${reasons})${hints.length ? `; ${hints.join('; ')}` : ''}`;
}
