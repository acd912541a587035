// One feed's rule findings over the last hour, minute by minute: fed by watching each rule's total
// in FeedHealth move (from 0: the live state starts with the process), seeded at start from
// feed_polls.findings of the hour before, so a restart keeps the hour.
import type { FeedRuleHealth } from '../core/ports.ts';
import { floorMinute, MINUTE_MS, SPARK_MINUTES } from './feed-history.ts';

/** A minute of one rule's findings as read back from feed_polls. */
export interface FindingSeed {
  minuteMs: number;
  rule: string;
  count: number;
  example: string | null;
  lastMs: number;
}

export interface HourFindings {
  rule: string;
  count: number;
  example: string | null;
  last_seen_ms: number;
}

interface Minute {
  minuteMs: number;
  counts: Map<string, number>;
}

export class FindingsHistory {
  /** each rule's total at the last look; the live state's totals start at 0 with the process */
  private readonly seen = new Map<string, number>();
  private readonly minutes: Minute[] = [];
  private readonly latest = new Map<string, { example: string | null; atMs: number }>();

  /** Folds in the findings of whatever bodies were checked since the last call. */
  observe(rules: readonly FeedRuleHealth[] | undefined): void {
    if (!rules) return;
    for (const r of rules) {
      const before = this.seen.get(r.rule) ?? 0;
      this.seen.set(r.rule, r.total);
      // the pipeline starts with the service, its first polls before the collector's first look (the
      // seed reads feed_polls before the collector started); a total that went down: it restarted
      const added = r.total < before ? r.total : r.total - before;
      if (added <= 0) continue;
      const bucket = this.bucket(r.last_seen_ms);
      bucket.counts.set(r.rule, (bucket.counts.get(r.rule) ?? 0) + added);
      this.note(r.rule, r.example, r.last_seen_ms);
    }
  }

  seed(rows: readonly FindingSeed[]): void {
    for (const row of rows) {
      const bucket = this.bucket(row.minuteMs);
      bucket.counts.set(row.rule, (bucket.counts.get(row.rule) ?? 0) + row.count);
      this.note(row.rule, row.example, row.lastMs);
    }
  }

  /** Rules with findings in the hour before `nowMs`, most findings first. */
  lastHour(nowMs: number): HourFindings[] {
    const from = floorMinute(nowMs) - (SPARK_MINUTES - 1) * MINUTE_MS;
    const totals = new Map<string, number>();
    for (const m of this.minutes) {
      if (m.minuteMs < from) continue;
      for (const [rule, n] of m.counts) totals.set(rule, (totals.get(rule) ?? 0) + n);
    }
    return [...totals]
      .map(([rule, count]) => {
        const latest = this.latest.get(rule);
        return { rule, count, example: latest?.example ?? null, last_seen_ms: latest?.atMs ?? from };
      })
      .sort((a, b) => b.count - a.count || a.rule.localeCompare(b.rule));
  }

  private note(rule: string, example: string | null, atMs: number): void {
    const latest = this.latest.get(rule);
    if (!latest || atMs >= latest.atMs) this.latest.set(rule, { example, atMs });
  }

  private bucket(atMs: number): Minute {
    const minuteMs = floorMinute(atMs);
    let i = this.minutes.length;
    while (i > 0 && this.minutes[i - 1]!.minuteMs > minuteMs) i--;
    const existing = this.minutes[i - 1];
    if (existing && existing.minuteMs === minuteMs) return existing;
    const created: Minute = { minuteMs, counts: new Map() };
    this.minutes.splice(i, 0, created);
    const horizon = this.minutes[this.minutes.length - 1]!.minuteMs - SPARK_MINUTES * MINUTE_MS;
    while (this.minutes.length && this.minutes[0]!.minuteMs < horizon) this.minutes.shift();
    return created;
  }
}
