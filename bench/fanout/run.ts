// SSE fan-out bench: C connections × event rate, through the real path (the API server as `serve`
// composes it: core EventBus → DuckDB event log → stream hub → http/server.ts's uWS sink, behind
// the request chain, keys, allowance and metering) and two baselines measured in the same run (a minimal raw
// uWS broadcaster, the reference for ratios, and a minimal node:http one). Server and client run
// as separate processes pinned to different CPUs; everything targets 127.0.0.1 and every run
// stops by itself.
//
//   node --import tsx bench/fanout/run.ts
//   FANOUT_CONNECTIONS=1000,5000,10000,20000 FANOUT_RATES=10,100 FANOUT_SERVERS=uws,api,hub,node
//   FANOUT_WARMUP_S=3 FANOUT_WINDOW_S=10 FANOUT_EVENT_BYTES=300 FANOUT_COALESCE_MS=<config>
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { report } from '../report.ts';

const HERE = dirname(fileURLToPath(import.meta.url));
const SERVERS = {
  uws: { file: 'server-raw-uws.ts', path: '/events', label: 'raw uWS (baseline)' },
  hub: { file: 'server-hub.ts', path: '/api/v1/events/stream', label: 'hub + uWS sink (streaming core alone)' },
  api: {
    file: 'server-api.ts',
    path: '/api/v1/events/stream',
    label: 'the API server (real path: request chain, auth, allowance, metering)',
  },
  // the same server compiled ahead of time, as a deploy runs it (the binary bundles the app):
  // no tsx loader thread in the process, so its RSS is the product's, not the dev loader's
  'api-js': {
    file: 'server-api.ts',
    path: '/api/v1/events/stream',
    label: 'the API server, bundled by esbuild (no tsx)',
  },
  node: { file: 'server-node-http.ts', path: '/events', label: 'node:http (baseline)' },
  // the same API server with its event log on Redis (bus → Redis stream → XREAD → hub), as an
  // edge of a multi-node deploy: against `api`, the latency difference is the broker hop
  broker: {
    file: 'server-broker.ts',
    path: '/api/v1/events/stream',
    label: 'the API server, event log on Redis (an edge)',
  },
  // an ingest process publishing to a Redis the runner starts, and one or two edge processes
  // (both on the server CPU) sharing the connections; one client per edge, both on the client CPU
  edge1: {
    file: 'server-broker.ts',
    path: '/api/v1/events/stream',
    label: 'one edge behind a separate ingest process',
  },
  edge2: {
    file: 'server-broker.ts',
    path: '/api/v1/events/stream',
    label: 'two edges, the connections split, behind a separate ingest process',
  },
} as const;
type ServerKind = keyof typeof SERVERS;

const list = (name: string, fallback: string) =>
  (process.env[name] ?? fallback)
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
const num = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const connectionsWanted = list('FANOUT_CONNECTIONS', '1000,10000').map(Number);
const rates = list('FANOUT_RATES', '10,100').map(Number);
const servers = list('FANOUT_SERVERS', 'uws,api,node') as ServerKind[];
const warmupS = num('FANOUT_WARMUP_S', 3);
const windowS = num('FANOUT_WINDOW_S', 10);
const eventBytes = num('FANOUT_EVENT_BYTES', 300);
const maxInflight = num('FANOUT_MAX_INFLIGHT', 256);
const connectTimeoutS = num('FANOUT_CONNECT_TIMEOUT_S', 40);
for (const s of servers)
  if (!(s in SERVERS)) throw new Error(`unknown server ${s}; use ${Object.keys(SERVERS).join(',')}`);

const CLK_TCK = 100;
const pin = existsSync('/usr/bin/taskset') && cpus().length >= 2;
const hardNoFile = Number(execFileSync('sh', ['-c', 'ulimit -Hn'], { encoding: 'utf8' }).trim()) || 1024;

function cpuSeconds(pid: number): number {
  // fields after the command name: utime is field 14, stime 15 (1-based, in clock ticks)
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
}

function machineBusySeconds(): number {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = line;
  return (user + nice + system + irq + softirq + steal) / CLK_TCK;
}

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : Number.NaN;
}

function compileClient(dir: string): string {
  const out = join(dir, 'fanout-client');
  execFileSync('cc', ['-O2', '-o', out, join(HERE, 'client.c')], { stdio: 'inherit' });
  return out;
}

