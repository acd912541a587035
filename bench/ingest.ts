// Decode + normalize + live state + store per poll for generated GTFS-RT feeds, each figure beside
// a baseline measured in the same run on the same bytes and batches: a bare protobufjs decode, and
// DuckDB inserting every row of each poll into the same tables itself (INSERT … FROM range(), one
// transaction per poll, no JS, into a database file of its own: the engine's own ceiling for our
// row shapes, storing every poll whole as the history did before it became change-only).
//   node --import tsx bench/ingest.ts   (VEHICLES=5000 TRIPS=1500 STOPS=25 POLLS=30 DB=memory to change)
//   node --max-semi-space-size=64 --import tsx bench/ingest.ts   (the young generation the service runs with)
//   PACE_MS=300: a pause between polls (polls back to back leave the store no idle moment to checkpoint in)
// Polls go through the real pipeline (hash, decode, normalize, live state, events, history queue)
// into a real DuckDB file in a temp dir; only the network fetch is replaced by bytes held in memory.
// Each poll is one pollOnce: it ends once stored (end to end); "to live" is the poll's own duration,
// where a timed poll ends (its history append runs behind it, pipeline/history-queue.ts).
// The vehicle feed runs twice: every vehicle moving every poll, the worst case (every row stored,
// every vehicle an event); and after the trip updates, as real feeds are, a share of the vehicles
// with a new report each poll and the others repeating theirs (SHARE, default 0.45: the share of
// vehicles under 10 s old in the real captures, bench/ingest-feeds.ts REPORTING_SHARE), which the
// end-to-end target judges.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { getHeapSpaceStatistics } from 'node:v8';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import { InMemoryEventBus } from '../core/events.ts';
import type { FeedPoll } from '../core/types.ts';
import { createPipeline } from '../pipeline/ingest.ts';
import { listFiles, replaySnapshots, scanSnapshots } from '../pipeline/replay.ts';
import type { FetchFn } from '../pipeline/fetch-feed.ts';
import { testConfig } from '../test/support/pipeline-fakes.ts';
import {
  NOW_S,
  REPORTING_SHARE,
  STOPS,
  TRIPS,
  VEHICLES,
  schedule,
  tripUpdateFeed,
  vehicleFeed,
} from './ingest-feeds.ts';
import { Db } from '../store/db.ts';
import { createHistoryWriter } from '../store/history-writer.ts';
import { createLogger } from '../core/logger.ts';
import { engineInsert, TimedHistory } from './ingest-history.ts';
import { report } from './report.ts';

const POLLS = Number(process.env.POLLS ?? 30);
/** the share of vehicles with a new report per poll in the vehicle feed the end-to-end target judges */
const SHARE = Number(process.env.SHARE ?? REPORTING_SHARE);
/** a pause between polls, as feeds polled every few seconds have (the history queue checkpoints when idle) */
const PACE_MS = Number(process.env.PACE_MS ?? 0);
const WARMUP = 5;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const p90 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.9)]!;

