// bench/ingest.ts's two sides of the store: the real history writer timed, and DuckDB inserting
// the same rows itself (the engine's own ceiling for our row shapes).
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { HistoryBatch, HistoryWriter, SnapshotKey } from '../core/ports.ts';
import type { Db } from '../store/db.ts';
import { NOW_S } from './ingest-feeds.ts';

/** Wraps the real writer to time the appends alone, and apart from them its idle checkpoints. */
export class TimedHistory implements HistoryWriter {
  ms = 0;
  rows = 0;
  idleMs = 0;
  /** the longest the event loop waited while an append ran, ms (requests and streams wait as long) */
  blockMs = 0;
  /** the last batch's rows per table, before change-only history kept what changed */
  polled = { vehicles: 0, trips: 0, arrivals: 0 };
  constructor(private readonly inner: HistoryWriter) {}
  async idle(): Promise<void> {
    const t0 = performance.now();
    await this.inner.idle?.();
    this.idleMs += performance.now() - t0;
  }
  hasSnapshot(key: SnapshotKey): Promise<boolean> {
    return this.inner.hasSnapshot(key);
  }
  async write(batch: HistoryBatch): Promise<number> {
    const loop = monitorEventLoopDelay({ resolution: 1 });
    loop.enable();
    if (batch.snapshot)
      this.polled = { vehicles: batch.vehicles.length, trips: batch.trips.length, arrivals: batch.arrivals.length };
    const t0 = performance.now();
    const stored = await this.inner.write(batch);
    this.ms += performance.now() - t0;
    loop.disable();
    this.blockMs = Math.max(this.blockMs, loop.max / 1e6);
    // the poll's rows, all of them: change-only history stores what changed of them, and the
    // rate says how fast a poll's rows are taken in either way
    this.rows += batch.snapshot
      ? batch.vehicles.length +
        batch.arrivals.length +
        batch.trips.length +
        batch.alertVersions.length +
        batch.polls.length
      : stored;
    return stored;
  }
}

/**
 * DuckDB writing `rows` rows per table itself in one transaction, shaped like ours (same tables,
 * similar strings, numbers and timestamps), under another feed id: the engine's own bulk path.
 */
export async function engineInsert(
  db: Db,
  rows: { vehicles: number; arrivals: number; trips: number },
  seed: number,
): Promise<number> {
  const t0 = performance.now();
  const ts = (col: string) => `make_timestamptz(${NOW_S * 1_000_000} + ${col})`;
  await db.transaction(async (c) => {
    if (rows.vehicles) {
      await c.run(`INSERT INTO vehicle_positions SELECT 'engine', 'bus-' || i, 'r' || (i % 120), 't' || i, 'bus',
        42.2 + (i % 1000) / 5e3, -71.1 - (i % 997) / 5e3, i % 360, (i % 25) / 2, 's' || (i % 2000), 'IN_TRANSIT_TO',
        ${ts(`(i % 30) * 1000000 + ${seed}`)}, ${ts('2000000')}, 'gps', NULL, NULL FROM range(${rows.vehicles}) t(i)`);
    }
    if (rows.arrivals) {
      await c.run(`INSERT INTO arrivals SELECT 'engine', 't' || (i // 20), 'r' || (i // 20 % 120), 'bus',
        'st' || (i % 1000), 's' || (i % 2000),
        6 + i % 20, NULL, DATE '2024-05-02', ${ts('i * 60000000')}, ${ts(`i * 60000000 + ${seed} * 1000000`)},
          (i * 13) % 600 - 120,
        'late', 'scheduled', true, 'bus-' || (i // 20), ${ts('2000000')}, NULL, NULL, NULL
        FROM range(${rows.arrivals}) t(i)`);
    }
    if (rows.trips) {
      await c.run(`INSERT INTO trip_observations SELECT 'engine', DATE '2024-05-02', 't' || i, 'r' || (i % 120), 'bus',
        'scheduled', 0,
        'trip_update', true, ${ts(`${seed} * 1000000`)}, 1, NULL, NULL FROM range(${rows.trips}) t(i)`);
    }
  });
  return performance.now() - t0;
}
