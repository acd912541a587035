// Archived GTFS-RT snapshots of one feed or several (files of any name, in folders) through the
// pipeline, in the order their headers give, each as if polled at its header time: the same
// normalize → state → history path as a live poll, idempotent like it (a snapshot stored before is
// not stored again, a stop event written before is not written again).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type {
  FeedPoll,
  PollStatus,
  RejectReason,
  StopEventAnomaly,
  StopEventCounts,
  TripMatching,
} from '../core/types.ts';
import { decodeFeedMessage, readHeaderTimestamp } from './decode.ts';
import type { Pipeline } from './ingest.ts';
import { secondsToMs } from './normalize-context.ts';

export interface ArchivedSnapshot {
  path: string;
  /** the header time the snapshot is replayed at */
  header_ms: number;
}

export interface SnapshotScan {
  /** oldest header first; equal headers in path order */
  snapshots: ArchivedSnapshot[];
  /** files that cannot be placed in time, by why: no header timestamp, or not a FeedMessage */
  skipped: { path: string; reason: RejectReason | 'missing_header_timestamp' | 'unreadable' }[];
}

/** Every file named, and every file under every folder named (hidden ones excepted), sorted. */
export function listFiles(paths: readonly string[]): string[] {
  const out: string[] = [];
  const walk = (path: string): void => {
    if (statSync(path).isDirectory()) {
      for (const name of readdirSync(path).sort()) if (!name.startsWith('.')) walk(join(path, name));
    } else {
      out.push(path);
    }
  };
  for (const p of paths) walk(p);
  return [...new Set(out)];
}