function launch(cpu: number, command: string, args: string[], env: NodeJS.ProcessEnv = process.env): ChildProcess {
  const [cmd, argv] = pin ? ['taskset', ['-c', String(cpu), command, ...args]] : [command, args];
  return spawn(cmd, argv, { env, stdio: ['ignore', 'pipe', 'inherit'] });
}

function lines(child: ChildProcess, onLine: (line: string) => void): void {
  createInterface({ input: child.stdout! }).on('line', onLine);
}

async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

interface Result {
  server: ServerKind;
  connections: number;
  rate: number;
  connected: number;
  eventsPerS: number;
  offeredPerS: number;
  p50: number;
  p99: number;
  serverCpuPct: number;
  cpuUsPerEvent: number;
  rssMb: number;
  clientCpuPct: number;
  otherCpuPct: number;
  dropped: number;
  perConnMin: number;
  perConnMedian: number;
  /** the server's own: due → written to the last socket (api and uws; null for the others) */
  serverP50: number | null;
  serverP99: number | null;
  /** the broker hop: published on the ingest side's bus → handed to the serving side's hub (broker, edge1, edge2) */
  hopP50: number | null;
  hopP99: number | null;
}

/** p50/p99 a server process wrote at exit (publisher.ts WriteTrace), null when it wrote none. */
function readTrace(file: string): { p50_ms: number; p99_ms: number } | null {
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { p50_ms: number; p99_ms: number }) : null;
}

const live = new Set<ChildProcess>();
process.on('SIGINT', () => {
  for (const child of live) child.kill('SIGKILL');
  process.exit(130);
});

let runNumber = 0;

const REPO = join(HERE, '..', '..');
let bundledServer: Promise<string> | null = null;

/** esbuild output at the repository root, so assetPath() (relative to its module) finds the repo. */
function bundleServer(): Promise<string> {
  bundledServer ??= (async () => {
    const { build } = await import('esbuild');
    const outfile = join(REPO, '.bench-bundle', 'server-api.mjs');
    await build({
      entryPoints: [join(HERE, SERVERS['api-js'].file)],
      outfile,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      packages: 'external',
      logLevel: 'warning',
    });
    return outfile;
  })();
  return bundledServer;
}

function waitReady(child: ChildProcess, what: string): Promise<{ port: number; path: string | undefined }> {
  return new Promise((resolve, reject) => {
    lines(child, (line) => {
      const m = /^ready (\d+)(?: (\S+))?$/.exec(line);
      if (m) resolve({ port: Number(m[1]), path: m[2] });
    });
    child.once('exit', (code) => reject(new Error(`${what} exited (${code}) before listening`)));
  });
}

/**
 * edge1 / edge2: a redis-server, an ingest process publishing to it (FANOUT_BROKER_ROLE=ingest)
 * and `edges` edge processes on the server CPU, each with its share of the connections and a
 * client of its own on the client CPU. Events/s and latency combine the clients; CPU per event
 * is per edge (the ingest process and Redis are reported apart).
 */
