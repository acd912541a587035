// The ceiling of history appends for our row shapes: DuckDB inserting rows it generates itself
// (INSERT … FROM range(), no JS, batches of a poll's size, each run with its checkpoint) into
// the vehicle_positions shape as stored (8 of 14 columns text), the same rows with integer keys
// and one-byte codes instead of the texts, and the numeric columns alone. Whatever the writer
// does, it cannot append faster than the first; the others say what a schema change would buy.
//   node --import tsx bench/row-shapes.ts   (ROWS=400000 BATCH=5000 RUNS=2 DB=memory to change)
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Db } from '../store/db.ts';
import { report } from './report.ts';

const ROWS = Number(process.env.ROWS ?? 400_000);
const BATCH = Number(process.env.BATCH ?? 5_000);
const RUNS = Number(process.env.RUNS ?? 2);

const TS = 'make_timestamptz(1704067200000000 + i * 3000)';
const SHAPES = {
  text: {
    columns: `feed_id VARCHAR, vehicle_id VARCHAR, route_id VARCHAR, trip_id VARCHAR, mode VARCHAR, lat DOUBLE,
      lon DOUBLE,
      bearing DOUBLE, speed_mps DOUBLE, stop_id VARCHAR, current_status VARCHAR, position_at TIMESTAMPTZ,
        observed_at TIMESTAMPTZ,
      position_source VARCHAR`,
    values: `'bench', 'v' || (i % 5000), 'r' || (i % 120), 't' || (i % 9000), 'bus',
      40 + (i % 1000) / 1e4, -73 - (i % 997) / 1e4, i % 360, (i % 30) / 2,
      CASE WHEN i % 3 > 0 THEN 's' || (i % 800) END, 'IN_TRANSIT_TO', ${TS}, ${TS} + INTERVAL 1 SECOND, 'gps'`,
  },
  integerKeys: {
    columns: `feed_id INTEGER, vehicle_id INTEGER, route_id INTEGER, trip_id INTEGER, mode UTINYINT, lat DOUBLE,
      lon DOUBLE,
      bearing DOUBLE, speed_mps DOUBLE, stop_id INTEGER, current_status UTINYINT, position_at TIMESTAMPTZ,
        observed_at TIMESTAMPTZ,
      position_source UTINYINT`,
    values: `1, i % 5000, i % 120, i % 9000, 1, 40 + (i % 1000) / 1e4, -73 - (i % 997) / 1e4,
      i % 360, (i % 30) / 2, CASE WHEN i % 3 > 0 THEN i % 800 END, 2, ${TS}, ${TS} + INTERVAL 1 SECOND, 1`,
  },
  numbersOnly: {
    columns:
      'lat DOUBLE, lon DOUBLE, bearing DOUBLE, speed_mps DOUBLE, position_at TIMESTAMPTZ, observed_at TIMESTAMPTZ',
    values: `40 + (i % 1000) / 1e4, -73 - (i % 997) / 1e4, i % 360, (i % 30) / 2, ${TS}, ${TS} + INTERVAL 1 SECOND`,
  },
} as const;
type Shape = keyof typeof SHAPES;

const dir = process.env.DB === 'memory' ? null : mkdtempSync(join(tmpdir(), 'bench-shapes-'));
const db = await Db.open(dir ? join(dir, 'shapes.duckdb') : ':memory:', { migrate: false });
const best: Record<string, number> = {};
try {
  for (const [name, shape] of Object.entries(SHAPES)) await db.run(`CREATE TABLE ${name} (${shape.columns})`);
  // alternating, each shape RUNS times: a checkpoint landing in one run moves its figure most
  for (let run = 0; run < RUNS; run++) {
    for (const name of Object.keys(SHAPES) as Shape[]) {
      await db.run('CHECKPOINT');
      const t0 = performance.now();
      for (let i = 0; i < ROWS; i += BATCH) {
        await db.run(
          `INSERT INTO ${name} SELECT ${SHAPES[name].values} FROM range(${i}, ${Math.min(i + BATCH, ROWS)}) t(i)`,
        );
      }
      await db.run('CHECKPOINT');
      const rate = ROWS / ((performance.now() - t0) / 1000);
      best[name] = Math.max(best[name] ?? 0, rate);
    }
  }
} finally {
  await db.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
}

const fmt = (n: number): string => `${Math.round(n).toLocaleString('en')} rows/s`;
console.log(
  `DuckDB's own INSERT … FROM range(), ${ROWS.toLocaleString('en')} rows in batches of ${BATCH}, each run with ` +
    `its checkpoint, ` +
    `${dir ? 'database file' : 'in memory'}, best of ${RUNS}:`,
);
console.log(`  vehicle_positions as stored (8 of 14 columns text)   ${fmt(best.text!)}`);
console.log(
  `  the same rows, integer keys and one-byte codes        ${fmt(best.integerKeys!)} ` +
    `(${(best.integerKeys! / best.text!).toFixed(2)}×)`,
);
console.log(
  `  the numeric columns alone                             ${fmt(best.numbersOnly!)} ` +
    `(${(best.numbersOnly! / best.text!).toFixed(2)}×)`,
);
console.log(
  `load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')} on 2 CPUs`,
);
report({
  bench: 'row-shapes',
  figure: 'engine ceiling: DuckDB INSERT of vehicle rows as stored (text ids)',
  value: best.text!,
  unit: 'rows/s',
  baseline: 'same rows with integer keys',
  baselineValue: best.integerKeys!,
  ratio: best.text! / best.integerKeys!,
  target: "≥ 500k rows/s (the appends' target)",
  met: best.text! >= 500_000,
});
