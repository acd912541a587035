// History exports at scale: ROWS rows of one service day (half arrivals, half vehicle positions,
// generated with DuckDB range() into a temporary database file) exported through the export job
// (runExport: manifest rows, DESCRIBE, COPY to a temporary file, fsync, SHA-256, rename) and, as
// the baseline measured in the same run on the same rows, the bare DuckDB COPY of each table's
// rows of that day. Prints rows/s per format and the ratio job/raw (target ≥ 0.9 for Parquet):
// by the fastest run (the least disturbed on a shared machine), by the median, and by CPU time
// of the process (DuckDB's threads included), which other processes disturb least.
//   node --import tsx bench/export.ts
//   ROWS=10000000 RUNS=3 WARMUP=1 FORMATS=parquet,ndjson.gz node --import tsx bench/export.ts
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runExport } from '../exports/job.ts';
import { serviceDayWindow } from '../core/dates.ts';
import { Db } from '../store/db.ts';
import type { ExportFormat } from '../core/types.ts';
import { report } from './report.ts';
import { DEFAULT_CONFIG } from '../core/config.ts';

const ROWS = Number(process.env.ROWS ?? 1_000_000);
const RUNS = Number(process.env.RUNS ?? 3);
/** untimed raw + job runs per format before measuring (0 for long 10M runs) */
const WARMUP = Number(process.env.WARMUP ?? 1);
const FORMATS = (process.env.FORMATS ?? 'parquet,ndjson.gz').split(',') as ExportFormat[];
const DAY = '2024-03-12';
const TZ = 'America/New_York';
const LATER = new Date('2024-04-01T00:00:00Z');

const root = mkdtempSync(join(tmpdir(), 'bench-export-'));
const exportsDir = join(root, 'exports');
const db = await Db.open(join(root, 'bench.duckdb'));
const window = serviceDayWindow(DAY, TZ, DEFAULT_CONFIG.reliability.service_day_end);
const startIso = window.start.toISOString();
const spanUs = window.end.getTime() * 1000 - window.start.getTime() * 1000 - 1;

