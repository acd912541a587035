// The header rules: its version and incrementality, its timestamp, and the timestamp against the
// snapshot before (E017, E018, W007) and against our clock (W008, E050).
import { has, type FeedMessageMsg } from '../gtfs-rt-types.ts';
import { FUTURE_TOLERANCE_MS, isoOf, isPosixSeconds, type CheckContext } from './context.ts';
import type { FindingSink } from './findings.ts';

/** W008's limit and W007's: a snapshot a minute old, a refresh slower than 35 s. */
export const MAX_HEADER_AGE_MS = 65_000;
export const MAX_REFRESH_S = 35;

export function checkHeader(message: FeedMessageMsg, ctx: CheckContext, sink: FindingSink): void {
  const header = message.header;
  const version = header.gtfs_realtime_version;
  if (has(header, 'gtfs_realtime_version') && version !== '1.0' && version !== '2.0') {
    sink.add('E038', null, () => `gtfs_realtime_version is ${JSON.stringify(version)}, not "1.0" or "2.0"`);
  }
  if (ctx.version2 && !has(header, 'incrementality')) {
    sink.add('E049', null, () => `version ${version || '(none)'} header without incrementality`);
  }
  const raw = ctx.header_raw;
  if (raw === null) {
    if (ctx.version2) sink.add('E048', null, () => `version ${version || '(none)'} header without a timestamp`);
    else sink.add('W001', null, () => 'header without a timestamp');
    return;
  }
  if (!isPosixSeconds(raw)) {
    sink.add('E001', null, () => `header timestamp ${raw} is not POSIX seconds${raw > 1e11 ? ' (milliseconds?)' : ''}`);
    return;
  }
  const now = ctx.now_ms;
  if (now === null) return;
  const ageMs = now - raw * 1000;
  if (ageMs > MAX_HEADER_AGE_MS) {
    sink.add('W008', null, () => `header timestamp ${isoOf(raw * 1000)} is ${Math.round(ageMs / 1000)} s old`);
  }
  if (-ageMs > FUTURE_TOLERANCE_MS) {
    sink.add('E050', null, () => `header timestamp ${isoOf(raw * 1000)} is ${Math.round(-ageMs / 1000)} s ahead`);
  }
}

/** What a feed's previous snapshot leaves for the next one's checks. */
export interface PreviousSnapshot {
  /** its header time, epoch ms; null without one */
  header_ms: number | null;
  sha256: string;
}

export interface SequenceOptions {
  /** a poll failed (or a snapshot was not received) since the previous one: W007 cannot tell the feed's refresh */
  gap: boolean;
  /** the feed's poll interval; W007 is not evaluated above MAX_REFRESH_S (our polls would be the slow ones) */
  interval_s: number | null;
}

/** E017, E018 and W007: this snapshot's header against the one received before it. */
export function checkSequence(
  current: { header_ms: number | null; sha256: string },
  previous: PreviousSnapshot | null,
  options: SequenceOptions,
  sink: FindingSink,
): void {
  if (!previous || previous.header_ms === null || current.header_ms === null) return;
  if (current.sha256 === previous.sha256) return;
  const now = current.header_ms;
  const before = previous.header_ms;
  if (now === before) {
    sink.add('E017', null, () => `content changed under the same header timestamp ${isoOf(now)}`);
  } else if (now < before) {
    sink.add('E018', null, () => `header timestamp ${isoOf(now)} is before the previous one, ${isoOf(before)}`);
  } else if (
    !options.gap &&
    (options.interval_s === null || options.interval_s <= MAX_REFRESH_S) &&
    now - before > MAX_REFRESH_S * 1000
  ) {
    sink.add(
      'W007',
      null,
      () => `header timestamp advanced ${Math.round((now - before) / 1000)} s since the previous snapshot`,
    );
  }
}
