// The rules per poll, per feed: each feed's last snapshot is remembered for the next one's
// sequence rules (E017, E018, W007), and a failed poll between two marks a gap.
import type { ScheduleIndex } from '../../core/ports.ts';
import type { FindingCounts } from '../../core/types.ts';
import type { FeedMessageMsg } from '../gtfs-rt-types.ts';
import { checkSnapshot } from './check.ts';
import { TallySink } from './findings.ts';
import type { PreviousSnapshot } from './header.ts';

/** A body that is not a FeedMessage: T001, about the body as a whole. */
export const NOT_A_FEED: FindingCounts = Object.freeze({ T001: Object.freeze({ count: 1, example: null }) });

export interface PollCheck {
  sha256: string;
  now_ms: number | null;
  schedule?: ScheduleIndex;
  /** the feed's poll interval (feeds[].interval_s) */
  interval_s: number | null;
}

export class FeedQualityChecker {
  private readonly previous = new Map<string, PreviousSnapshot>();
  private readonly gaps = new Set<string>();

  /** Every rule over one decoded body of the feed; its counts per rule (empty when clean). */
  check(feedId: string, message: FeedMessageMsg, poll: PollCheck): FindingCounts {
    const sink = new TallySink();
    const current = checkSnapshot(
      {
        message,
        sha256: poll.sha256,
        schedule: poll.schedule,
        now_ms: poll.now_ms,
        previous: this.previous.get(feedId) ?? null,
        sequence: { gap: this.gaps.has(feedId), interval_s: poll.interval_s },
      },
      sink,
    );
    this.previous.set(feedId, current);
    this.gaps.delete(feedId);
    return sink.result();
  }

  /** A poll of the feed failed: the next snapshot does not follow the last one directly. */
  gap(feedId: string): void {
    this.gaps.add(feedId);
  }

  /** The feed was removed or changed its source: its next snapshot starts afresh. */
  forget(feedId: string): void {
    this.previous.delete(feedId);
    this.gaps.delete(feedId);
  }
}