try {
  const half = Math.floor(ROWS / 2);
  const t0 = performance.now();
  // columns named: later migrations add columns with defaults (position_source, trip_instance)
  await db.run(`INSERT INTO vehicle_positions (feed_id, vehicle_id, route_id, trip_id, mode, lat, lon,
    bearing, speed_mps,
      stop_id, current_status, position_at, observed_at)
    SELECT 'feed-1', 'veh-' || (i % 5000), 'R' || (i % 300), 'T' || (i % 20000), 'bus',
      40 + (i % 1000) / 1000.0, -74 + (i % 977) / 1000.0, (i % 360)::DOUBLE, (i % 30)::DOUBLE, 'S' || (i % 8000),
      'IN_TRANSIT_TO',
      TIMESTAMPTZ '${startIso}' + to_microseconds((i * ${spanUs} // ${half})::BIGINT),
      TIMESTAMPTZ '${startIso}' + to_microseconds((i * ${spanUs} // ${half})::BIGINT) + INTERVAL 2 SECOND
    FROM range(${half}) t(i)`);
  await db.run(`INSERT INTO arrivals (feed_id, trip_id, route_id, mode, station_id, stop_id, stop_sequence,
    direction_id,
      service_date, scheduled_at, predicted_at, delay_s, delay_state, trip_relationship, in_schedule, vehicle_id,
        observed_at)
    SELECT 'feed-1', 'T' || (i % 20000), 'R' || (i % 300), 'bus', 'ST' || (i % 4000), 'S' || (i % 8000),
      (i % 60)::INTEGER,
      (i % 2)::INTEGER, DATE '${DAY}',
      TIMESTAMPTZ '${startIso}' + to_microseconds((i * ${spanUs} // ${ROWS - half})::BIGINT),
      TIMESTAMPTZ '${startIso}' + to_microseconds((i * ${spanUs} // ${ROWS - half})::BIGINT + (i % 600) * 1000000),
      (i % 600)::INTEGER, CASE WHEN i % 600 > 300 THEN 'late' ELSE 'on_time' END, 'scheduled', true,
      'veh-' || (i % 5000), TIMESTAMPTZ '${startIso}' + to_microseconds((i * ${spanUs} // ${ROWS - half})::BIGINT)
    FROM range(${ROWS - half}) t(i)`);
  await db.run('CHECKPOINT');
  console.log(
    `generated ${ROWS.toLocaleString('en')} rows (${half.toLocaleString('en')} vehicle positions, ` +
      `${(ROWS - half).toLocaleString('en')} arrivals) in ` +
      `${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );

  // the same rows, written by hand rather than taken from exports/datasets.ts
  // positions are exported by the feed's time (position_at), arrivals by service date
  const between = (column: string) =>
    `${column} >= TIMESTAMPTZ '${window.start.toISOString()}' AND ${column} < TIMESTAMPTZ ` +
    `'${window.end.toISOString()}'`;
  const rawSelects = [
    `SELECT * FROM arrivals WHERE service_date = DATE '${DAY}' OR (service_date IS NULL AND ${between('observed_at')})`,
    `SELECT * FROM vehicle_positions WHERE ${between('position_at')}`,
  ];
  const rawOptions: Record<ExportFormat, string> = {
    parquet: 'FORMAT parquet, COMPRESSION zstd',
    'ndjson.gz': 'FORMAT json, COMPRESSION gzip',
  };

  interface Timing {
    ms: number;
    cpuMs: number;
    bytes: number;
  }
  const cpuMs = (since: NodeJS.CpuUsage): number => {
    const used = process.cpuUsage(since);
    return (used.user + used.system) / 1000;
  };

  async function rawCopy(format: ExportFormat): Promise<Timing> {
    const conn = await db.connect();
    try {
      const cpu = process.cpuUsage();
      const started = performance.now();
      let bytes = 0;
      for (const [i, select] of rawSelects.entries()) {
        const path = join(root, `raw-${i}.${format}`);
        await conn.run(`COPY (${select}) TO '${path}' (${rawOptions[format]})`);
        bytes += statSync(path).size;
      }
      return { ms: performance.now() - started, cpuMs: cpuMs(cpu), bytes };
    } finally {
      conn.closeSync();
    }
  }

  async function job(format: ExportFormat): Promise<Timing> {
    const cpu = process.cpuUsage();
    const started = performance.now();
    const summary = await runExport(db, {
      dataset: 'realtime',
      from: DAY,
      formats: [format],
      dir: exportsDir,
      timezone: TZ,
      now: () => LATER,
      force: true,
    });
    const ms = performance.now() - started;
    const cpuUsed = cpuMs(cpu);
    const bad = summary.files.filter((f) => f.outcome !== 'ready');
    if (bad.length) throw new Error(`export did not complete: ${JSON.stringify(bad)}`);
    const rows = summary.files.reduce((n, f) => n + (f.manifest?.rows ?? 0), 0);
    if (rows !== ROWS) throw new Error(`exported ${rows} rows, expected ${ROWS}`);
    return { ms, cpuMs: cpuUsed, bytes: summary.files.reduce((n, f) => n + (f.manifest?.bytes ?? 0), 0) };
  }

  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const rate = (ms: number): string => `${Math.round(ROWS / (ms / 1000)).toLocaleString('en')} rows/s`;
  const s = (ms: number): string => `${(ms / 1000).toFixed(2)} s`;

  console.log(
    `runs per figure: ${RUNS} after ${WARMUP} warm-up, interleaved raw/job; 2 files per run (arrivals, ` +
      `vehicle_positions)`,
  );
  for (const format of FORMATS) {
    for (let w = 0; w < WARMUP; w++) {
      await rawCopy(format); // page cache, code paths
      await job(format);
    }
    const raw: Timing[] = [];
    const ours: Timing[] = [];
    for (let r = 0; r < RUNS; r++) {
      raw.push(await rawCopy(format));
      ours.push(await job(format));
    }
    const best = { raw: Math.min(...raw.map((x) => x.ms)), job: Math.min(...ours.map((x) => x.ms)) };
    const mid = { raw: median(raw.map((x) => x.ms)), job: median(ours.map((x) => x.ms)) };
    const cpu = { raw: median(raw.map((x) => x.cpuMs)), job: median(ours.map((x) => x.cpuMs)) };
    const ratio = best.raw / best.job;
    const target = format === 'parquet' ? ` (target ≥ 0.90: ${ratio >= 0.9 ? 'met' : 'NOT met'})` : '';
    console.log(
      `${format.padEnd(10)} raw COPY   fastest ${s(best.raw)} = ${rate(best.raw)}; median ${s(mid.raw)}; CPU ` +
        `${s(cpu.raw)}; ${(raw[0]!.bytes / 1e6).toFixed(1)} MB`,
    );
    console.log(
      `${''.padEnd(10)} export job fastest ${s(best.job)} = ${rate(best.job)}; median ${s(mid.job)}; CPU ` +
        `${s(cpu.job)}; ${(ours[0]!.bytes / 1e6).toFixed(1)} MB`,
    );
    console.log(
      `${''.padEnd(10)} ratio job/raw throughput: fastest ${ratio.toFixed(2)}x${target}, median ` +
        `${(mid.raw / mid.job).toFixed(2)}x, CPU ${(cpu.raw / cpu.job).toFixed(2)}x`,
    );
    report({
      bench: 'export',
      figure: `${ROWS.toLocaleString('en')} rows to ${format} through the job (fastest run)`,
      value: ROWS / (best.job / 1000),
      unit: 'rows/s',
      baseline: 'raw DuckDB COPY',
      baselineValue: ROWS / (best.raw / 1000),
      ratio,
      ...(format === 'parquet' ? { target: '≥ 0.9×' } : {}),
      met: format === 'parquet' ? ratio >= 0.9 : null,
    });
    console.log(
      `${''.padEnd(10)} every run, ms: raw ${raw.map((x) => Math.round(x.ms)).join(', ')}; job ` +
        `${ours.map((x) => Math.round(x.ms)).join(', ')}`,
    );
  }
} finally {
  await db.close();
  rmSync(root, { recursive: true, force: true });
}
