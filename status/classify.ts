// The rules that turn observations into operational / degraded / down. Pure functions of their
// inputs and the clock, so every rule is tested without a server, and the page, the JSON and the
// incident log can never disagree about a state.
import type { Config } from '../core/config.ts';
import type { FeedHealth } from '../core/ports.ts';
import type { ScheduleHealth } from '../store/schedule-refresh.ts';
import { isSuccessfulPoll } from '../core/types.ts';
import { ruleSpec } from '../pipeline/quality/rules.ts';
import { type ComponentState, worse } from './schema.ts';

export interface Verdict {
  state: ComponentState;
  reason: string;
}

export interface FeedFacts {
  health: FeedHealth;
  interval_s: number;
  consecutive_failures: number;
  nowMs: number;
  /** when this process started watching; a feed never polled since then is judged from here */
  sinceMs: number;
}

export type StatusRules = Config['status'];

const seconds = (ms: number) => `${Math.round(ms / 1000)} s`;

/**
 * Down: `down_after_failures` failed polls in a row, no successful poll for `down_after_intervals`
 * poll intervals (a poll that hangs until its timeout shows up here before it fails), or expired
 * data. Degraded: the last poll failed, or the data is stale. Unknown: just started, nothing yet.
 */
export function classifyFeed(f: FeedFacts, rules: StatusRules): Verdict {
  const h = f.health;
  const intervalMs = f.interval_s * 1000;
  const limitMs = rules.down_after_intervals * intervalMs;
  const lastFailed = h.last_status !== null && !isSuccessfulPoll(h.last_status);
  const error = h.last_error ?? h.last_status ?? 'failed';
  if (f.consecutive_failures >= rules.down_after_failures) {
    return { state: 'down', reason: `${f.consecutive_failures} polls failed in a row: ${error}` };
  }
  const since = h.last_success_ms ?? f.sinceMs;
  const silentMs = f.nowMs - since;
  if (silentMs > limitMs) {
    const what =
      h.last_success_ms === null ? 'no successful poll since start' : `no successful poll for ${seconds(silentMs)}`;
    return { state: 'down', reason: lastFailed ? `${what}; last error: ${error}` : what };
  }
  if (h.polls === 0) return { state: 'unknown', reason: 'waiting for the first poll' };
  if (h.last_success_ms !== null && h.freshness === 'expired') {
    return { state: 'down', reason: `data expired: ${ageText(h, f.nowMs)}` };
  }
  if (lastFailed) return { state: 'degraded', reason: `last poll failed: ${error}` };
  const unusable = unusableFinding(h);
  if (unusable) return { state: 'degraded', reason: unusable };
  if (h.freshness === 'stale') return { state: 'degraded', reason: `data is stale: ${ageText(h, f.nowMs)}` };
  return { state: 'operational', reason: 'polling normally' };
}

/**
 * Why the feed's last checked body is unusable as served: a finding of a rule that says so
 * (pipeline/quality/rules.ts, `unusable`). Any other finding leaves the feed operational.
 */
function unusableFinding(h: FeedHealth): string | null {
  for (const r of h.rules ?? []) {
    if (r.last === 0) continue;
    const spec = ruleSpec(r.rule);
    if (!spec?.unusable) continue;
    const n = r.last === 1 ? '1 finding' : `${r.last} findings`;
    return `last snapshot breaks ${r.rule} (${spec.title}): ${n}${r.example === null ? '' : `, e.g. entity ${r.example}`}`;
  }
  return null;
}

function ageText(h: FeedHealth, nowMs: number): string {
  return h.header_timestamp_ms === null
    ? 'no header timestamp'
    : `header timestamp ${seconds(nowMs - h.header_timestamp_ms)} old`;
}

export interface SourceVerdict {
  feed_id: string;
  state: ComponentState;
}

