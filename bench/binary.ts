// The single executable's start: time from spawn to the first served API request (200 on
// /api/v1/alerts with a key), on the first start (embedded files extracted) and on later starts
// (cache reused), with the same service run from the checkout (the built runtime, node + dist/) as the baseline
// measured in the same run; plus the binary's size and what it extracts.
//   npm run bench:binary                      (builds dist/transit-api first if it is missing)
//   TRANSIT_BINARY=path RUNS=7 node --import tsx bench/binary.ts
import { spawn, spawnSync } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { ensureRuntimeBuilt } from '../binary/build/runtime.ts';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const RUNS = Number(process.env.RUNS ?? 5);
const work = mkdtempSync(join(tmpdir(), 'bench-binary-'));
const MiB = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

function ensureBinary(): string {
  if (process.env.TRANSIT_BINARY) return process.env.TRANSIT_BINARY;
  const dist = join(repoRoot, 'dist', 'transit-api');
  try {
    statSync(dist);
  } catch {
    console.log('dist/transit-api is missing: building it (npm run build:binary)');
    const t0 = performance.now();
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/build-binary.ts'], {
      cwd: repoRoot,
      stdio: 'inherit',
    });
    if (r.status !== 0) throw new Error('build failed');
    console.log(`build: ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  }
  return dist;
}

function du(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    total += entry.isDirectory() ? du(path) : statSync(path).size;
  }
  return total;
}

interface Launcher {
  name: string;
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
}

/** CPU seconds (user + system) a process has used so far; null off Linux. */
function cpuMs(pid: number | undefined): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    // utime and stime are fields 14 and 15 of stat, in clock ticks (100 per second on Linux)
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return null;
  }
}

interface Start {
  ms: number;
  cpuMs: number | null;
}

/** Spawns `serve`, polls /api/v1/alerts from the moment the port is printed, stops it. */
async function firstRequest(launcher: Launcher, key: string): Promise<Start> {
  const t0 = performance.now();
  const child = spawn(
    launcher.command,
    [...launcher.args, 'serve', '--config', join(work, 'config.json'), '--port', '0'],
    { cwd: work, env: launcher.env },
  );
  let output = '';
  child.stderr.on('data', (c) => {
    output += c;
  });
  const url = await new Promise<string>((done, fail) => {
    child.stdout.on('data', (c) => {
      output += c;
      const m = /listening on (http:\/\/[\d.]+:\d+)/.exec(output);
      if (m) done(m[1]!);
    });
    child.on('exit', (code) => fail(new Error(`${launcher.name} exited ${code}:\n${output}`)));
  });
  let start: Start;
  for (;;) {
    const res = await fetch(`${url}/api/v1/alerts`, { headers: { Authorization: `Bearer ${key}` } }).catch(() => null);
    if (res?.status === 200) {
      start = { ms: performance.now() - t0, cpuMs: cpuMs(child.pid) };
      break;
    }
    if (res) throw new Error(`${launcher.name}: /api/v1/alerts answered ${res.status}`);
    await delay(5);
  }
  const exited = new Promise((done) => child.on('exit', done));
  child.kill('SIGTERM');
  await exited;
  return start;
}

function median(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function main(): Promise<void> {
  const source = ensureBinary();
  await ensureRuntimeBuilt(repoRoot);
  const binary = join(work, 'transit-api');
  copyFileSync(source, binary);
  const emptyBin = join(work, 'empty-bin');
  mkdirSync(emptyBin);
  const db = join(work, 'bench.duckdb');
  const cache = join(work, 'cache');
  const clean = { PATH: emptyBin, HOME: work, TMPDIR: work, TRANSIT_DB: db, TRANSIT_CACHE_DIR: cache };
  writeFileSync(join(work, 'config.json'), JSON.stringify({ host: '127.0.0.1' }));

  const seaLauncher: Launcher = { name: 'binary', command: binary, args: [], env: clean };
  // bin/transit-api.js runs dist/ (npm run build); bench/start compares it with tsx
  const nodeLauncher: Launcher = {
    name: 'node + dist/ (checkout)',
    command: process.execPath,
    args: [join(repoRoot, 'bin', 'transit-api.js')],
    env: { PATH: process.env.PATH, HOME: work, TMPDIR: work, TRANSIT_DB: db },
  };

  // First start: --version extracts the embedded files into the empty cache.
  let t0 = performance.now();
  spawnSync(binary, ['--version'], { env: clean });
  const coldVersion = performance.now() - t0;
  t0 = performance.now();
  spawnSync(binary, ['--version'], { env: clean });
  const warmVersion = performance.now() - t0;

  // The database (migrations) and a key exist before the timed starts, as on a restart.
  const created = spawnSync(binary, ['keys', 'create', '--plan', 'max', '--name', 'bench'], {
    env: clean,
    encoding: 'utf8',
  });
  const key = /tk_live_\w+/.exec(created.stdout)?.[0];
  if (!key) throw new Error(`keys create failed: ${created.stdout}${created.stderr}`);

  rmSync(cache, { recursive: true, force: true });
  const coldServe = await firstRequest(seaLauncher, key);
  const sea: Start[] = [];
  const node: Start[] = [];
  for (let i = 0; i < RUNS; i++) {
    sea.push(await firstRequest(seaLauncher, key));
    node.push(await firstRequest(nodeLauncher, key));
  }

  const size = statSync(binary).size;
  const fmt = (ms: number) => `${ms.toFixed(0)} ms`;
  console.log(`binary: ${source}`);
  console.log(`  size                                   ${MiB(size)} (${size} bytes)`);
  console.log(`  extracted to the cache on first start  ${MiB(du(cache))}`);
  console.log(`  --version, first start (extracts)      ${fmt(coldVersion)}`);
  console.log(`  --version, later start                 ${fmt(warmVersion)}`);
  const wall = (starts: Start[]) => median(starts.map((s) => s.ms));
  const cpu = (starts: Start[]) => {
    const known = starts.map((s) => s.cpuMs).filter((v): v is number => v !== null);
    return known.length ? `, CPU ${fmt(median(known))}` : '';
  };
  const list = (starts: Start[]) => `[${starts.map((s) => fmt(s.ms)).join(', ')}]`;
  console.log(
    `start to first served request (serve, 200 on /api/v1/alerts), ${RUNS} runs each; wall (CPU used by then):`,
  );
  console.log(`  binary, first start (extracts)         ${fmt(coldServe.ms)}${cpu([coldServe])}`);
  console.log(`  binary, later starts (median)          ${fmt(wall(sea))}${cpu(sea)}   ${list(sea)}`);
  console.log(`  node + dist/ in the checkout (median)  ${fmt(wall(node))}${cpu(node)}   ${list(node)}`);
  console.log(`  ratio binary / checkout                ${(wall(sea) / wall(node)).toFixed(2)}`);
}

main()
  .catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exitCode = 1;
  })
  .finally(() => rmSync(work, { recursive: true, force: true }));
