// Benches that fill our tables with their own SQL, or call the pipeline's stages themselves, run
// here at a toy size, so a migration that changes a table or a stage whose interface moves breaks
// this test rather than the next person's `npm run bench`: the rollup and export benches, and
// history-append's baselines, failed for weeks after migrations added columns. The figures are
// not read.
import t from 'tap';
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

function runBench(script: string, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.on('close', (code) => resolve({ code, output }));
  });
}

const BENCHES: { script: string; env: Record<string, string>; prints: RegExp }[] = [
  {
    script: 'bench/rollup.ts',
    env: { ROUTES: '5', TRIPS_PER_DAY: '200', DAYS: '10', OBS_PER_TRIP: '4', RUNS: '1' },
    prints: /finalize one day \(200 trips, 4 obs\/trip\)/,
  },
  {
    script: 'bench/export.ts',
    env: { ROWS: '2000', RUNS: '1', WARMUP: '0' },
    prints: /ndjson\.gz +raw COPY/,
  },
  {
    script: 'bench/history-append.ts',
    env: { ROWS: '20000', BATCH: '5000', TXN_GROUPS: '1' },
    prints: /rows stored 60000/,
  },
  {
    // the pipeline's stages one by one: it calls each stage's module itself
    script: 'bench/ingest-phases.ts',
    env: { VEHICLES: '200', TRIPS: '60', STOPS: '5', POLLS: '2', DB: 'memory' },
    prints: /history write +median/,
  },
];

for (const bench of BENCHES) {
  t.test(`${bench.script} runs against the current schema`, async (t) => {
    const { code, output } = await runBench(bench.script, bench.env);
    t.equal(code, 0, output.slice(-2_000));
    t.match(output, bench.prints);
  });
}
