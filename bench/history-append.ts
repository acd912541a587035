// Appends generated vehicle positions through the history writer and, as baselines in the
// same run, through the plain row-by-row DuckDB appender and DuckDB generating the same rows
// itself (INSERT … SELECT FROM range(): the engine's ceiling, no JS at all). Then where one
// batch's time goes (JS packing the chunks, DuckDB's flush, the commit) and what sharing one
// transaction among several batches (polls) would change.
//   node --import tsx bench/history-append.ts
//   ROWS=1000000 BATCH=5000 DB=/tmp/bench.duckdb (a file instead of :memory:) to change the run
import { rmSync } from 'node:fs';
import { DuckDBTimestampTZValue } from '@duckdb/node-api';
import type { VehiclePosition } from '../core/types.ts';
import { Db } from '../store/db.ts';
import { appendColumns } from '../store/chunk-append.ts';
import { createHistoryWriter, VEHICLE_COLUMNS } from '../store/history-writer.ts';

const ROWS = Number(process.env.ROWS ?? 1_000_000);
const BATCH = Number(process.env.BATCH ?? 5_000);
const DB = process.env.DB ?? ':memory:';

function vehicles(n: number): VehiclePosition[] {
  const base = Date.UTC(2024, 0, 1);
  return Array.from({ length: n }, (_, i) => ({
    feed_id: 'bench',
    vehicle_id: `v${i % 5000}`,
    route_id: `r${i % 120}`,
    trip_id: `t${i % 9000}`,
    mode: 'bus' as const,
    lat: 40 + (i % 1000) / 1e4,
    lon: -73 - (i % 997) / 1e4,
    position_source: 'gps' as const,
    bearing: i % 360,
    speed_mps: (i % 30) / 2,
    stop_id: i % 3 ? `s${i % 800}` : null,
    current_status: 'IN_TRANSIT_TO',
    timestamp_ms: base + i * 3,
    observed_ms: base + i * 3 + 1500,
  }));
}

/** the columns the engine baselines fill, in the order their SELECTs give them */
const POSITION_COLUMNS = `(feed_id, vehicle_id, route_id, trip_id, mode, lat, lon, bearing, speed_mps, stop_id,
  current_status, position_at, observed_at, position_source)`;

const rows = vehicles(ROWS);
if (DB !== ':memory:') rmSync(DB, { force: true });
const db = await Db.open(DB);
// warm up with a writer of its own: the measured one must not remember these vehicles as stored
await createHistoryWriter(db).write({
  vehicles: rows.slice(0, 1000),
  arrivals: [],
  trips: [],
  alertVersions: [],
  polls: [],
});
const writer = createHistoryWriter(db);
await db.run('DELETE FROM vehicle_positions');

// CPU time next to wall time: on a shared machine wall time mostly measures the neighbours
let t0 = performance.now();
let c0 = process.cpuUsage();
const cpuMs = (): number => {
  const u = process.cpuUsage(c0);
  return (u.user + u.system) / 1000;
};
for (let i = 0; i < rows.length; i += BATCH) {
  await writer.write({ vehicles: rows.slice(i, i + BATCH), arrivals: [], trips: [], alertVersions: [], polls: [] });
}
const writerMs = performance.now() - t0;
const writerCpu = cpuMs();

t0 = performance.now();
c0 = process.cpuUsage();
const ts = (ms: number): DuckDBTimestampTZValue => new DuckDBTimestampTZValue(BigInt(ms) * 1000n);
for (let i = 0; i < rows.length; i += BATCH) {
  await db.append('vehicle_positions', (a) => {
    for (const r of rows.slice(i, i + BATCH)) {
      a.appendVarchar(r.feed_id);
      a.appendVarchar(r.vehicle_id);
      if (r.route_id === null) a.appendNull();
      else a.appendVarchar(r.route_id);
      if (r.trip_id === null) a.appendNull();
      else a.appendVarchar(r.trip_id);
      if (r.mode === null) a.appendNull();
      else a.appendVarchar(r.mode);
      a.appendDouble(r.lat);
      a.appendDouble(r.lon);
      if (r.bearing === null) a.appendNull();
      else a.appendDouble(r.bearing);
      if (r.speed_mps === null) a.appendNull();
      else a.appendDouble(r.speed_mps);
      if (r.stop_id === null) a.appendNull();
      else a.appendVarchar(r.stop_id);
      if (r.current_status === null) a.appendNull();
      else a.appendVarchar(r.current_status);
      a.appendTimestampTZ(ts(r.timestamp_ms));
      a.appendTimestampTZ(ts(r.observed_ms));
      a.appendVarchar(r.position_source);
      if (r.feed_trip_id == null) a.appendNull();
      else a.appendVarchar(r.feed_trip_id);
      if (r.schedule_id == null) a.appendNull();
      else a.appendVarchar(r.schedule_id);
      a.endRow();
    }
  });
}
const baselineMs = performance.now() - t0;
const baselineCpu = cpuMs();

