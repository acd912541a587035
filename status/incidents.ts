// The incident history: every change of a component's state, kept in memory for the shown window
// (and written to DuckDB by the collector), turned into incidents and per-day figures on demand.
import type { ComponentHistory, Incident, KnownState } from './schema.ts';
import { worse } from './schema.ts';
import { DAY_MS, iso, utcDate } from '../core/dates.ts';

export interface StateChange {
  component: string;
  state: KnownState;
  previous: KnownState | null;
  reason: string;
  atMs: number;
}

/** Incidents of one component this close together are one incident that flapped. */
const MERGE_GAP_MS = 10 * 60_000;
const MAX_INCIDENTS = 50;
/** a flapping feed must not grow memory without bound; the oldest changes go first */
const MAX_CHANGES = 50_000;

export function componentName(component: string): string {
  if (component === 'api') return 'Public API';
  if (component === 'alerts') return 'Alert ingestion';
  if (component === 'node') return 'This node';
  return component.startsWith('feed:') ? `Feed ${component.slice(5)}` : component;
}

export class IncidentLog {
  private changes: StateChange[] = [];
  /** the state of each component before the oldest change kept, for the first day's figures */
  private readonly before = new Map<string, KnownState>();
  private readonly current = new Map<string, KnownState>();
  /** bumps on every change, so the page knows when to re-render the history */
  version = 0;

  constructor(private readonly windowDays: number) {}

  /** Replaces the log with what the store kept: changes (any order) and each component's state before them. */
  load(changes: readonly StateChange[], before: ReadonlyMap<string, KnownState>): void {
    this.changes = [...changes].sort((a, b) => a.atMs - b.atMs);
    this.before.clear();
    this.current.clear();
    for (const [component, state] of before) {
      this.before.set(component, state);
      this.current.set(component, state);
    }
    for (const c of this.changes) this.current.set(c.component, c.state);
    this.version++;
  }

  /** The last recorded state of a component, from this run or an earlier one. */
  stateOf(component: string): KnownState | null {
    return this.current.get(component) ?? null;
  }

  /** Records a change when `state` differs from the last recorded one; returns it, or null. */
  transition(component: string, state: KnownState, reason: string, atMs: number): StateChange | null {
    const previous = this.current.get(component) ?? null;
    // the first observation is recorded too: it is where the component's daily figures begin
    if (previous === state) return null;
    const change: StateChange = { component, state, previous, reason, atMs };
    this.current.set(component, state);
    this.changes.push(change);
    if (this.changes.length > MAX_CHANGES) this.forget(this.changes.length - MAX_CHANGES);
    this.version++;
    return change;
  }

  /** Drops changes older than the window, remembering the state they left behind. */
  prune(nowMs: number): void {
    const cutoff = startOfDay(nowMs) - (this.windowDays - 1) * DAY_MS;
    let n = 0;
    while (n < this.changes.length && this.changes[n]!.atMs < cutoff) n++;
    if (n) this.forget(n);
  }

  private forget(n: number): void {
    for (const c of this.changes.slice(0, n)) this.before.set(c.component, c.state);
    this.changes = this.changes.slice(n);
    this.version++;
  }

  /** Runs away from operational, newest first; close runs of one component are merged. */
  incidents(nowMs: number): { items: Incident[]; total: number } {
    const open = new Map<string, Incident & { endMs: number | null }>();
    const done: Array<Incident & { endMs: number | null }> = [];
    const states = new Map(this.before);
    for (const c of this.changes) {
      const wasOk = (states.get(c.component) ?? 'operational') === 'operational';
      states.set(c.component, c.state);
      let incident = open.get(c.component);
      if (c.state === 'operational') {
        if (incident) {
          incident.endMs = c.atMs;
          incident.ended_at = iso(c.atMs);
          incident.changes++;
          open.delete(c.component);
        }
        continue;
      }
      if (!incident && wasOk) {
        let last: (typeof done)[number] | undefined;
        for (let i = done.length - 1; i >= 0 && !last; i--) if (done[i]!.component === c.component) last = done[i];
        if (last && last.endMs !== null && c.atMs - last.endMs < MERGE_GAP_MS) {
          incident = last;
          incident.endMs = null;
          incident.ended_at = null;
        } else {
          incident = begin(c);
          done.push(incident);
        }
        open.set(c.component, incident);
      }
      if (!incident) {
        // already away from operational when the window starts: the incident began earlier
        incident = begin(c);
        done.push(incident);
        open.set(c.component, incident);
      }
      incident.state = worse(incident.state, c.state);
      incident.changes++;
    }
    const cutoff = nowMs - this.windowDays * DAY_MS;
    const all = done.filter((i) => i.endMs === null || i.endMs >= cutoff).reverse();
    return { items: all.slice(0, MAX_INCIDENTS).map(({ endMs: _endMs, ...rest }) => rest), total: all.length };
  }

  /** Per component, seconds degraded and down on each UTC day of the window, today last. */
  days(components: readonly string[], nowMs: number): ComponentHistory[] {
    const firstDay = startOfDay(nowMs) - (this.windowDays - 1) * DAY_MS;
    return components.map((component) => {
      const days = Array.from({ length: this.windowDays }, (_, i) => ({
        date: utcDate(firstDay + i * DAY_MS),
        state: null as KnownState | null,
        degraded_s: 0,
        down_s: 0,
      }));
      let state: KnownState | null = this.before.get(component) ?? null;
      let fromMs = firstDay;
      const spend = (untilMs: number) => {
        if (state === null) return;
        for (let t = fromMs; t < untilMs; ) {
          const day = Math.floor((t - firstDay) / DAY_MS);
          const end = Math.min(untilMs, firstDay + (day + 1) * DAY_MS);
          const slot = days[day];
          if (slot) {
            slot.state = slot.state === null ? state : (worse(slot.state, state) as KnownState);
            if (state === 'degraded') slot.degraded_s += (end - t) / 1000;
            if (state === 'down') slot.down_s += (end - t) / 1000;
          }
          t = end;
        }
      };
      for (const c of this.changes) {
        if (c.component !== component) continue;
        spend(Math.max(fromMs, c.atMs));
        fromMs = Math.max(fromMs, c.atMs);
        state = c.state;
        // a state entered during a day counts for it, even when the day (or now) ends right after
        const slot = days[Math.floor((c.atMs - firstDay) / DAY_MS)];
        if (slot) slot.state = slot.state === null ? c.state : (worse(slot.state, c.state) as KnownState);
      }
      spend(nowMs);
      for (const d of days) {
        d.degraded_s = Math.round(d.degraded_s);
        d.down_s = Math.round(d.down_s);
      }
      return { component, name: componentName(component), days };
    });
  }
}

/** An incident opened by a change away from operational. */
function begin(c: StateChange): Incident & { endMs: number | null } {
  return {
    component: c.component,
    name: componentName(c.component),
    state: c.state,
    started_at: iso(c.atMs)!,
    ended_at: null,
    reason: c.reason,
    changes: 0,
    endMs: null,
  };
}

function startOfDay(ms: number): number {
  return Math.floor(ms / DAY_MS) * DAY_MS;
}
