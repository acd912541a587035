// Where one poll's time goes, stage by stage, on the bench's generated feeds, in the order
// pipeline/ingest.ts runs them: hash, decode, the feed rules (pipeline/quality), normalize, the
// snapshot lookup, stop events (pipeline/stop-events), live state + events, the history write
// (change selection, append and commit in one transaction). Each stage is timed alone.
//   node --max-semi-space-size=64 --import tsx bench/ingest-phases.ts
//   KIND=vehicles|trip_updates (default vehicles) SHARE=0.45 (vehicles with a new report each poll,
//   bench/ingest.ts's judged case) POLLS=30 DB=memory
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { InMemoryEventBus } from '../core/events.ts';
import { createLogger } from '../core/logger.ts';
import { decodeFeedMessage } from '../pipeline/decode.ts';
import { sha256 } from '../pipeline/fetch-feed.ts';
import { newPoll } from '../core/types.ts';
import { RejectTally } from '../pipeline/normalize-context.ts';
import { normalizeFeedMessage } from '../pipeline/normalize-feed.ts';
import { LiveState } from '../pipeline/state.ts';
import { TripMatcher } from '../pipeline/trip-matching/match.ts';
import { Db } from '../store/db.ts';
import { createHistoryWriter } from '../store/history-writer.ts';
import { testConfig } from '../test/support/pipeline-fakes.ts';
import { FeedQualityChecker } from '../pipeline/quality/checker.ts';
import { StopEventTracker } from '../pipeline/stop-events/tracker.ts';
import { NOW_S, REPORTING_SHARE, schedule, tripUpdateFeed, vehicleFeed } from './ingest-feeds.ts';

const KIND = (process.env.KIND ?? 'vehicles') as 'vehicles' | 'trip_updates';
const SHARE = Number(process.env.SHARE ?? REPORTING_SHARE);
const POLLS = Number(process.env.POLLS ?? 30);
const WARMUP = 5;
const config = testConfig({ feeds: [{ id: KIND, kind: 'gtfs-rt', url: 'http://bench.invalid/' }] });
const feed = config.feeds[0]!;
const bodies = Array.from({ length: WARMUP + POLLS }, (_, i) =>
  KIND === 'vehicles' ? vehicleFeed(i, SHARE) : tripUpdateFeed(i),
);
const dir = mkdtempSync(join(tmpdir(), 'bench-phases-'));
const db = await Db.open(process.env.DB === 'memory' ? ':memory:' : join(dir, 'bench.duckdb'));
const history = createHistoryWriter(db);
const bus = new InMemoryEventBus({ log: createLogger() });
let events = 0;
bus.subscribe((b) => {
  events += b.length;
});
const state = new LiveState({ config, bus, now: () => NOW_S * 1000 + 2_000, scheduleFor: () => schedule });
const quality = new FeedQualityChecker();
const tracker = new StopEventTracker({ trip_timeout_s: config.history.trip_timeout_s });
const phases = [
  'hash',
  'decode',
  'feed rules',
  'normalize',
  'snapshot lookup',
  'stop events',
  'state+events',
  'events delivered',
  'history write',
] as const;
const times: Record<string, number[]> = Object.fromEntries(phases.map((p) => [p, []]));
try {
  for (let i = 0; i < WARMUP + POLLS; i++) {
    const body = bodies[i]!;
    const t: number[] = [performance.now()];
    const hash = sha256(body);
    t.push(performance.now());
    const decoded = decodeFeedMessage(body);
    if (!decoded.ok) throw new Error(decoded.error);
    t.push(performance.now());
    const polled = NOW_S * 1000 + 2_000 + i * 1000;
    const findings = quality.check(KIND, decoded.message, {
      sha256: hash,
      now_ms: polled,
      schedule,
      interval_s: feed.interval_s,
    });
    t.push(performance.now());
    const rows = normalizeFeedMessage(decoded.message, {
      feed_id: KIND,
      observed_ms: polled,
      schedule,
      timezone: schedule.timezone,
      default_mode: null,
      freshness: config.freshness,
      delay: config.delay,
      rejects: new RejectTally(),
      // one per poll, as pipeline/ingest.ts makes it (it counts the poll's matching)
      matcher: new TripMatcher(feed.trip_matching, feed.route_aliases),
    });
    t.push(performance.now());
    await history.hasSnapshot({ feed_id: KIND, body_sha256: hash });
    t.push(performance.now());
    const tracked = tracker.observe({
      feed_id: KIND,
      group: `feed:${KIND}`,
      schedule_id: null,
      schedule,
      observed_ms: rows.header_timestamp_ms ?? polled,
      vehicles: rows.vehicles,
      arrivals: rows.arrivals,
    });
    t.push(performance.now());
    const poll = { ...newPoll(KIND, polled), entities: rows.entities, findings };
    const versions = state.applyPoll(poll, rows);
    t.push(performance.now());
    await new Promise<void>((resolve) => queueMicrotask(resolve));
    t.push(performance.now());
    await history.write({
      vehicles: rows.vehicles,
      arrivals: rows.arrivals,
      trips: rows.trips,
      alertVersions: versions,
      polls: [poll],
      stopEvents: tracked.events,
      snapshot: {
        feed_id: KIND,
        body_sha256: hash,
        header_timestamp_ms: rows.header_timestamp_ms,
        observed_ms: polled,
        source: 'poll',
      },
    });
    t.push(performance.now());
    if (i >= WARMUP)
      phases.forEach((p, k) => {
        times[p]!.push(t[k + 1]! - t[k]!);
      });
  }
} finally {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
}
const q = (xs: number[], f: number) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * f)]!;
const medians = phases.reduce((sum, p) => sum + q(times[p]!, 0.5), 0);
console.log(
  `${KIND}${KIND === 'vehicles' ? ` (${Math.round(SHARE * 100)}% with a new report each poll)` : ''}: ` +
    `${POLLS} polls after ${WARMUP} warm-up, ${events} events, load ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
);
for (const p of phases)
  console.log(
    `  ${p.padEnd(18)} median ${q(times[p]!, 0.5).toFixed(1).padStart(6)} ms  p90 ` +
      `${q(times[p]!, 0.9).toFixed(1).padStart(6)} ms`,
  );
console.log(`  ${'sum of the medians'.padEnd(18)}        ${medians.toFixed(1).padStart(6)} ms`);