/** Alert ingestion is down when every source is down, degraded when any source has trouble. */
export function classifyAlertIngestion(sources: readonly SourceVerdict[]): Verdict {
  if (sources.length === 0) return { state: 'operational', reason: 'no alert sources configured' };
  const down = sources.filter((s) => s.state === 'down');
  const troubled = sources.filter((s) => s.state === 'down' || s.state === 'degraded');
  if (down.length === sources.length) return { state: 'down', reason: `every alert source is down: ${names(down)}` };
  if (troubled.length) return { state: 'degraded', reason: `alert sources with problems: ${names(troubled)}` };
  if (sources.every((s) => s.state === 'unknown')) return { state: 'unknown', reason: 'waiting for the first poll' };
  return {
    state: 'operational',
    reason: `${sources.length} source${sources.length === 1 ? '' : 's'} polling normally`,
  };
}

const names = (list: readonly SourceVerdict[]) => list.map((s) => s.feed_id).join(', ');

export interface ApiFacts {
  requests: number;
  server_errors: number;
  p99_ms: number | null;
}

/** Judged on the last 5 minutes, and only once they hold enough requests to mean something. */
export function classifyApi(f: ApiFacts, rules: StatusRules): Verdict {
  if (f.requests < rules.api_min_requests) {
    return { state: 'operational', reason: `${f.requests} requests in the last 5 minutes, too few to judge` };
  }
  const pct = (100 * f.server_errors) / f.requests;
  const share = `${pct < 10 ? pct.toFixed(1) : Math.round(pct)} % of requests failed with 5xx`;
  if (pct >= rules.api_down_error_pct) return { state: 'down', reason: share };
  if (pct >= rules.api_degraded_error_pct) return { state: 'degraded', reason: share };
  if (f.p99_ms !== null && f.p99_ms > rules.api_degraded_p99_ms) {
    return { state: 'degraded', reason: `p99 latency ${Math.round(f.p99_ms)} ms` };
  }
  return { state: 'operational', reason: 'answering normally' };
}

/**
 * A schedule is down without any version, degraded while its refresh fails (the version in
 * place keeps serving) or once its calendar has ended, operational otherwise.
 */
export function classifySchedule(h: ScheduleHealth, today: string): Verdict {
  const v = h.version;
  const c = h.last_check;
  if (!v) {
    return c?.outcome === 'failed'
      ? { state: 'down', reason: `no version imported: ${c.last_error ?? 'import failed'}` }
      : { state: 'unknown', reason: 'waiting for the first import' };
  }
  const serving = `version ${v.version_id}${v.feed_version ? ` (${v.feed_version})` : ''}`;
  if (c?.outcome === 'failed') {
    const times = c.consecutive_failures === 1 ? 'refresh failed' : `${c.consecutive_failures} refreshes failed`;
    return { state: 'degraded', reason: `${times}: ${c.last_error ?? 'unknown error'}; ${serving} stays in place` };
  }
  if (v.service_end_date !== null && v.service_end_date < today) {
    return {
      state: 'degraded',
      reason: `${serving}: its calendar ended on ${v.service_end_date}, later trips are unscheduled`,
    };
  }
  return {
    state: 'operational',
    reason: `${serving} in use${v.service_end_date ? ` until ${v.service_end_date}` : ''}`,
  };
}

/** Overall state and the sentence of the banner. */
export function summarize(states: readonly ComponentState[]): Verdict {
  const state = states.reduce<ComponentState>((a, b) => worse(a, b), 'operational');
  const down = states.filter((s) => s === 'down').length;
  const degraded = states.filter((s) => s === 'degraded').length;
  if (state === 'down') return { state, reason: `${down} component${down === 1 ? ' is' : 's are'} down` };
  if (state === 'degraded')
    return { state, reason: `${degraded} component${degraded === 1 ? ' is' : 's are'} degraded` };
  if (state === 'unknown') return { state, reason: 'Starting: waiting for the first observations' };
  return { state, reason: 'All systems operational' };
}