async function runEdges(
  client: string,
  kind: 'edge1' | 'edge2',
  connections: number,
  rate: number,
): Promise<Result | null> {
  const { startBroker } = await import('../../test/support/broker-servers.ts');
  const redis = await startBroker('redis');
  const edges = kind === 'edge2' ? 2 : 1;
  const env = {
    ...process.env,
    FANOUT_RATE: String(rate),
    FANOUT_EVENT_BYTES: String(eventBytes),
    FANOUT_START_ON_SIGNAL: '1',
    FANOUT_BROKER_URL: redis.url,
    FANOUT_WARMUP_S: String(warmupS),
  };
  const hopFiles: string[] = [];
  const script = ['--import', 'tsx', join(HERE, SERVERS[kind].file)];
  const children: ChildProcess[] = [];
  const deadline = setTimeout(
    () => {
      console.error(`  ${kind}: run exceeded its time budget; stopping`);
      for (const child of children) child.kill('SIGKILL');
    },
    (connectTimeoutS + warmupS + windowS + 90) * 1000,
  );
  try {
    const ingest = launch(1, process.execPath, script, { ...env, FANOUT_BROKER_ROLE: 'ingest' });
    children.push(ingest);
    await waitReady(ingest, 'the ingest process');
    const servers: ChildProcess[] = [];
    const targets: Array<{ port: number; path: string }> = [];
    for (let i = 0; i < edges; i++) {
      const hopFile = join(tmpdir(), `fanout-hop-${process.pid}-${++runNumber}.json`);
      hopFiles.push(hopFile);
      const edge = launch(0, process.execPath, script, {
        ...env,
        FANOUT_BROKER_ROLE: 'edge',
        FANOUT_HOP_TRACE: hopFile,
      });
      children.push(edge);
      servers.push(edge);
      const { port, path } = await waitReady(edge, 'an edge');
      targets.push({ port, path: path ?? SERVERS[kind].path });
    }
    const share = Math.floor(connections / edges);
    let connectedClients = 0;
    let connected = 0;
    let start: { servers: number[]; ingest: number; clients: number; machine: number; at: number } | null = null;
    const clients = targets.map((target) =>
      launch(1, client, [
        '127.0.0.1',
        String(target.port),
        target.path,
        String(share),
        String(warmupS),
        String(windowS),
        String(maxInflight),
        String(connectTimeoutS),
      ]),
    );
    children.push(...clients);
    // a client's CPU is read when it prints its result: it exits right after, and its /proc entry
    // is gone by the time the last client of the run is done
    const clientDone = new Map<ChildProcess, number>();
    const clientCpu = () => clients.reduce((n, c) => n + (clientDone.get(c) ?? cpuSeconds(c.pid!)), 0);
    const outputs = await Promise.all(
      clients.map(
        (c) =>
          new Promise<Record<string, number>>((resolve, reject) => {
            lines(c, (line) => {
              if (line.startsWith('connected ')) {
                connected += Number(line.split(' ')[1]);
                process.stdout.write(`  ${kind}: ${line}\n`);
                if (++connectedClients === clients.length) ingest.kill('SIGUSR1');
              } else if (line === 'measure') {
                start ??= {
                  servers: servers.map((p) => cpuSeconds(p.pid!)),
                  ingest: cpuSeconds(ingest.pid!),
                  clients: clientCpu(),
                  machine: machineBusySeconds(),
                  at: performance.now(),
                };
              } else if (line.startsWith('{')) {
                clientDone.set(c, cpuSeconds(c.pid!));
                resolve(JSON.parse(line) as Record<string, number>);
              }
            });
            c.once('exit', (code) => reject(new Error(`client exited (${code}) without a result`)));
          }),
      ),
    );
    const s = start!;
    const elapsed = (performance.now() - s.at) / 1000;
    const serverCpus = servers.map((p, i) => (cpuSeconds(p.pid!) - s.servers[i]!) / elapsed);
    const ingestCpu = (cpuSeconds(ingest.pid!) - s.ingest) / elapsed;
    const clientsCpu = (clientCpu() - s.clients) / elapsed;
    const machineCpu = (machineBusySeconds() - s.machine) / elapsed;
    const eventsPerS = outputs.reduce((n, o) => n + o.events_per_s!, 0);
    const serverCpu = serverCpus.reduce((a, b) => a + b, 0);
    const perEdge = serverCpus.map(
      (c, i) => `${fmt(c * 100)}% CPU, ${fmt((c * 1e6) / outputs[i]!.events_per_s!, 2)} µs/event`,
    );
    const rss = Math.max(...servers.map((p) => rssMb(p.pid!)));
    // each edge writes its hop figures as it exits
    for (const edge of servers) await stopProcess(edge);
    const hops = hopFiles.map(readTrace);
    const hop = (pick: (h: { p50_ms: number; p99_ms: number }) => number) =>
      hops.every((h) => h !== null) ? Math.max(...hops.map((h) => pick(h!))) : null;
    console.log(
      `  ${kind}: per edge ${perEdge.join('; ')}; ` +
        `ingest process ${fmt(ingestCpu * 100)}% CPU; p50 ${outputs.map((o) => fmt(o.p50_ms!, 1)).join(' / ')} ms, ` +
        `p99 ${outputs.map((o) => fmt(o.p99_ms!, 1)).join(' / ')} ms`,
    );
    return {
      server: kind,
      connections,
      rate,
      connected,
      eventsPerS,
      offeredPerS: connected * rate,
      // the clients' medians and p99s: the worse edge's, so nothing looks better than one of them
      p50: Math.max(...outputs.map((o) => o.p50_ms!)),
      p99: Math.max(...outputs.map((o) => o.p99_ms!)),
      serverCpuPct: serverCpu * 100,
      cpuUsPerEvent: eventsPerS > 0 ? (serverCpu * 1e6) / eventsPerS : Number.NaN,
      rssMb: rss,
      clientCpuPct: clientsCpu * 100,
      otherCpuPct: Math.max(0, (machineCpu - serverCpu - clientsCpu - ingestCpu) * 100),
      dropped: outputs.reduce((n, o) => n + o.dropped_in_window!, 0),
      perConnMin: Math.min(...outputs.map((o) => o.per_conn_min!)),
      perConnMedian: Math.min(...outputs.map((o) => o.per_conn_median!)),
      serverP50: null,
      serverP99: null,
      // the worse edge's
      hopP50: hop((h) => h.p50_ms),
      hopP99: hop((h) => h.p99_ms),
    };
  } catch (err) {
    console.error(`  ${kind} C=${connections} rate=${rate}: ${(err as Error).message}`);
    return null;
  } finally {
    clearTimeout(deadline);
    for (const child of children.reverse()) await stopProcess(child);
    await redis.close();
    for (const file of hopFiles) rmSync(file, { force: true });
  }
}

