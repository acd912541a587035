// Decode + normalize + store per poll for generated GTFS-RT feeds, against a bare protobufjs decode
// of the same bytes measured in the same run.
//   node --import tsx bench/ingest.ts   (VEHICLES=5000 TRIPS=1500 STOPS=25 POLLS=30 DB=memory to change)
// Polls go through the real pipeline (hash, decode, normalize, live state, events, history) into a
// real DuckDB file in a temp dir; only the network fetch is replaced by bytes held in memory.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import { InMemoryEventBus } from '../core/events.ts';
import type { HistoryBatch, HistoryWriter, SnapshotKey } from '../core/ports.ts';
import type { FeedPoll } from '../core/types.ts';
import { createPipeline } from '../pipeline/ingest.ts';
import { listFiles, replaySnapshots, scanSnapshots } from '../pipeline/replay.ts';
import type { FetchFn } from '../pipeline/fetch-feed.ts';
import { testConfig } from '../test/support/pipeline-fakes.ts';
import { NOW_S, STOPS, TRIPS, VEHICLES, schedule, tripUpdateFeed, vehicleFeed } from './ingest-feeds.ts';
import { Db } from '../store/db.ts';
import { createHistoryWriter } from '../store/history-writer.ts';
import { createLogger } from '../core/logger.ts';

const POLLS = Number(process.env.POLLS ?? 30);
const WARMUP = 5;

/** Wraps the real writer to time the appends alone. */
class TimedHistory implements HistoryWriter {
  ms = 0;
  rows = 0;
  constructor(private readonly inner: HistoryWriter) {}
  hasSnapshot(key: SnapshotKey): Promise<boolean> {
    return this.inner.hasSnapshot(key);
  }
  async write(batch: HistoryBatch): Promise<number> {
    const t0 = performance.now();
    const stored = await this.inner.write(batch);
    this.ms += performance.now() - t0;
    this.rows += stored;
    return stored;
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const p90 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.9)]!;

async function benchFeed(kind: 'vehicles' | 'trip_updates', bodies: Uint8Array[], db: Db) {
  const bare = new protobuf.Root().loadSync(join(dirname(fileURLToPath(import.meta.url)), '..', 'pipeline', 'gtfs-realtime.proto'), { keepCase: true })
    .lookupType('transit_realtime.FeedMessage');
  let n = 0;
  const fetch: FetchFn = async () => ({ kind: 'body', body: bodies[n++ % bodies.length]!, http_status: 200, etag: null, last_modified: null });
  const history = new TimedHistory(createHistoryWriter(db));
  const bus = new InMemoryEventBus();
  let events = 0;
  // the bus delivers a poll's events once the live state holds its rows: what API clients see
  let liveAt = 0;
  bus.subscribe((batch) => {
    events += batch.length;
    if (liveAt === 0) liveAt = performance.now();
  });
  const pipeline = createPipeline({
    config: testConfig({ feeds: [{ id: kind, kind: 'gtfs-rt', url: 'http://bench.invalid/' }] }),
    bus, history, scheduleFor: () => schedule, now: () => NOW_S * 1000 + 2_000, fetch, log: createLogger(),
  });

  const e2e: number[] = [];
  const toLive: number[] = [];
  const e2eCpu: number[] = [];
  const decode: number[] = [];
  let last: FeedPoll | undefined;
  for (let i = 0; i < WARMUP + POLLS; i++) {
    const body = bodies[n % bodies.length]!;
    // baseline and product alternate on the same bytes so machine noise hits both alike
    const d0 = performance.now();
    bare.decode(body);
    const d1 = performance.now();
    if (i === WARMUP) {
      history.ms = 0;
      history.rows = 0;
    }
    // CPU time as well as wall time: on a shared machine the wall clock also counts other
    // processes' turns (DuckDB's own threads count in CPU time too)
    const c0 = process.cpuUsage();
    liveAt = 0;
    const t0 = performance.now();
    last = await pipeline.pollOnce(kind);
    const t1 = performance.now();
    const cpu = process.cpuUsage(c0);
    if (i >= WARMUP) {
      e2e.push(t1 - t0);
      if (liveAt > 0) toLive.push(liveAt - t0);
      e2eCpu.push((cpu.user + cpu.system) / 1000);
      decode.push(d1 - d0);
    }
  }
  await pipeline.stop();
  if (last?.status !== 'ok') throw new Error(`bench poll not ok: ${JSON.stringify(last)}`);
  return {
    kind, bytes: bodies[0]!.byteLength, entities: last.entities, stored: last.stored, rejected: last.rejected, events,
    liveMedian: toLive.length ? median(toLive) : NaN, e2eMedian: median(e2e), e2eP90: p90(e2e), e2eCpuMedian: median(e2eCpu), decodeMedian: median(decode),
    appendRowsPerS: history.rows / (history.ms / 1000), appendMsPerPoll: history.ms / POLLS,
  };
}