async function benchFeed(feed: string, bodies: Uint8Array[], db: Db) {
  const bare = new protobuf.Root()
    .loadSync(join(dirname(fileURLToPath(import.meta.url)), '..', 'pipeline', 'gtfs-realtime.proto'), {
      keepCase: true,
    })
    .lookupType('transit_realtime.FeedMessage');
  let n = 0;
  const fetch: FetchFn = async () => ({
    kind: 'body',
    body: bodies[n++ % bodies.length]!,
    http_status: 200,
    etag: null,
    last_modified: null,
  });
  const history = new TimedHistory(createHistoryWriter(db));
  const bus = new InMemoryEventBus();
  let events = 0;
  bus.subscribe((batch) => {
    events += batch.length;
  });
  const pipeline = createPipeline({
    config: testConfig({ feeds: [{ id: feed, kind: 'gtfs-rt', url: 'http://bench.invalid/' }] }),
    bus,
    history,
    scheduleFor: () => schedule,
    now: () => NOW_S * 1000 + 2_000,
    fetch,
    log: createLogger(),
  });

  const e2e: number[] = [];
  const toLive: number[] = [];
  const engineMs: number[] = [];
  const appendMs: number[] = [];
  let engineRows = 0;
  const e2eCpu: number[] = [];
  const decode: number[] = [];
  let last: FeedPoll | undefined;
  for (let i = 0; i < WARMUP + POLLS; i++) {
    if (PACE_MS > 0) await new Promise((resolve) => setTimeout(resolve, PACE_MS));
    const body = bodies[n % bodies.length]!;
    // baseline and product alternate on the same bytes so machine noise hits both alike
    const d0 = performance.now();
    bare.decode(body);
    const d1 = performance.now();
    if (i === WARMUP) {
      history.ms = 0;
      history.rows = 0;
      history.idleMs = 0;
      history.blockMs = 0;
    }
    // CPU time as well as wall time: on a shared machine the wall clock also counts other
    // processes' turns (DuckDB's own threads count in CPU time too)
    const c0 = process.cpuUsage();
    const appendedBefore = history.ms;
    const t0 = performance.now();
    last = await pipeline.pollOnce(feed);
    const t1 = performance.now();
    const cpu = process.cpuUsage(c0);
    const appended = history.ms - appendedBefore;
    // every row of the poll per table, in one transaction: what a row per poll stored (change-only
    // history stores what changed of them)
    const same = history.polled;
    const engine = await engineInsert(engineDb, same, i);
    if (i >= WARMUP) {
      e2e.push(t1 - t0);
      toLive.push(last.duration_ms);
      e2eCpu.push((cpu.user + cpu.system) / 1000);
      decode.push(d1 - d0);
      engineMs.push(engine);
      engineRows += same.vehicles + same.trips + same.arrivals;
      appendMs.push(appended);
    }
  }
  await pipeline.stop();
  const checkpointMs = history.idleMs;
  if (last?.status !== 'ok') throw new Error(`bench poll not ok: ${JSON.stringify(last)}`);
  return {
    feed,
    bytes: bodies[0]!.byteLength,
    entities: last.entities,
    stored: last.stored,
    rejected: last.rejected,
    events,
    liveMedian: median(toLive),
    liveP90: p90(toLive),
    e2eMedian: median(e2e),
    e2eP90: p90(e2e),
    e2eCpuMedian: median(e2eCpu),
    decodeMedian: median(decode),
    appendRowsPerS: history.rows / (history.ms / 1000),
    withCheckpointsRowsPerS: history.rows / ((history.ms + checkpointMs) / 1000),
    checkpointMs,
    appendMsPerPoll: history.ms / POLLS,
    appendMedian: median(appendMs),
    appendP90: p90(appendMs),
    appendBlockMs: history.blockMs,
    engineRowsPerS: engineRows / (engineMs.reduce((a, b) => a + b, 0) / 1000),
    engineMedian: median(engineMs),
    engineP90: p90(engineMs),
  };
}

/**
 * The same snapshots as archived files through `replay` (header scan, then each file through the
 * pipeline at its header time) into the same database under another feed id, so none is a duplicate.
 */
async function benchReplay(feed: string, bodies: Uint8Array[], db: Db, archive: string) {
  const folder = join(archive, feed);
  mkdirSync(folder, { recursive: true });
  bodies.forEach((body, i) => {
    writeFileSync(join(folder, `snapshot-${String(i).padStart(4, '0')}.pb`), body);
  });
  const feedId = `${feed}-replay`;
  const pipeline = createPipeline({
    config: testConfig({
      feeds: [{ id: feedId, kind: 'gtfs-rt', url: 'http://bench.invalid/', allow_old_snapshots: true }],
    }),
    bus: new InMemoryEventBus(),
    history: createHistoryWriter(db),
    scheduleFor: () => schedule,
    log: createLogger(),
  });
  const t0 = performance.now();
  const summary = await replaySnapshots(pipeline, feedId, scanSnapshots(listFiles([folder])));
  const seconds = (performance.now() - t0) / 1000;
  await pipeline.stop();
  if (summary.outcomes.ok !== bodies.length)
    throw new Error(`replay did not store every snapshot: ${JSON.stringify(summary.outcomes)}`);
  return { snapshotsPerS: summary.snapshots / seconds, rowsPerS: summary.rows_stored / seconds };
}

