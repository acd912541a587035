// Archived GTFS-RT snapshots of one feed (files of any name, in folders) through the pipeline, in
// the order their headers give, each as if polled at its header time: the same normalize → state →
// history path as a live poll, idempotent like it (a snapshot stored before is not stored again).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { FeedPoll, PollStatus, RejectReason, TripMatching } from '../core/types.ts';
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
}

/**
 * Replays the scanned snapshots one after the other; a failing file is counted, never thrown.
 * Each snapshot goes on once the one before is live, while the history queue stores those before;
 * the summary counts each once stored.
 */
export async function replaySnapshots(
  pipeline: Pick<Pipeline, 'queueSnapshot'>,
  feedId: string,
  scan: SnapshotScan,
  options: ReplayOptions = {},
): Promise<ReplaySummary> {
  const summary: ReplaySummary = {
    feed_id: feedId,
    files: scan.snapshots.length + scan.skipped.length,
    snapshots: 0,
    outcomes: {},
    skipped: {},
    rows_stored: 0,
    rejected: {},
    matching: { trips: 0, matched: 0, unmatched: 0, ambiguous: 0 },
    findings: {},
    first_header_ms: scan.snapshots[0]?.header_ms ?? null,
    last_header_ms: scan.snapshots.at(-1)?.header_ms ?? null,
    seconds: 0,
    snapshots_per_s: 0,
    rows_per_s: 0,
  };
  for (const s of scan.skipped) summary.skipped[s.reason] = (summary.skipped[s.reason] ?? 0) + 1;
  const started = performance.now();
  let done = 0;
  // each snapshot's stored poll is counted after the one before it, in file order
  let counted: Promise<void> = Promise.resolve();
  const count = (poll: FeedPoll, snapshot: ArchivedSnapshot): void => {
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
    options.onSnapshot?.(poll, snapshot);
    options.onProgress?.(++done, scan.snapshots.length);
  };
  for (const snapshot of scan.snapshots) {
    let body: Uint8Array;
    try {
      body = readFileSync(snapshot.path);
    } catch {
      counted = counted.then(() => {
        summary.skipped.unreadable = (summary.skipped.unreadable ?? 0) + 1;
        options.onProgress?.(++done, scan.snapshots.length);
      });
      continue;
    }
    const { stored } = await pipeline.queueSnapshot(feedId, body, { observed_ms: snapshot.header_ms });
    counted = counted.then(async () => count(await stored, snapshot));
  }
  await counted;
  summary.seconds = (performance.now() - started) / 1000;
  if (summary.seconds > 0) {
    summary.snapshots_per_s = summary.snapshots / summary.seconds;
    summary.rows_per_s = summary.rows_stored / summary.seconds;
  }
  return summary;
}