/**
 * The same snapshots as archived files through `replay` (header scan, then each file through the
 * pipeline at its header time) into the same database under another feed id, so none is a duplicate.
 */
async function benchReplay(kind: 'vehicles' | 'trip_updates', bodies: Uint8Array[], db: Db, archive: string) {
  const folder = join(archive, kind);
  mkdirSync(folder, { recursive: true });
  bodies.forEach((body, i) => writeFileSync(join(folder, `snapshot-${String(i).padStart(4, '0')}.pb`), body));
  const feedId = `${kind}-replay`;
  const pipeline = createPipeline({
    config: testConfig({ feeds: [{ id: feedId, kind: 'gtfs-rt', url: 'http://bench.invalid/', allow_old_snapshots: true }] }),
    bus: new InMemoryEventBus(), history: createHistoryWriter(db), scheduleFor: () => schedule, log: createLogger(),
  });
  const t0 = performance.now();
  const summary = await replaySnapshots(pipeline, feedId, scanSnapshots(listFiles([folder])));
  const seconds = (performance.now() - t0) / 1000;
  await pipeline.stop();
  if (summary.outcomes.ok !== bodies.length) throw new Error(`replay did not store every snapshot: ${JSON.stringify(summary.outcomes)}`);
  return { snapshotsPerS: summary.snapshots / seconds, rowsPerS: summary.rows_stored / seconds };
}

const dir = mkdtempSync(join(tmpdir(), 'bench-ingest-'));
// DB=memory measures without the file's commit cost, to tell storage from CPU
const db = await Db.open(process.env.DB === 'memory' ? ':memory:' : join(dir, 'bench.duckdb'));
try {
  console.log(`bench/ingest: ${VEHICLES} vehicles, ${TRIPS} trips × ${STOPS} stops, ${POLLS} polls after ${WARMUP} warm-up, DuckDB ${db.path}`);
  // one snapshot per poll: a body polled twice is a duplicate and not stored again (idempotent history)
  const vehicleBodies = Array.from({ length: WARMUP + POLLS }, (_, i) => vehicleFeed(i));
  const tripBodies = Array.from({ length: WARMUP + POLLS }, (_, i) => tripUpdateFeed(i));
  const results = [
    { ...await benchFeed('vehicles', vehicleBodies, db), replay: await benchReplay('vehicles', vehicleBodies, db, join(dir, 'archive')) },
    { ...await benchFeed('trip_updates', tripBodies, db), replay: await benchReplay('trip_updates', tripBodies, db, join(dir, 'archive')) },
  ];
  for (const r of results) {
    console.log(`\n${r.kind}: ${(r.bytes / 1024).toFixed(0)} KB, ${r.entities} entities → ${r.stored} rows stored per poll, ${r.events} events in total, rejected ${JSON.stringify(r.rejected)}`);
    console.log(`  end to end (hash + decode + normalize + state + events + append): median ${r.e2eMedian.toFixed(1)} ms/poll, p90 ${r.e2eP90.toFixed(1)} ms, CPU ${r.e2eCpuMedian.toFixed(1)} ms`);
    console.log(`  to the live state and its events (what API and SSE clients see):  median ${r.liveMedian.toFixed(1)} ms/poll`);
    console.log(`  bare protobufjs decode of the same bytes:                         median ${r.decodeMedian.toFixed(1)} ms`);
    console.log(`  ratio end to end / bare decode: ${(r.e2eMedian / r.decodeMedian).toFixed(1)}×`);
    console.log(`  appends: ${Math.round(r.appendRowsPerS).toLocaleString('en-US')} rows/s (${r.appendMsPerPoll.toFixed(1)} ms of each poll)`);
    const livePerS = 1000 / r.e2eMedian;
    console.log(`  replay of the same ${WARMUP + POLLS} snapshots as files: ${r.replay.snapshotsPerS.toFixed(1)} snapshots/s, `
      + `${Math.round(r.replay.rowsPerS).toLocaleString('en-US')} rows/s (live polls back to back: ${livePerS.toFixed(1)}/s; `
      + `replay / live ${(r.replay.snapshotsPerS / livePerS).toFixed(2)}×)`);
  }
  const vehicles = results[0]!;
  console.log(`\nload average during the run: ${loadavg().map((l) => l.toFixed(1)).join(' ')} on ${cpus().length} CPUs`);
  console.log(`targets: 5,000-vehicle poll end to end < 60 ms: ${vehicles.e2eMedian.toFixed(1)} ms ${vehicles.e2eMedian < 60 ? 'PASS' : 'MISS'} `
    + `(to live: ${vehicles.liveMedian.toFixed(1)} ms ${vehicles.liveMedian < 60 ? 'PASS' : 'MISS'}); `
    + `appends ≥ 500k rows/s: ${results.map((r) => `${r.kind} ${Math.round(r.appendRowsPerS / 1000)}k`).join(', ')} `
    + `${results.every((r) => r.appendRowsPerS >= 500_000) ? 'PASS' : 'MISS'}`);
} finally {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
}