async function runOne(
  dir: string,
  client: string,
  kind: ServerKind,
  connections: number,
  rate: number,
): Promise<Result | null> {
  if (kind === 'edge1' || kind === 'edge2') return runEdges(client, kind, connections, rate);
  const argv = kind === 'api-js' ? [await bundleServer()] : ['--import', 'tsx', join(HERE, SERVERS[kind].file)];
  const traceFile = join(dir, `trace-${runNumber + 1}.json`);
  const hopFile = join(dir, `hop-${runNumber + 1}.json`);
  const server = launch(0, process.execPath, argv, {
    ...process.env,
    FANOUT_RATE: String(rate),
    FANOUT_EVENT_BYTES: String(eventBytes),
    FANOUT_START_ON_SIGNAL: '1',
    FANOUT_DB_PATH: join(dir, `hub-${++runNumber}.duckdb`),
    FANOUT_SERVER_TRACE: traceFile,
    FANOUT_HOP_TRACE: hopFile,
    FANOUT_WARMUP_S: String(warmupS),
  });
  live.add(server);
  const deadline = setTimeout(
    () => {
      console.error(`  ${kind}: run exceeded its time budget; stopping`);
      for (const child of live) child.kill('SIGKILL');
    },
    (connectTimeoutS + warmupS + windowS + 60) * 1000,
  );
  try {
    // a server may name the path to request (the API server: its key in ?api_key=)
    const { port, path } = await new Promise<{ port: number; path: string }>((resolve, reject) => {
      lines(server, (line) => {
        const m = /^ready (\d+)(?: (\S+))?$/.exec(line);
        if (m) resolve({ port: Number(m[1]), path: m[2] ?? SERVERS[kind].path });
      });
      server.once('exit', (code) => reject(new Error(`${kind} server exited (${code}) before listening`)));
    });
    const loadClient = launch(1, client, [
      '127.0.0.1',
      String(port),
      path,
      String(connections),
      String(warmupS),
      String(windowS),
      String(maxInflight),
      String(connectTimeoutS),
    ]);
    live.add(loadClient);
    let start: { server: number; client: number; machine: number; at: number } | null = null;
    let connected = 0;
    const json = await new Promise<Record<string, number>>((resolve, reject) => {
      lines(loadClient, (line) => {
        if (line.startsWith('connected ')) {
          connected = Number(line.split(' ')[1]);
          // events start now that every connection is open; the client's warm-up starts too
          server.kill('SIGUSR1');
          process.stdout.write(`  ${kind}: ${line}\n`);
        } else if (line === 'measure') {
          start = {
            server: cpuSeconds(server.pid!),
            client: cpuSeconds(loadClient.pid!),
            machine: machineBusySeconds(),
            at: performance.now(),
          };
        } else if (line.startsWith('{')) {
          const end = {
            server: cpuSeconds(server.pid!),
            client: cpuSeconds(loadClient.pid!),
            machine: machineBusySeconds(),
            at: performance.now(),
          };
          const parsed = JSON.parse(line) as Record<string, number>;
          const s = start!;
          const elapsed = (end.at - s.at) / 1000;
          parsed.serverCpu = (end.server - s.server) / elapsed;
          parsed.clientCpu = (end.client - s.client) / elapsed;
          parsed.machineCpu = (end.machine - s.machine) / elapsed;
          parsed.rss = rssMb(server.pid!);
          resolve(parsed);
        }
      });
      loadClient.once('exit', (code) => reject(new Error(`client exited (${code}) without a result`)));
    });
    await stopProcess(loadClient);
    live.delete(loadClient);
    await stopProcess(server);
    const serverSide = readTrace(traceFile);
    const hop = readTrace(hopFile);
    const eventsPerS = json.events_per_s!;
    return {
      server: kind,
      connections,
      rate,
      connected,
      eventsPerS,
      offeredPerS: connected * rate,
      p50: json.p50_ms!,
      p99: json.p99_ms!,
      serverCpuPct: json.serverCpu! * 100,
      cpuUsPerEvent: eventsPerS > 0 ? (json.serverCpu! * 1e6) / eventsPerS : Number.NaN,
      rssMb: json.rss!,
      clientCpuPct: json.clientCpu! * 100,
      otherCpuPct: Math.max(0, (json.machineCpu! - json.serverCpu! - json.clientCpu!) * 100),
      dropped: json.dropped_in_window!,
      perConnMin: json.per_conn_min!,
      perConnMedian: json.per_conn_median!,
      serverP50: serverSide?.p50_ms ?? null,
      serverP99: serverSide?.p99_ms ?? null,
      hopP50: hop?.p50_ms ?? null,
      hopP99: hop?.p99_ms ?? null,
    };
  } catch (err) {
    console.error(`  ${kind} C=${connections} rate=${rate}: ${(err as Error).message}`);
    return null;
  } finally {
    clearTimeout(deadline);
    await stopProcess(server);
    live.delete(server);
    for (const child of live) child.kill('SIGKILL');
    live.clear();
  }
}

