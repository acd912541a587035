// bench/start: the built runtime (bin/transit-api.js → dist/, as `npm start` and `npx
// transit-api` run it) against the same CLI run from the sources through tsx (how they ran before
// issue 14, and how `npm run dev` runs), in the same run: time from spawn to the first answered
// request, CPU used by then, and RSS once idle (no client; the demo's pipeline keeps polling).
// Each start is `serve --demo` on a free port, polled on /status.json; the two alternate.
//
//   npm run bench:start          RUNS=5 IDLE_S=10 (builds dist/ first when it is missing or stale)
import { freePort } from '../test/support/wait.ts';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { ensureRuntimeBuilt, RUNTIME_BUNDLE } from '../binary/build/runtime.ts';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const RUNS = Number(process.env.RUNS ?? 5);
const IDLE_S = Number(process.env.IDLE_S ?? 10);
const work = mkdtempSync(join(tmpdir(), 'bench-start-'));

interface Variant {
  name: string;
  args: string[];
}

const VARIANTS: Variant[] = [
  { name: 'built (node bin/transit-api.js → dist/)', args: [join(repoRoot, 'bin', 'transit-api.js')] },
  // tsx by its resolved URL: the servers run in a scratch folder, where `--import tsx` finds nothing
  {
    name: 'tsx (node --import tsx cli/main.ts)',
    args: ['--import', import.meta.resolve('tsx'), join(repoRoot, 'cli', 'main.ts')],
  },
];

interface Sample {
  startMs: number;
  cpuMs: number | null;
  idleRssMiB: number | null;
}

/** CPU time (user + system) a process has used so far; null off Linux. */
function cpuMs(pid: number): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    // utime and stime, fields 14 and 15 of stat, in clock ticks (100 per second on Linux)
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return null;
  }
}

function rssMiB(pid: number): number | null {
  try {
    const kb = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb ? Number(kb) / 1024 : null;
  } catch {
    return null;
  }
}

async function start(variant: Variant, idleS: number): Promise<Sample> {
  const port = await freePort();
  const t0 = performance.now();
  const child = spawn(process.execPath, [...variant.args, 'serve', '--demo', '--port', String(port)], {
    cwd: work,
    env: { ...process.env, TRANSIT_DEMO_DIR: join(work, 'demo'), TRANSIT_CONFIG: '', TRANSIT_DB: '', NODE_OPTIONS: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${variant.name} exited ${child.exitCode}:\n${output}`);
      const res = await fetch(`http://127.0.0.1:${port}/status.json`).catch(() => null);
      if (res?.ok) break;
      await res?.arrayBuffer();
      await delay(10);
    }
    const startMs = performance.now() - t0;
    const cpu = cpuMs(child.pid!);
    // idle: the median of the last samples, so one GC or one poll does not decide the figure
    const rss: number[] = [];
    for (let s = 0; s < idleS; s++) {
      await delay(1000);
      if (s >= idleS / 2) rss.push(rssMiB(child.pid!) ?? Number.NaN);
    }
    return { startMs, cpuMs: cpu, idleRssMiB: rss.length ? median(rss) : null };
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function main(): Promise<void> {
  const rebuilt = await ensureRuntimeBuilt(repoRoot);
  console.log(rebuilt ? `built ${RUNTIME_BUNDLE} first (${rebuilt})` : `${RUNTIME_BUNDLE} is up to date`);
  // untimed: the first start generates the demo city and imports its schedule into the database,
  // and fills tsx's transform cache; the timed starts are restarts on that database
  for (const variant of VARIANTS) await start(variant, 0);
  const samples = new Map<Variant, Sample[]>(VARIANTS.map((v) => [v, []]));
  for (let i = 0; i < RUNS; i++) {
    for (const variant of VARIANTS) samples.get(variant)!.push(await start(variant, IDLE_S));
  }

  const fmt = (v: number | null, unit: string, digits = 0) =>
    v === null || Number.isNaN(v) ? 'n/a' : `${v.toFixed(digits)} ${unit}`;
  const of = (variant: Variant, pick: (s: Sample) => number | null) => {
    const known = samples
      .get(variant)!
      .map(pick)
      .filter((v): v is number => v !== null && !Number.isNaN(v));
    return known.length ? median(known) : null;
  };
  console.log(
    `serve --demo, ${RUNS} restarts each (alternating), idle RSS over the last ${Math.ceil(IDLE_S / 2)} of ` +
      `${IDLE_S} s; medians:`,
  );
  for (const variant of VARIANTS) {
    const list = samples
      .get(variant)!
      .map((s) => s.startMs.toFixed(0))
      .join(', ');
    console.log(
      `  ${variant.name.padEnd(42)} start to first request ${fmt(
        of(variant, (s) => s.startMs),
        'ms',
      ).padStart(8)}` +
        `   CPU by then ${fmt(
          of(variant, (s) => s.cpuMs),
          'ms',
        ).padStart(8)}   idle RSS ${fmt(
          of(variant, (s) => s.idleRssMiB),
          'MiB',
          1,
        ).padStart(9)}   [${list} ms]`,
    );
  }
  const [built, tsx] = VARIANTS as [Variant, Variant];
  const ratio = (pick: (s: Sample) => number | null) => {
    const a = of(built, pick);
    const b = of(tsx, pick);
    return a === null || b === null ? 'n/a' : `${(a / b).toFixed(2)}×`;
  };
  const rssDiff = (of(tsx, (s) => s.idleRssMiB) ?? Number.NaN) - (of(built, (s) => s.idleRssMiB) ?? Number.NaN);
  console.log(
    `  built / tsx: start ${ratio((s) => s.startMs)}, CPU ${ratio((s) => s.cpuMs)}, idle RSS ` +
      `${ratio((s) => s.idleRssMiB)} (${fmt(rssDiff, 'MiB', 1)} less)`,
  );
  console.log(
    `  load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')} on ${cpus().length} CPUs (other processes share them: compare within this run)`,
  );
}

main()
  .catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exitCode = 1;
  })
  .finally(() => rmSync(work, { recursive: true, force: true }));