t0 = performance.now();
c0 = process.cpuUsage();
for (let i = 0; i < ROWS; i += BATCH) {
  // columns named: migrations add columns at the end of the table (feed_trip_id, schedule_id)
  await db.run(`INSERT INTO vehicle_positions ${POSITION_COLUMNS} SELECT 'bench', 'v' || (i % 5000), 'r' || (i % 120),
    't' || (i % 9000), 'bus',
    40 + (i % 1000) / 1e4, -73 - (i % 997) / 1e4, i % 360, (i % 30) / 2, CASE WHEN i % 3 > 0 THEN 's' || (i % 800) END,
    'IN_TRANSIT_TO', make_timestamptz(1704067200000000 + i * 3000),
      make_timestamptz(1704067200000000 + i * 3000 + 1500000), 'gps'
    FROM range(${i}, ${Math.min(i + BATCH, ROWS)}) t(i)`);
}
const engineMs = performance.now() - t0;
const engineCpu = cpuMs();
const [count] = await db.all<{ n: bigint }>('SELECT count(*) AS n FROM vehicle_positions');

// column types: the same rows through the engine into a copy of the table whose three
// closed-set text columns (mode, current_status, position_source) are ENUMs, one byte each
// instead of a string (and nothing for the checkpoint's dictionary compression to find), each
// table with its own checkpoints
await db.run(`CREATE TYPE bench_mode AS ENUM ('bus', 'rail', 'streetcar', 'ferry');
  CREATE TYPE bench_status AS ENUM ('INCOMING_AT', 'STOPPED_AT', 'IN_TRANSIT_TO');
  CREATE TYPE bench_source AS ENUM ('gps', 'stop');
  CREATE TABLE bench_plain AS SELECT * FROM vehicle_positions LIMIT 0;
  CREATE TABLE bench_enum (feed_id VARCHAR NOT NULL, vehicle_id VARCHAR NOT NULL, route_id VARCHAR, trip_id VARCHAR,
    mode bench_mode,
    lat DOUBLE NOT NULL, lon DOUBLE NOT NULL, bearing DOUBLE, speed_mps DOUBLE, stop_id VARCHAR,
      current_status bench_status,
    position_at TIMESTAMPTZ NOT NULL, observed_at TIMESTAMPTZ NOT NULL, position_source bench_source NOT NULL)`);
const typed: Record<string, number> = {};
for (const table of ['bench_plain', 'bench_enum', 'bench_plain', 'bench_enum']) {
  await db.run('CHECKPOINT');
  const t = performance.now();
  for (let i = 0; i < Math.min(ROWS, 20 * BATCH); i += BATCH) {
    await db.run(`INSERT INTO ${table} ${POSITION_COLUMNS}
      SELECT 'bench', 'v' || (i % 5000), 'r' || (i % 120), 't' || (i % 9000), 'bus',
      40 + (i % 1000) / 1e4, -73 - (i % 997) / 1e4, i % 360, (i % 30) / 2,
        CASE WHEN i % 3 > 0 THEN 's' || (i % 800) END,
      'IN_TRANSIT_TO', make_timestamptz(1704067200000000 + i * 3000),
        make_timestamptz(1704067200000000 + i * 3000 + 1500000), 'gps'
      FROM range(${i}, ${Math.min(i + BATCH, ROWS)}) t(i)`);
  }
  await db.run('CHECKPOINT');
  typed[table] = (typed[table] ?? 0) + performance.now() - t;
}

