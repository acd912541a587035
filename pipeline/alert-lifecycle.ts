// Alert status and versions across polls: upcoming → active → resolved (its periods ended or it
// left the feed), a new version on every change of content or status.
import type { ActivePeriod, Alert, AlertStatus } from '../core/types.ts';
import { contentKey, type AlertContent } from './alert-content.ts';

export type AlertChangeKind = 'created' | 'updated' | 'resolved';
export interface AlertChange {
  kind: AlertChangeKind;
  alert: Alert;
}

/** Status from active periods alone; an alert without periods is active while it is published. */
export function statusAt(periods: readonly ActivePeriod[], nowMs: number): AlertStatus {
  if (periods.length === 0) return 'active';
  let upcoming = false;
  for (const p of periods) {
    const start = p.start_ms ?? -Infinity;
    const end = p.end_ms ?? Infinity;
    if (start <= nowMs && nowMs < end) return 'active';
    if (start > nowMs) upcoming = true;
  }
  return upcoming ? 'upcoming' : 'resolved';
}

interface Entry {
  alert: Alert;
  key: string;
  /** still published by its feed (a resolved alert that left the feed stays resolved on ticks) */
  inFeed: boolean;
}

export class AlertBook {
  private readonly entries = new Map<string, Entry>();

  /** Latest versions from the store; unresolved ones count as published until their feed says otherwise. */
  restore(alerts: readonly Alert[]): void {
    for (const alert of alerts) {
      this.entries.set(alert.id, { alert, key: contentKey(alert), inFeed: alert.status !== 'resolved' });
    }
  }

  list(): Alert[] {
    return [...this.entries.values()].map((e) => e.alert);
  }

  get(id: string): Alert | undefined {
    return this.entries.get(id)?.alert;
  }

  /** Reconciles everything one feed publishes now; its alerts missing from `contents` are resolved. */
  applyFeed(feedId: string, contents: readonly AlertContent[], nowMs: number): AlertChange[] {
    const changes: AlertChange[] = [];
    const present = new Set<string>();
    for (const content of contents) {
      present.add(content.id);
      const key = contentKey(content);
      const status = statusAt(content.active_periods, nowMs);
      const entry = this.entries.get(content.id);
      if (!entry) {
        const alert: Alert = {
          ...content,
          status,
          version: 1,
          first_seen_ms: nowMs,
          updated_ms: nowMs,
          resolved_ms: status === 'resolved' ? nowMs : null,
        };
        this.entries.set(content.id, { alert, key, inFeed: true });
        changes.push({ kind: 'created', alert });
        continue;
      }
      entry.inFeed = true;
      if (entry.key === key && entry.alert.status === status) continue;
      changes.push(this.bump(entry, { ...content }, key, status, nowMs));
    }
    for (const entry of this.entries.values()) {
      if (entry.alert.feed_id !== feedId || present.has(entry.alert.id) || !entry.inFeed) continue;
      entry.inFeed = false;
      if (entry.alert.status === 'resolved') continue;
      changes.push(this.bump(entry, {}, entry.key, 'resolved', nowMs));
    }
    return changes;
  }

  /** Time alone moves published alerts between upcoming, active and resolved. */
  tick(nowMs: number): AlertChange[] {
    const changes: AlertChange[] = [];
    for (const entry of this.entries.values()) {
      if (!entry.inFeed) continue;
      const status = statusAt(entry.alert.active_periods, nowMs);
      if (status !== entry.alert.status) changes.push(this.bump(entry, {}, entry.key, status, nowMs));
    }
    return changes;
  }

  /** Forgets alerts resolved before `beforeMs`; their versions stay in history. */
  prune(beforeMs: number): number {
    let removed = 0;
    for (const [id, entry] of this.entries) {
      if (entry.alert.status === 'resolved' && !entry.inFeed && (entry.alert.resolved_ms ?? 0) < beforeMs) {
        this.entries.delete(id);
        removed++;
      }
    }
    return removed;
  }

  private bump(
    entry: Entry,
    content: Partial<AlertContent>,
    key: string,
    status: AlertStatus,
    nowMs: number,
  ): AlertChange {
    const previous = entry.alert;
    const alert: Alert = {
      ...previous,
      ...content,
      status,
      version: previous.version + 1,
      updated_ms: nowMs,
      resolved_ms: status === 'resolved' ? (previous.resolved_ms ?? nowMs) : null,
    };
    entry.alert = alert;
    entry.key = key;
    const kind: AlertChangeKind = status === 'resolved' && previous.status !== 'resolved' ? 'resolved' : 'updated';
    return { kind, alert };
  }
}