const dir = mkdtempSync(join(tmpdir(), 'bench-ingest-'));
// DB=memory measures without the file's commit cost, to tell storage from CPU
const db = await Db.open(process.env.DB === 'memory' ? ':memory:' : join(dir, 'bench.duckdb'));
// the baseline's own file (same schema): its WAL and checkpoints do not land in the pipeline's commits
const engineDb = await Db.open(process.env.DB === 'memory' ? ':memory:' : join(dir, 'engine.duckdb'));
try {
  console.log(
    `bench/ingest: ${VEHICLES} vehicles, ${TRIPS} trips × ${STOPS} stops, ${POLLS} polls after ${WARMUP} warm-up, ` +
      `${PACE_MS ? `${PACE_MS} ms apart` : 'back to back'}, DuckDB ${db.path}`,
  );
  // one snapshot per poll: a body polled twice is a duplicate and not stored again (idempotent history)
  const feeds = [
    {
      feed: 'vehicles',
      label: 'vehicles, every vehicle moving every poll (the worst case)',
      bodies: Array.from({ length: WARMUP + POLLS }, (_, i) => vehicleFeed(i)),
    },
    {
      feed: 'trip_updates',
      label: 'trip_updates',
      bodies: Array.from({ length: WARMUP + POLLS }, (_, i) => tripUpdateFeed(i)),
    },
    {
      feed: 'vehicles-reporting',
      label: `vehicles, ${Math.round(SHARE * 100)}% with a new report each poll (as in real feeds)`,
      bodies: Array.from({ length: WARMUP + POLLS }, (_, i) => vehicleFeed(i, SHARE)),
    },
  ];
  const results = [];
  for (const f of feeds) {
    results.push({
      ...(await benchFeed(f.feed, f.bodies, db)),
      label: f.label,
      replay: await benchReplay(f.feed, f.bodies, db, join(dir, 'archive')),
    });
  }
  const ms = (median: number, p90: number) =>
    `median ${median.toFixed(1).padStart(6)} ms, p90 ${p90.toFixed(1).padStart(6)} ms`;
  for (const r of results) {
    console.log(
      `\n${r.label}: ${(r.bytes / 1024).toFixed(0)} KB, ${r.entities} entities → ${r.stored} rows stored per poll, ` +
        `${r.events} events in total, rejected ${JSON.stringify(r.rejected)}`,
    );
    console.log(`  to the live state and its events (where a timed poll ends):  ${ms(r.liveMedian, r.liveP90)}`);
    console.log(
      `  end to end, stored (pollOnce: + history queue and append):   ${ms(r.e2eMedian, r.e2eP90)}, CPU ` +
        `${r.e2eCpuMedian.toFixed(1)} ms`,
    );
    console.log(
      `    baseline: bare protobufjs decode of the same bytes:          median ` +
        `${r.decodeMedian.toFixed(1).padStart(6)} ms (end to end ` +
        `${(r.e2eMedian / r.decodeMedian).toFixed(1)}×)`,
    );
    console.log(
      `  history append (one transaction per poll, what changed):     ${ms(r.appendMedian, r.appendP90)}, ` +
        `${Math.round(r.appendRowsPerS).toLocaleString('en-US')} poll rows/s`,
    );
    console.log(
      `    longest the event loop waited during an append (requests and streams wait as long): ` +
        `${r.appendBlockMs.toFixed(1)} ms`,
    );
    console.log(
      `    with the checkpoints it ran when idle (${r.checkpointMs.toFixed(0)} ms in all): ` +
        `${Math.round(r.withCheckpointsRowsPerS).toLocaleString('en-US')} rows/s`,
    );
    console.log(
      `    baseline: DuckDB INSERT … FROM range(), every poll row:     ${ms(r.engineMedian, r.engineP90)}, ` +
        `${Math.round(r.engineRowsPerS).toLocaleString('en-US')} rows/s ` +
        `(append / engine ${(r.appendRowsPerS / r.engineRowsPerS).toFixed(2)}×)`,
    );
    const livePerS = 1000 / r.e2eMedian;
    console.log(
      `  replay of the same ${WARMUP + POLLS} snapshots as files: ${r.replay.snapshotsPerS.toFixed(1)} snapshots/s, ` +
        `${Math.round(r.replay.rowsPerS).toLocaleString('en-US')} rows/s (live polls back to back: ` +
        `${livePerS.toFixed(1)}/s; ` +
        `replay / live ${(r.replay.snapshotsPerS / livePerS).toFixed(2)}×)`,
    );
  }
  type Result = (typeof results)[0];
  const [vehicles, tripUpdates, reporting] = results as [Result, Result, Result];
  // the appends' target as before: every row of the worst-case vehicle poll, and the trip updates
  const appends = [vehicles, tripUpdates];
  const semi = getHeapSpaceStatistics().find((sp) => sp.space_name === 'new_space')?.space_size ?? 0;
  console.log(
    `\nload average at the end: ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')} on ${cpus().length} CPUs; young generation ${(semi / 2 ** 20).toFixed(0)} MiB`,
  );
  const verdict = (ok: boolean) => (ok ? 'met' : 'MISS');
  report({
    bench: 'ingest',
    figure: `5,000-vehicle poll, ${Math.round(SHARE * 100)}% reporting, end to end p90`,
    value: reporting.e2eP90,
    unit: 'ms',
    baseline: 'protobufjs decode alone (median)',
    baselineValue: reporting.decodeMedian,
    ratio: reporting.e2eP90 / reporting.decodeMedian,
    target: '< 60 ms',
    met: reporting.e2eP90 < 60,
  });
  report({
    bench: 'ingest',
    figure: '5,000-vehicle poll, every vehicle moving (worst case), end to end p90',
    value: vehicles.e2eP90,
    unit: 'ms',
    baseline: 'protobufjs decode alone (median)',
    baselineValue: vehicles.decodeMedian,
    ratio: vehicles.e2eP90 / vehicles.decodeMedian,
    met: null,
  });
  report({
    bench: 'ingest',
    figure: '5,000-vehicle poll, to the live state (median)',
    value: vehicles.liveMedian,
    unit: 'ms',
    baseline: 'protobufjs decode alone (median)',
    baselineValue: vehicles.decodeMedian,
    ratio: vehicles.liveMedian / vehicles.decodeMedian,
    target: '< 25 ms',
    met: vehicles.liveMedian < 25,
  });
  for (const r of appends) {
    report({
      bench: 'ingest',
      figure: `history appends, ${r.feed}`,
      value: r.appendRowsPerS,
      unit: 'rows/s',
      baseline: 'DuckDB INSERT … FROM range(), every row of the poll per transaction',
      baselineValue: r.engineRowsPerS,
      ratio: r.appendRowsPerS / r.engineRowsPerS,
      target: '≥ 500k rows/s',
      met: r.appendRowsPerS >= 500_000,
    });
  }
  report({
    bench: 'ingest',
    figure: 'trip-updates poll, end to end p90 ÷ median',
    value: tripUpdates.e2eP90,
    unit: 'ms',
    baseline: 'its median',
    baselineValue: tripUpdates.e2eMedian,
    ratio: tripUpdates.e2eP90 / tripUpdates.e2eMedian,
    target: 'p90 < 2× median',
    met: tripUpdates.e2eP90 < 2 * tripUpdates.e2eMedian,
  });
  console.log('targets:');
  console.log(
    `  5,000-vehicle poll p90 end to end < 60 ms, judged with ${Math.round(SHARE * 100)}% of the vehicles reporting ` +
      `each poll: ${reporting.e2eP90.toFixed(1)} ms ${verdict(reporting.e2eP90 < 60)} ` +
      `(every vehicle moving, not judged: ${vehicles.e2eP90.toFixed(1)} ms)`,
  );
  console.log(
    `  5,000-vehicle poll to live < 25 ms, judged with every vehicle moving: median ` +
      `${vehicles.liveMedian.toFixed(1)} ms ${verdict(vehicles.liveMedian < 25)} ` +
      `(${Math.round(SHARE * 100)}% reporting: ${reporting.liveMedian.toFixed(1)} ms)`,
  );
  console.log(
    `  history appends ≥ 500k rows/s: ` +
      `${appends
        .map(
          (r) =>
            `${r.feed} ${Math.round(r.appendRowsPerS / 1000)}k (engine ` + `${Math.round(r.engineRowsPerS / 1000)}k)`,
        )
        .join(', ')} ` +
      `${verdict(appends.every((r) => r.appendRowsPerS >= 500_000))}`,
  );
  console.log(
    `  trip-updates poll p90 < 2× median: end to end ${tripUpdates.e2eP90.toFixed(1)} / ` +
      `${tripUpdates.e2eMedian.toFixed(1)} ms ` +
      `${verdict(tripUpdates.e2eP90 < 2 * tripUpdates.e2eMedian)}; to live ${tripUpdates.liveP90.toFixed(1)} / ` +
      `${tripUpdates.liveMedian.toFixed(1)} ms ` +
      `${verdict(tripUpdates.liveP90 < 2 * tripUpdates.liveMedian)}`,
  );
} finally {
  await db.close();
  await engineDb.close();
  rmSync(dir, { recursive: true, force: true });
}
