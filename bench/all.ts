// `npm run bench`: every bench with a target, briefly, one after the other (never two at once on
// a 2-core machine), then one table: figure, same-run baseline, ratio, target, met or not. Each
// bench reports its own figures through bench/report.ts; what it prints for people goes to
// bench-output/<name>.log. `--update docs/guides/benchmarks.md` writes the table between its markers.
//   npm run bench                      all of them (about 6 minutes)
//   npm run bench -- rollup http       some of them
//   npm run bench -- --update docs/guides/benchmarks.md
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchFigure } from './report.ts';

const root = fileURLToPath(new URL('..', import.meta.url));

interface BenchRun {
  name: string;
  script: string;
  /** the brief settings: each bench's own environment variables */
  env: Record<string, string>;
  nodeArgs?: string[];
}

const BENCHES: BenchRun[] = [
  { name: 'ingest', script: 'bench/ingest.ts', env: { POLLS: '15' }, nodeArgs: ['--max-semi-space-size=64'] },
  { name: 'rollup', script: 'bench/rollup.ts', env: { RUNS: '31' } },
  { name: 'row-shapes', script: 'bench/row-shapes.ts', env: { ROWS: '200000', RUNS: '2' } },
  { name: 'http', script: 'bench/http.ts', env: { BENCH_DURATION_S: '5', BENCH_WARMUP_S: '2', BENCH_ROUNDS: '3' } },
  { name: 'export', script: 'bench/export.ts', env: { ROWS: '1000000', RUNS: '5', FORMATS: 'parquet' } },
  {
    name: 'fanout',
    script: 'bench/fanout/run.ts',
    env: {
      FANOUT_CONNECTIONS: '10000',
      FANOUT_RATES: '10,100',
      FANOUT_SERVERS: 'uws,api',
      FANOUT_WARMUP_S: '2',
      FANOUT_WINDOW_S: '6',
    },
  },
  { name: 'forward', script: 'bench/forward.ts', env: { REQUESTS: '500' } },
  {
    name: 'validate',
    script: 'bench/validate.ts',
    env: { SNAPSHOTS: '1000', ROUNDS: '2', POLLS: '15' },
    nodeArgs: ['--max-semi-space-size=64'],
  },
];

const args = process.argv.slice(2);
const updateAt = args.indexOf('--update');
const readme = updateAt >= 0 ? args[updateAt + 1] : undefined;
const wanted = args.filter((a, i) => !a.startsWith('--') && (updateAt < 0 || i !== updateAt + 1));
const runs = wanted.length ? BENCHES.filter((b) => wanted.includes(b.name)) : BENCHES;
for (const w of wanted)
  if (!BENCHES.some((b) => b.name === w))
    throw new Error(`unknown bench ${w}; use ${BENCHES.map((b) => b.name).join(', ')}`);

const outDir = join(root, 'bench-output');
mkdirSync(outDir, { recursive: true });
const reportFile = join(outDir, 'figures.jsonl');
rmSync(reportFile, { force: true });
const loadBefore = loadavg();
const started = Date.now();
const failures: string[] = [];
for (const bench of runs) {
  const t0 = Date.now();
  process.stdout.write(`${bench.name} … `);
  const result = spawnSync(process.execPath, [...(bench.nodeArgs ?? []), '--import', 'tsx', bench.script], {
    cwd: root,
    env: { ...process.env, ...bench.env, BENCH_REPORT: reportFile },
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  writeFileSync(join(outDir, `${bench.name}.log`), `${result.stdout ?? ''}${result.stderr ?? ''}`);
  const ok = result.status === 0;
  if (!ok) failures.push(`${bench.name} (exit ${result.status ?? result.signal}; bench-output/${bench.name}.log)`);
  console.log(`${ok ? 'done' : 'FAILED'} in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
}

const figures: BenchFigure[] = existsSync(reportFile)
  ? readFileSync(reportFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as BenchFigure)
  : [];
const num = (v: number, unit: string): string => {
  if (unit === 'rows/s' || unit === 'req/s' || unit === 'events/s')
    return `${Math.round(v).toLocaleString('en-US')} ${unit}`;
  return `${v.toFixed(v < 10 ? 2 : 1)} ${unit}`;
};
const cell = (s: string): string => s.replace(/\|/g, '\\|');
const lines = [
  '| bench | figure | value | same-run baseline | ratio | target | met |',
  '|---|---|---|---|---|---|---|',
  ...figures.map(
    (f) =>
      `| ${f.bench} | ${cell(f.figure)} | ${num(f.value, f.unit)} | ${f.baseline ? `${cell(f.baseline)}: ${num(f.baselineValue!, f.unit)}` : '–'} | ` +
      `${f.ratio !== undefined ? `${f.ratio.toFixed(2)}×` : '–'} | ${f.target ? cell(f.target) : '–'} | ${f.met === null ? '–' : f.met ? 'yes' : '**no**'} |`,
  ),
];
const loadAfter = loadavg();
const footer =
  `${new Date().toISOString().slice(0, 10)}, ${cpus().length} CPUs, load average ${loadBefore[0]!.toFixed(1)} before / ` +
  `${loadAfter[0]!.toFixed(1)} after, ${((Date.now() - started) / 60_000).toFixed(1)} minutes (\`npm run bench\`, brief settings in bench/all.ts)`;
const table = `${lines.join('\n')}\n\n${footer}\n`;
console.log(`\n${table}`);
if (failures.length) console.log(`failed: ${failures.join(', ')}`);

if (readme) {
  const START = '<!-- bench-table:start -->';
  const END = '<!-- bench-table:end -->';
  const text = readFileSync(readme, 'utf8');
  const a = text.indexOf(START);
  const b = text.indexOf(END);
  if (a < 0 || b < a) throw new Error(`${readme} has no ${START} … ${END} markers`);
  writeFileSync(readme, `${text.slice(0, a + START.length)}\n${table}${text.slice(b)}`);
  console.log(`wrote the table into ${readme}`);
}
process.exitCode = failures.length ? 1 : 0;
