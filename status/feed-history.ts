// One feed's last hour, minute by minute, plus what FeedHealth does not keep: failures in a row
// and the last error after a recovery. Fed by watching FeedHealth counters move (the pipeline
// has no per-poll hook for readers), seeded at start from feed_polls so a restart keeps the hour.
import type { FeedHealth } from '../core/ports.ts';
import { isSuccessfulPoll } from '../core/types.ts';
import type { Sparkline } from './schema.ts';
import { isoRequired } from '../core/dates.ts';

export const MINUTE_MS = 60_000;
export const SPARK_MINUTES = 60;

interface MinuteBucket {
  minuteMs: number;
  polls: number;
  failures: number;
  entities: number | null;
}

/** A minute of polls as read back from feed_polls. */
export interface MinuteSeed {
  minuteMs: number;
  polls: number;
  failures: number;
  entities: number | null;
}

const isSuccess = (status: FeedHealth['last_status']) => isSuccessfulPoll(status);

export class FeedHistory {
  private readonly minutes: MinuteBucket[] = [];
  private seenPolls: number | null = null;
  private seenFailures = 0;
  consecutiveFailures = 0;
  lastError: string | null = null;
  lastErrorMs: number | null = null;

  /** Folds in whatever polls happened since the last call (usually none or one). */
  observe(h: FeedHealth, nowMs: number): void {
    if (this.seenPolls === null || h.polls < this.seenPolls) {
      // the first look (or a pipeline restarted under us): polls so far are in feed_polls, which
      // the seed reads; only the state of the last one matters here
      this.seenPolls = h.polls;
      this.seenFailures = h.failures;
      if (h.polls > 0 && !isSuccess(h.last_status)) this.noteFailure(h, 1);
      return;
    }
    const polls = h.polls - this.seenPolls;
    if (polls <= 0) return;
    const failures = Math.min(polls, Math.max(0, h.failures - this.seenFailures));
    this.seenPolls = h.polls;
    this.seenFailures = h.failures;
    const atMs = h.last_poll_ms ?? nowMs;
    if (isSuccess(h.last_status)) {
      this.consecutiveFailures = 0;
    } else {
      // several polls between two looks: when one of them succeeded, only the last failed for sure
      this.noteFailure(h, failures === polls ? this.consecutiveFailures + failures : 1);
    }
    const bucket = this.bucket(atMs);
    bucket.polls += polls;
    bucket.failures += failures;
    if (isSuccess(h.last_status) && h.last_success_ms !== null) bucket.entities = h.entities;
  }

  private noteFailure(h: FeedHealth, inARow: number): void {
    this.consecutiveFailures = inARow;
    if (h.last_error !== null) {
      this.lastError = h.last_error;
      this.lastErrorMs = h.last_poll_ms;
    }
  }

  /** Adds polls that happened before this process watched (they are not counted twice). */
  seed(rows: readonly MinuteSeed[], lastError: { error: string; atMs: number } | null): void {
    for (const row of rows) {
      const bucket = this.bucket(row.minuteMs);
      bucket.polls += row.polls;
      bucket.failures += row.failures;
      if (bucket.entities === null) bucket.entities = row.entities;
    }
    if (lastError && (this.lastErrorMs === null || lastError.atMs > this.lastErrorMs)) {
      this.lastError = lastError.error;
      this.lastErrorMs = lastError.atMs;
    }
  }

  /** Polls and failures in the hour before `nowMs`. */
  lastHour(nowMs: number): { polls: number; failures: number } {
    const from = floorMinute(nowMs) - (SPARK_MINUTES - 1) * MINUTE_MS;
    let polls = 0;
    let failures = 0;
    for (const b of this.minutes) {
      if (b.minuteMs < from) continue;
      polls += b.polls;
      failures += b.failures;
    }
    return { polls, failures };
  }

  sparkline(nowMs: number): Sparkline {
    const start = floorMinute(nowMs) - (SPARK_MINUTES - 1) * MINUTE_MS;
    const polls = new Array<number>(SPARK_MINUTES).fill(0);
    const failures = new Array<number>(SPARK_MINUTES).fill(0);
    const entities = new Array<number | null>(SPARK_MINUTES).fill(null);
    for (const b of this.minutes) {
      const i = (b.minuteMs - start) / MINUTE_MS;
      if (i < 0 || i >= SPARK_MINUTES) continue;
      polls[i] = b.polls;
      failures[i] = b.failures;
      entities[i] = b.entities;
    }
    return { start: isoRequired(start), step_s: 60, polls, failures, entities };
  }

  private bucket(atMs: number): MinuteBucket {
    const minuteMs = floorMinute(atMs);
    // buckets stay sorted by minute; polls arrive in time order, seeds are older than all of them
    let i = this.minutes.length;
    while (i > 0 && this.minutes[i - 1]!.minuteMs > minuteMs) i--;
    const existing = this.minutes[i - 1];
    if (existing && existing.minuteMs === minuteMs) return existing;
    const created: MinuteBucket = { minuteMs, polls: 0, failures: 0, entities: null };
    this.minutes.splice(i, 0, created);
    const horizon = this.minutes[this.minutes.length - 1]!.minuteMs - SPARK_MINUTES * MINUTE_MS;
    while (this.minutes.length && this.minutes[0]!.minuteMs < horizon) this.minutes.shift();
    return created;
  }
}

export function floorMinute(ms: number): number {
  return Math.floor(ms / MINUTE_MS) * MINUTE_MS;
}