// one batch's parts, BATCH rows each: the writer's own steps, timed apart
const split = { fill: 0, flush: 0, commit: 0 };
const splitRows = Math.min(ROWS, 20 * BATCH);
for (let i = 0; i < splitRows; i += BATCH) {
  let t1 = 0;
  await db.transaction(async (c) => {
    const appender = await c.createAppender('vehicle_positions');
    const t = performance.now();
    appendColumns(appender, VEHICLE_COLUMNS, rows.slice(i, i + BATCH));
    split.fill += performance.now() - t;
    const f = performance.now();
    appender.flushSync();
    appender.closeSync();
    t1 = performance.now();
    split.flush += t1 - f;
  });
  split.commit += performance.now() - t1;
}
// several batches (polls) in one transaction: one commit for all. Runs in the order of
// TXN_GROUPS (default 1,4,12,1,4,12), each size twice, since when a checkpoint lands moves a run's
// figure more than its size (pipeline/history-queue.ts keeps one transaction per poll)
const grouped: { batches: number; ms: number }[] = [];
for (const per of (process.env.TXN_GROUPS ?? '1,4,12,1,4,12').split(',').map(Number)) {
  await db.run('CHECKPOINT');
  const t = performance.now();
  for (let i = 0; i < splitRows; i += per * BATCH) {
    await db.transaction(async (c) => {
      const appender = await c.createAppender('vehicle_positions');
      for (let k = i; k < Math.min(splitRows, i + per * BATCH); k += BATCH)
        appendColumns(appender, VEHICLE_COLUMNS, rows.slice(k, k + BATCH));
      appender.flushSync();
      appender.closeSync();
    });
  }
  await db.run('CHECKPOINT'); // each size pays for its own checkpoint
  grouped.push({ batches: per, ms: performance.now() - t });
}
await db.close();
if (DB !== ':memory:') rmSync(DB, { force: true });

const rate = (ms: number): string => `${Math.round(ROWS / (ms / 1000)).toLocaleString('en')} rows/s`;
const line = (label: string, ms: number, cpu: number): string =>
  `  ${label.padEnd(56)} ${ms.toFixed(0).padStart(6)} ms wall, ${rate(ms).padStart(17)}; ` +
  `${cpu.toFixed(0).padStart(6)} ms CPU, ${rate(cpu).padStart(17)} per CPU-second`;
console.log(`vehicle_positions, ${ROWS.toLocaleString('en')} rows in batches of ${BATCH}, database ${DB}:`);
console.log(line('history writer (data chunks, one transaction per batch)', writerMs, writerCpu));
console.log(line('baseline: row-by-row appender', baselineMs, baselineCpu));
console.log(line('ceiling: DuckDB INSERT … FROM range(), no JS', engineMs, engineCpu));
console.log(
  `  writer vs row-by-row: ${(baselineMs / writerMs).toFixed(2)}x faster; writer vs engine ceiling: ` +
    `${(engineMs / writerMs).toFixed(2)}x`,
);
console.log(`  rows stored ${count!.n}`);
const per = (ms: number, n: number): string =>
  `${(ms / (n / BATCH)).toFixed(1)} ms a batch (${Math.round(n / (ms / 1000)).toLocaleString('en')} rows/s)`;
console.log(
  `where a batch of ${BATCH} goes (${splitRows.toLocaleString('en')} rows): JS packing chunks + appendDataChunk ` +
    `${per(split.fill, splitRows)}, ` +
    `flush ${per(split.flush, splitRows)}, commit ${per(split.commit, splitRows)}`,
);
const typedRows = 2 * Math.min(ROWS, 20 * BATCH);
console.log(
  `column types (engine, ${typedRows.toLocaleString('en')} rows each, with checkpoints): VARCHAR ` +
    `${Math.round(typedRows / (typed.bench_plain! / 1000)).toLocaleString('en')} rows/s, ` +
    `ENUM mode/current_status/position_source ` +
    `${Math.round(typedRows / (typed.bench_enum! / 1000)).toLocaleString('en')} rows/s`,
);
console.log(
  `batches of ${BATCH} per transaction, each run with its checkpoint: ` +
    grouped.map((g) => `${g.batches}: ${Math.round(splitRows / (g.ms / 1000)).toLocaleString('en')} rows/s`).join(', '),
);
