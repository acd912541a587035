// The node section of the status document: what the node that answers knows about its links
// (broker, live state, ingest node), judged by the rules below, and the edges' health read from
// their heartbeats. Pure functions of their inputs and the clock, like classify.ts.
import type { ComponentState } from './schema.ts';
import type { Verdict } from './classify.ts';
import { EdgeHeartbeatSchema, type EdgeHealth, type NodeStatus } from './node-schema.ts';
import { iso, isoRequired } from '../core/dates.ts';

/** The ingest node beats once a second: a copy not confirmed for this long is behind. */
export const LIVE_STATE_LATE_MS = 5_000;
/** Edges beat every 2 s: one not heard for this long is down. */
export const EDGE_SILENT_MS = 10_000;

export interface NodeFacts {
  role: NodeStatus['role'];
  nodeId: string;
  broker: { state: 'up' | 'down'; downSinceMs: number | null };
  /** an edge's copy of the live state */
  live?: { publishedMs: number | null; snapshots: number; changes: number };
  /** how an edge reaches the ingest node */
  ingest?: {
    url: string | null;
    source: 'config' | 'broker' | null;
    reachable: boolean | null;
    checkedMs: number | null;
    lastOkMs: number | null;
    error: string | null;
    forwarded: number;
    failed: number;
  };
}

const clock = (ms: number) => `${isoRequired(ms).slice(11, 19)} UTC`;
const seconds = (ms: number) => `${ms < 10_000 ? (ms / 1000).toFixed(1) : Math.round(ms / 1000)} s`;

/** Degraded for each link in trouble (the reasons joined); an edge that never read the state is unknown. */
export function classifyNode(f: NodeFacts, nowMs: number): Verdict {
  const problems: string[] = [];
  const published = f.live?.publishedMs ?? null;
  const ageMs = published === null ? null : Math.max(0, nowMs - published);
  const liveAge = ageMs === null ? 'no live state yet' : `the live state of ${seconds(ageMs)} ago`;
  if (f.broker.state === 'down') {
    const since = f.broker.downSinceMs === null ? '' : ` since ${clock(f.broker.downSinceMs)}`;
    problems.push(
      f.role === 'edge'
        ? `The broker is unreachable${since}: serving ${liveAge}; rate limits count on this node alone; new ` +
            `events wait for it`
        : `The broker is unreachable${since}: edges serve their last live state and get no new events until it returns`,
    );
  } else if (f.live && ageMs !== null && ageMs > LIVE_STATE_LATE_MS) {
    problems.push(
      `No live state from the ingest node for ${seconds(ageMs)} (it beats once a second): serving the last copy`,
    );
  }
  const reach = f.ingest;
  if (reach && reach.reachable === false) {
    const where = reach.url ? `The ingest node (${reach.url})` : 'The ingest node';
    problems.push(
      `${where} is not answering: history, account and export paths answer 503 here (${reach.error ?? 'no answer'})`,
    );
  }
  if (problems.length) return { state: 'degraded', reason: problems.join('; ') };
  if (f.role !== 'edge') return { state: 'operational', reason: 'Connected to the broker' };
  if (ageMs === null) return { state: 'unknown', reason: 'Waiting for the ingest node to publish the live state' };
  if ((reach?.reachable ?? null) === null) return { state: 'unknown', reason: 'Checking the ingest node' };
  return { state: 'operational', reason: `Serving ${liveAge}; the ingest node answers` };
}

export function nodeStatus(f: NodeFacts, nowMs: number): NodeStatus {
  const verdict = classifyNode(f, nowMs);
  const live = f.live;
  const reach = f.ingest;
  return {
    role: f.role,
    node_id: f.nodeId,
    state: verdict.state,
    reason: verdict.reason,
    broker: { state: f.broker.state, down_since: f.broker.state === 'down' ? iso(f.broker.downSinceMs) : null },
    live_state: live
      ? {
          updated_at: iso(live.publishedMs),
          age_s: live.publishedMs === null ? null : Math.max(0, Math.round((nowMs - live.publishedMs) / 100) / 10),
          snapshots: live.snapshots,
          changes: live.changes,
        }
      : null,
    ingest: reach
      ? {
          url: reach.url,
          source: reach.source,
          reachable: reach.reachable,
          checked_at: iso(reach.checkedMs),
          last_ok_at: iso(reach.lastOkMs),
          error: reach.error,
          forwarded: reach.forwarded,
          forward_failures: reach.failed,
        }
      : null,
  };
}

export interface HeartbeatEntry {
  payload: unknown;
  /** when this node saw it change, by its own clock */
  heardMs: number;
}

/** The edges as their heartbeats say, newest first; an edge silent for EDGE_SILENT_MS is down. */
export function edgeHealth(entries: readonly HeartbeatEntry[], nowMs: number): EdgeHealth[] {
  const out: EdgeHealth[] = [];
  for (const entry of entries) {
    const parsed = EdgeHeartbeatSchema.safeParse(entry.payload);
    if (!parsed.success) continue;
    const h = parsed.data;
    const silentMs = Math.max(0, nowMs - entry.heardMs);
    const silent = silentMs > EDGE_SILENT_MS;
    out.push({
      node_id: h.node_id,
      url: h.url,
      state: silent ? 'down' : h.state,
      reason: silent ? `No heartbeat for ${seconds(silentMs)}` : h.reason,
      heard_at: iso(entry.heardMs)!,
      heartbeat_age_s: Math.round(silentMs / 100) / 10,
      started_at: h.started_at,
      live_state_age_s: h.live_state_age_s,
      ingest_reachable: h.ingest_reachable,
      requests_per_minute: h.requests_per_minute,
      error_rate: h.error_rate,
      p99_ms: h.p99_ms,
      open_streams: h.open_streams,
    });
  }
  return out.sort((a, b) => (a.node_id < b.node_id ? -1 : a.node_id > b.node_id ? 1 : 0));
}

/** An edge counts in the deployment's overall state as degraded at worst: clients reach the others. */
export function edgeWeight(state: ComponentState): ComponentState {
  return state === 'down' ? 'degraded' : state;
}
