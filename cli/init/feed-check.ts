// `init`'s look at one realtime feed: one snapshot fetched as the poller fetches it, decoded by the
// pipeline's decoder, then read against the imported schedule with the pipeline's normalizer, so
// what init reports (entities, matched trips, age) is what `serve` will make of the same bytes.
import type { Config } from '../../core/config.ts';
import type { ScheduleIndex } from '../../core/ports.ts';
import { normalizeAlertsJson } from '../../pipeline/alerts-json.ts';
import { decodeFeedMessage } from '../../pipeline/decode.ts';
import { fetchBody, type FetchFn } from '../../pipeline/fetch-feed.ts';
import type { FeedMessageMsg } from '../../pipeline/gtfs-rt-types.ts';
import { judgeTimestamp, RejectTally } from '../../pipeline/normalize-context.ts';
import { normalizeFeedMessage, type NormalizedPoll } from '../../pipeline/normalize-feed.ts';
import { rejectionMessage, snapshotProblem } from '../../pipeline/snapshot-verdict.ts';
import { TripMatcher } from '../../pipeline/trip-matching/match.ts';
import { describeMatching } from '../commands/ingest.ts';
import { describeBody } from './sniff.ts';
import { instantText } from '../../core/dates.ts';
import { FEED_DEFAULTS } from '../../core/config.ts';
import { DEFAULT_CONFIG } from '../../core/config.ts';

export const FEED_ROLES = ['vehicles', 'trip-updates', 'alerts'] as const;
export type FeedRole = (typeof FEED_ROLES)[number];

/** What each flag is for: the entity kind its feed should carry and how often it is polled. */
export const ROLE_INFO: Record<FeedRole, { entities: string; interval_s: number }> = {
  vehicles: { entities: 'vehicle positions', interval_s: 15 },
  'trip-updates': { entities: 'trip updates', interval_s: 15 },
  alerts: { entities: 'alerts', interval_s: 60 },
};

export interface FeedSource {
  role: FeedRole;
  /** http(s):// or file:// */
  url: string;
  headers: Record<string, string>;
}

export type FetchedFeed =
  | {
      ok: true;
      source: FeedSource;
      kind: 'gtfs-rt' | 'alerts-json';
      body: Uint8Array;
      message: FeedMessageMsg | null;
      fetched_ms: number;
    }
  | { ok: false; source: FeedSource; problem: string };

const AUTH_HINT = "does the agency require a key? pass it with --header 'Name: value' (or in the URL if they say so)";

/** One GET (or file read) and one decode; a body that is not a feed is a refusal that says what it is. */
export async function fetchFeed(source: FeedSource, fetchFn: FetchFn = fetchBody): Promise<FetchedFeed> {
  const raw = await fetchFn({
    url: source.url,
    timeout_ms: FEED_DEFAULTS.timeout_s * 1000,
    max_bytes: FEED_DEFAULTS.max_bytes,
    headers: source.headers,
    etag: null,
    last_modified: null,
  });
  const fetched_ms = Date.now();
  if (raw.kind === 'not_modified') return { ok: false, source, problem: 'answered 304 Not Modified to a plain GET' };
  if (raw.kind === 'failed') {
    const hint = raw.http_status === 401 || raw.http_status === 403 ? `: ${AUTH_HINT}` : '';
    return { ok: false, source, problem: `${raw.error}${hint}` };
  }
  const decoded = decodeFeedMessage(raw.body);
  if (decoded.ok) return { ok: true, source, kind: 'gtfs-rt', body: raw.body, message: decoded.message, fetched_ms };
  // the documented JSON alerts format (pipeline/ALERTS-JSON.md) is a feed of its own kind
  if (source.role === 'alerts') {
    const json = normalizeAlertsJson(raw.body, probeInput(undefined, DEFAULT_LIMITS, fetched_ms));
    if (json.ok) return { ok: true, source, kind: 'alerts-json', body: raw.body, message: null, fetched_ms };
  }
  const looks = decoded.reason === 'base64_body' ? null : describeBody(raw.body);
  const status = raw.http_status ? ` (HTTP ${raw.http_status})` : '';
  if (looks) {
    const hint =
      looks.kind === 'html' ? `: a web page, not the feed; ${AUTH_HINT}` : looks.hint ? `: ${looks.hint}` : '';
    return { ok: false, source, problem: `not a GTFS-Realtime feed${status}: the body is ${looks.what}${hint}` };
  }
  return { ok: false, source, problem: `not a GTFS-Realtime feed${status}: ${decoded.error}` };
}

type Limits = Pick<Config, 'freshness' | 'delay'>;
const DEFAULT_LIMITS: Limits = { freshness: DEFAULT_CONFIG.freshness, delay: DEFAULT_CONFIG.delay };

function probeInput(schedule: ScheduleIndex | undefined, limits: Limits, observedMs: number) {
  return {
    feed_id: 'init',
    observed_ms: observedMs,
    schedule,
    timezone: schedule?.timezone ?? 'UTC',
    freshness: limits.freshness,
    delay: limits.delay,
    rejects: new RejectTally(),
    matcher: new TripMatcher('auto'),
    // read whatever its age, to count and match it; what serve would do with it is said apart
    allow_old_snapshots: true,
  };
}

