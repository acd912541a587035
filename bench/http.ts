// bench/http: GET /api/v1/alerts?limit=20 through the real API (auth, rate limits, metering to
// DuckDB, Prometheus metrics as serve wires them, Max keys) against a minimal uWS server answering
// the same bytes, in the same run, with wrk; and the same API without metrics, for their cost.
// Prints req/s, p50/p99 latency and the ratios of each round, then the median ratio of the rounds.
//
//   npm run bench:http        BENCH_ROUNDS=3 BENCH_DURATION_S=10 BENCH_CONNECTIONS=50 BENCH_ALERTS=500 BENCH_KEYS=624
//
// What is measured is the app as production runs it: this script bundles the bench (bench/http/)
// with the project's one esbuild configuration, the one `npm run build` makes dist/transit-api.cjs
// with (binary/build/bundle.ts), into .bench-bundle/http.cjs and runs that with plain node. From
// the sources, tsx would add its loader thread and wrap every named function in a `__name` call
// (keepNames), work the served bundle does not do. The bundle runs with the young generation the
// service is deployed with (`--max-semi-space-size=64`: npm start, docs/guides/deploying.md).
// Node options given to this script (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`) are passed on.
import { spawn } from 'node:child_process';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleApp } from '../binary/build/bundle.ts';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
// at the repository root's level, so the entry finds the checkout one folder above it
const outfile = join(repoRoot, '.bench-bundle', 'http.cjs');
const bundle = await bundleApp({ repoRoot, entry: 'bench/http/entry.ts', outfile, natives: 'node_modules' });
for (const warning of bundle.warnings) console.log(`esbuild: ${warning}`);
console.log(`bench:http runs ${relative(repoRoot, outfile)} (esbuild, as dist/ is built) with plain node`);

// this process's own loader stays here: the bundle needs none
const nodeArgs: string[] = [];
for (let i = 0; i < process.execArgv.length; i++) {
  const arg = process.execArgv[i]!;
  if (arg === '--import' || arg === '--loader') i++;
  else if (!arg.startsWith('--import=') && !arg.startsWith('--loader=')) nodeArgs.push(arg);
}
// as deployed, unless given otherwise
if (!nodeArgs.some((arg) => arg.startsWith('--max-semi-space-size'))) nodeArgs.unshift('--max-semi-space-size=64');
const child = spawn(process.execPath, [...nodeArgs, outfile], { stdio: 'inherit' });
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => {
  process.exitCode = code ?? (signal ? 1 : 0);
});