const fmt = (n: number, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : '-');

function printTable(results: Result[]): void {
  const header = [
    'server',
    'C',
    'rate/s',
    'conn',
    'offered/s',
    'events/s',
    'deliv%',
    'p50 ms',
    'p99 ms',
    'srv p50',
    'srv p99',
    'hop p50',
    'hop p99',
    'srv CPU%',
    'µs/event',
    'RSS MB',
    'client%',
    'other%',
    'min/conn',
    'x uWS ev/s',
    'x uWS µs/ev',
  ];
  const rows = results.map((r) => {
    const ref = results.find((x) => x.server === 'uws' && x.connections === r.connections && x.rate === r.rate);
    return [
      r.server,
      String(r.connections),
      String(r.rate),
      String(r.connected),
      fmt(r.offeredPerS),
      fmt(r.eventsPerS),
      fmt((100 * r.eventsPerS) / r.offeredPerS, 1),
      fmt(r.p50, 1),
      fmt(r.p99, 1),
      fmt(r.serverP50 ?? Number.NaN, 1),
      fmt(r.serverP99 ?? Number.NaN, 1),
      fmt(r.hopP50 ?? Number.NaN, 1),
      fmt(r.hopP99 ?? Number.NaN, 1),
      fmt(r.serverCpuPct),
      fmt(r.cpuUsPerEvent, 2),
      fmt(r.rssMb),
      fmt(r.clientCpuPct),
      fmt(r.otherCpuPct),
      String(r.perConnMin),
      ref ? fmt(r.eventsPerS / ref.eventsPerS, 2) : '-',
      ref ? fmt(r.cpuUsPerEvent / ref.cpuUsPerEvent, 2) : '-',
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padStart(widths[i]!)).join('  ');
  console.log(`\n${line(header)}`);
  for (const row of rows) console.log(line(row));
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'fanout-bench-'));
  try {
    const client = compileClient(dir);
    console.log(
      `fan-out bench: ${pin ? 'server on CPU 0, client on CPU 1' : 'NOT pinned (taskset or a 2nd CPU missing)'}; ` +
        `${eventBytes}-byte events; warm-up ${warmupS} s, window ${windowS} s; open-file hard limit ${hardNoFile}`,
    );
    const results: Result[] = [];
    for (const wanted of connectionsWanted) {
      // the server holds one descriptor per connection plus its own (DuckDB, epoll, stdio)
      const connections = Math.min(wanted, hardNoFile - 200);
      if (connections < wanted)
        console.log(`C=${wanted} exceeds the open-file limit of one process; running ${connections}`);
      for (const rate of rates) {
        console.log(`C=${connections} rate=${rate}/s`);
        for (const kind of servers) {
          const result = await runOne(dir, client, kind, connections, rate);
          if (result) results.push(result);
        }
      }
    }
    printTable(results);
    for (const r of results.filter((x) => x.server === 'api')) {
      const ref = results.find((x) => x.server === 'uws' && x.connections === r.connections && x.rate === r.rate);
      const target = r.rate <= 10 ? 100 : 200;
      report({
        bench: 'fanout',
        figure:
          `SSE ${r.connections.toLocaleString('en')} streams × ${r.rate} events/s, p99 ` +
          `(${Math.round(r.eventsPerS).toLocaleString('en')} events/s)`,
        value: r.p99,
        unit: 'ms',
        ...(ref ? { baseline: 'raw uWS, same load', baselineValue: ref.p99, ratio: r.p99 / ref.p99 } : {}),
        target: `p99 < ${target} ms`,
        met: r.p99 < target && r.eventsPerS >= 0.99 * r.offeredPerS,
      });
      if (r.serverP99 !== null) {
        report({
          bench: 'fanout',
          figure: `the same, server side: due → written to the last socket, p99`,
          value: r.serverP99,
          unit: 'ms',
          ...(ref?.serverP99
            ? { baseline: 'raw uWS, same load', baselineValue: ref.serverP99, ratio: r.serverP99 / ref.serverP99 }
            : {}),
          target: `p99 < ${target} ms`,
          met: r.serverP99 < target,
        });
      }
    }
    // the goal (issue 28): the API's p99 within 1.1× raw uWS's at the same load. It only means
    // something where raw uWS keeps up: a saturated baseline (it writes each event to each socket
    // alone) has seconds of queueing that make any ratio against it look good
    for (const r of results.filter((x) => x.server === 'api')) {
      const ref = results.find((x) => x.server === 'uws' && x.connections === r.connections && x.rate === r.rate);
      if (!ref) continue;
      const load = `${r.connections.toLocaleString('en')} × ${r.rate}/s`;
      if (ref.eventsPerS < 0.99 * ref.offeredPerS) {
        console.log(
          `goal at ${load}: not comparable, raw uWS delivered ${fmt((100 * ref.eventsPerS) / ref.offeredPerS, 1)}% ` +
            '(saturated on this machine); the API delivered ' +
            `${fmt((100 * r.eventsPerS) / r.offeredPerS, 1)}% with p99 ${fmt(r.p99, 1)} ms`,
        );
        continue;
      }
      const ratio = r.p99 / ref.p99;
      console.log(
        `goal at ${load}: API p99 ${fmt(r.p99, 1)} ms ÷ raw uWS p99 ${fmt(ref.p99, 1)} ms = ${fmt(ratio, 2)}× ` +
          `(goal ≤ 1.1×: ${ratio <= 1.1 ? 'met' : 'NOT met'})`,
      );
    }
    for (const r of results.filter((x) => x.hopP99 !== null)) {
      report({
        bench: 'fanout',
        figure:
          `broker hop (bus → Redis → the serving node's hub), ${r.server}, ` +
          `${r.connections.toLocaleString('en')} streams × ${r.rate} events/s, p50 ` +
          `${fmt(r.hopP50!, 2)} ms, p99`,
        value: r.hopP99!,
        unit: 'ms',
        met: null,
      });
    }
    console.log(
      '\nratios: events/s ÷ raw uWS (higher is better), server CPU-µs per delivered event ÷ raw uWS (lower is better).',
    );
    console.log('other% = machine CPU used by neither server nor client (other tenants); runs above ~15 are noisy.');
    console.log(
      "srv p50/p99 = the server's own: from an event's due time until its write to the last socket returned (api, " +
        "uws); p50/p99 are the client's, which adds its own queueing.",
    );
    console.log(
      "hop p50/p99 = the broker hop (broker, edge1, edge2): from an event's publication on the ingest side's bus " +
        "until the serving node's XREAD loop handed it to the hub; edges: the worse edge's.",
    );
    console.log(`\nJSON ${JSON.stringify(results)}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