export interface FeedReport {
  /** what was found, one fact a line */
  facts: string[];
  /** what the operator should look at; none of it stops init */
  warnings: string[];
  poll: NormalizedPoll;
}

const count = (n: number): string => n.toLocaleString('en-US');

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} bytes`;
  if (n < 1024 ** 2) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 ** 2).toFixed(1)} MiB`;
}

/** "12 s", "4 min", "3 h", "2 days", "3 years" */
export function formatAge(ms: number): string {
  const s = Math.round(Math.abs(ms) / 1000);
  if (s < 120) return `${s} s`;
  if (s < 2 * 3600) return `${Math.round(s / 60)} min`;
  if (s < 2 * 86_400) return `${Math.round(s / 3600)} h`;
  if (s < 2 * 365 * 86_400) return `${count(Math.round(s / 86_400))} days`;
  return `${(s / (365.25 * 86_400)).toFixed(1)} years`;
}

/** The snapshot read against the schedule: entities, matched trips, age, and what serve will do with it. */
export function reportFeed(
  feed: Extract<FetchedFeed, { ok: true }>,
  schedule: ScheduleIndex | undefined,
  limits: Limits,
): FeedReport {
  const now = feed.fetched_ms;
  const input = probeInput(schedule, limits, now);
  let poll: NormalizedPoll;
  if (feed.kind === 'alerts-json') {
    const json = normalizeAlertsJson(feed.body, input);
    if (!json.ok) throw new Error(`unreachable: JSON alerts that parsed once failed again: ${json.error}`);
    poll = json.poll;
  } else {
    poll = normalizeFeedMessage(feed.message!, input);
  }
  const facts: string[] = [];
  const warnings: string[] = [];
  const what = feed.kind === 'alerts-json' ? 'JSON alerts (pipeline/ALERTS-JSON.md)' : 'GTFS-Realtime';
  facts.push(
    `${what}, ${formatBytes(feed.body.byteLength)}: ${count(poll.entities)} ` +
      `${poll.entities === 1 ? 'entity' : 'entities'} ` +
      `(${count(poll.vehicle_entities)} vehicle positions, ${count(poll.trip_update_entities)} trip updates, ` +
      `${count(poll.alert_entities)} alerts)`,
  );

  const header = poll.header_timestamp_ms;
  if (header === null) {
    facts.push('no header timestamp: freshness is judged by poll time');
  } else {
    const age = now - header;
    facts.push(
      `snapshot time ${instantText(header)}: ` +
        `${age >= 0 ? `${formatAge(age)} old` : `${formatAge(age)} ahead of this clock`}`,
    );
    const wasMs = (poll.rejected.header_timestamp_ms ?? 0) > 0;
    if (wasMs)
      warnings.push('the header timestamp is in milliseconds where GTFS-Realtime says seconds: read back as such');
    const verdict = judgeTimestamp(header, {
      observed_ms: now,
      freshness: limits.freshness,
      allow_old_snapshots: false,
    });
    if (verdict !== 'ok') {
      warnings.push(
        `serve will refuse this snapshot as it is: ` +
          rejectionMessage({ reason: verdict, header_ms: header, header_was_ms: wasMs }, now, limits.freshness).replace(
            /^snapshot rejected: /,
            '',
          ) +
          (verdict === 'timestamp_too_old' ? ' (for archived captures only: a live feed this old is stuck)' : ''),
      );
    } else if (age > limits.freshness.expired_after_s * 1000) {
      warnings.push(
        `older than freshness.expired_after_s (${limits.freshness.expired_after_s} s): the API will show its data as ` +
          `expired. Is the feed updating?`,
      );
    }
  }

  const matching = describeMatching(poll.matching, schedule !== undefined);
  if (matching) facts.push(matching);
  if (poll.matching && poll.matching.trips > 0 && poll.matching.match_rate < 0.5) {
    warnings.push(
      "fewer than half of its trips match the schedule: is the GTFS the one this feed's trip ids come from, and " +
        'current? (docs/guides/real-feeds.md, Trip matching)',
    );
  }
  const rejected = Object.entries(poll.rejected).filter(([reason, n]) => reason !== 'header_timestamp_ms' && n);
  if (rejected.length) {
    facts.push(
      `${count(rejected.reduce((a, [, n]) => a + (n ?? 0), 0))} rows would be rejected: ` +
        `${rejected.map(([r, n]) => `${r} ${count(n ?? 0)}`).join(', ')}`,
    );
  }
  const problem = snapshotProblem(poll, now, limits.freshness);
  if (problem) warnings.push(problem);

  const expected = ROLE_INFO[feed.source.role].entities;
  const carried = {
    vehicles: poll.vehicle_entities,
    'trip-updates': poll.trip_update_entities,
    alerts: poll.alert_entities,
  };
  if (poll.entities === 0) {
    facts.push(`no entities right now: a valid, empty feed (it cannot show yet whether it carries ${expected})`);
  } else if (carried[feed.source.role] === 0) {
    warnings.push(
      `given as --${feed.source.role} but it carries no ${expected}: is it the right URL? (it is polled all the same)`,
    );
  }
  return { facts, warnings, poll };
}