/** Reads each file's header timestamp (not its entities) to order the replay. */
export function scanSnapshots(files: readonly string[]): SnapshotScan {
  const snapshots: ArchivedSnapshot[] = [];
  const skipped: SnapshotScan['skipped'] = [];
  for (const path of files) {
    let bytes: Uint8Array;
    try {
      bytes = readFileSync(path);
    } catch {
      skipped.push({ path, reason: 'unreadable' });
      continue;
    }
    const raw = readHeaderTimestamp(bytes);
    if (raw === null) skipped.push({ path, reason: 'missing_header_timestamp' });
    else if (raw === undefined) {
      const decoded = decodeFeedMessage(bytes);
      skipped.push({ path, reason: decoded.ok ? 'missing_header_timestamp' : decoded.reason });
    } else snapshots.push({ path, header_ms: secondsToMs(raw).ms });
  }
  snapshots.sort((a, b) => a.header_ms - b.header_ms || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { snapshots, skipped };
}

export interface ReplaySummary {
  feed_id: string;
  files: number;
  /** snapshots run through the pipeline */
  snapshots: number;
  /** by the poll status each got: ok (stored), duplicate (stored before), rejected, decode_error */
  outcomes: Partial<Record<PollStatus, number>>;
  /** files not replayed, by reason */
  skipped: Record<string, number>;
  rows_stored: number;
  /** entities (or whole snapshots' entities) rejected, by reason, as in feed_polls */
  rejected: Partial<Record<RejectReason, number>>;
  /** feed rule findings over every snapshot, by rule id (docs/guides/feed-quality.md) */
  findings: Record<string, number>;
  /** trips looked up and matched over every snapshot */
  matching: Pick<TripMatching, 'trips' | 'matched' | 'unmatched' | 'ambiguous'>;
  /**
   * Stop events the feed's snapshots passed, and at the end of the archive those of the trips it
   * reported first still in progress (closed with what is known); the anomalies they showed.
   */
  stop_events: StopEventCounts & { closed_at_end: number };
  first_header_ms: number | null;
  last_header_ms: number | null;
  seconds: number;
  snapshots_per_s: number;
  rows_per_s: number;
}

export interface ReplayOptions {
  onProgress?: (done: number, total: number) => void;
  /** each snapshot's poll record, as it is stored */
  onSnapshot?: (poll: FeedPoll, snapshot: ArchivedSnapshot) => void;
  /** close the trips still in progress after the last snapshot (default true): an archive's end is the trips' end */
  closeTrips?: boolean;
}

/** One feed's scanned archive. */
export interface FeedArchive {
  feed_id: string;
  scan: SnapshotScan;
}

/** Replays one feed's snapshots (replayFeeds with one archive). */
export async function replaySnapshots(
  pipeline: Pick<Pipeline, 'queueSnapshot' | 'closeTrips'>,
  feedId: string,
  scan: SnapshotScan,
  options: ReplayOptions = {},
): Promise<ReplaySummary> {
  const [summary] = await replayFeeds(pipeline, [{ feed_id: feedId, scan }], options);
  return summary!;
}

function emptySummary(archive: FeedArchive): ReplaySummary {
  const { scan } = archive;
  const summary: ReplaySummary = {
    feed_id: archive.feed_id,
    files: scan.snapshots.length + scan.skipped.length,
    snapshots: 0,
    outcomes: {},
    skipped: {},
    rows_stored: 0,
    rejected: {},
    matching: { trips: 0, matched: 0, unmatched: 0, ambiguous: 0 },
    stop_events: { written: 0, anomalies: {}, closed_at_end: 0 },
    findings: {},
    first_header_ms: scan.snapshots[0]?.header_ms ?? null,
    last_header_ms: scan.snapshots.at(-1)?.header_ms ?? null,
    seconds: 0,
    snapshots_per_s: 0,
    rows_per_s: 0,
  };
  for (const s of scan.skipped) summary.skipped[s.reason] = (summary.skipped[s.reason] ?? 0) + 1;
  return summary;
}

function addCounts(into: StopEventCounts, counts: StopEventCounts): void {
  into.written += counts.written;
  for (const [kind, n] of Object.entries(counts.anomalies) as [StopEventAnomaly, number][])
    into.anomalies[kind] = (into.anomalies[kind] ?? 0) + n;
}

/**
 * Replays the archives of several feeds (an agency's vehicle positions and trip updates) as one
 * stream, their snapshots interleaved by header time (equal times: in the order the feeds are
 * given, then by path), so the pipeline sees them as a live service polling both would. A failing
 * file is counted, never thrown. Each snapshot goes on once the one before is live, while the
 * history queue stores those before; each is counted once stored. One summary per feed.
 */
export async function replayFeeds(
  pipeline: Pick<Pipeline, 'queueSnapshot' | 'closeTrips'>,
  archives: readonly FeedArchive[],
  options: ReplayOptions = {},
): Promise<ReplaySummary[]> {
  const summaries = archives.map(emptySummary);
  const queue = archives
    .flatMap((a, feed) => a.scan.snapshots.map((snapshot) => ({ feed, snapshot })))
    .sort(
      (a, b) =>
        a.snapshot.header_ms - b.snapshot.header_ms ||
        a.feed - b.feed ||
        (a.snapshot.path < b.snapshot.path ? -1 : a.snapshot.path > b.snapshot.path ? 1 : 0),
    );
  const started = performance.now();
  let done = 0;
  // each snapshot's stored poll is counted after the one before it, in replay order
  let counted: Promise<void> = Promise.resolve();
  const count = (summary: ReplaySummary, poll: FeedPoll, snapshot: ArchivedSnapshot): void => {
    summary.snapshots++;
    summary.outcomes[poll.status] = (summary.outcomes[poll.status] ?? 0) + 1;
    summary.rows_stored += poll.stored;
    for (const [reason, n] of Object.entries(poll.rejected) as [RejectReason, number][]) {
      summary.rejected[reason] = (summary.rejected[reason] ?? 0) + n;
    }
    for (const [rule, tally] of Object.entries(poll.findings ?? {})) {
      summary.findings[rule] = (summary.findings[rule] ?? 0) + tally.count;
    }
    if (poll.matching) {
      for (const k of ['trips', 'matched', 'unmatched', 'ambiguous'] as const) summary.matching[k] += poll.matching[k];
    }
    if (poll.stop_events) addCounts(summary.stop_events, poll.stop_events);
    options.onSnapshot?.(poll, snapshot);
    options.onProgress?.(++done, queue.length);
  };
  for (const { feed, snapshot } of queue) {
    const summary = summaries[feed]!;
    let body: Uint8Array;
    try {
      body = readFileSync(snapshot.path);
    } catch {
      counted = counted.then(() => {
        summary.skipped.unreadable = (summary.skipped.unreadable ?? 0) + 1;
        options.onProgress?.(++done, queue.length);
      });
      continue;
    }
    const { stored } = await pipeline.queueSnapshot(archives[feed]!.feed_id, body, { observed_ms: snapshot.header_ms });
    counted = counted.then(async () => count(summary, await stored, snapshot));
  }
  await counted;
  const last = queue.at(-1);
  if (last && options.closeTrips !== false) {
    const closed = await pipeline.closeTrips(last.snapshot.header_ms);
    for (const summary of summaries) {
      const counts = closed.get(summary.feed_id);
      if (!counts) continue;
      addCounts(summary.stop_events, counts);
      summary.stop_events.closed_at_end += counts.written;
      summary.rows_stored += counts.written;
    }
  }
  const seconds = (performance.now() - started) / 1000;
  for (const summary of summaries) {
    summary.seconds = seconds;
    if (seconds > 0) {
      summary.snapshots_per_s = summary.snapshots / seconds;
      summary.rows_per_s = summary.rows_stored / seconds;
    }
  }
  return summaries;
}
