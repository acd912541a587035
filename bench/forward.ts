// What an edge's forwarding to the ingest node costs (docs/guides/multi-node.md): the same
// history request (GET /api/v1/history/exports, a Max key) asked of the ingest node directly and
// through an edge, alternating, one at a time, on a redis-server started here; latency p50/p99
// and the difference. Sequential on purpose: this is the added hop, not throughput.
//   node --import tsx bench/forward.ts            REQUESTS=2000
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'node:http';
import { createKey } from '../accounts/keys.ts';
import { startEdge } from '../app/edge.ts';
import { startService } from '../app/serve.ts';
import { parseConfig } from '../core/config.ts';
import { brokerMissing, startBroker } from '../test/support/broker-servers.ts';
import { report } from './report.ts';

const REQUESTS = Number(process.env.REQUESTS ?? 2000);
const missing = brokerMissing('redis');
if (missing) {
  console.log(`bench/forward: ${missing}`);
  process.exit(0);
}

const agent = new Agent({ keepAlive: true, maxSockets: 1 });
function get(url: string, key: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    request(url, { agent, headers: { authorization: `Bearer ${key}`, 'accept-encoding': 'identity' } }, (res) => {
      res.resume();
      res.on('end', () =>
        res.statusCode === 200 ? resolve(performance.now() - t0) : reject(new Error(`${url}: ${res.statusCode}`)),
      );
    })
      .on('error', reject)
      .end();
  });
}

const pct = (sorted: number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;

const redis = await startBroker('redis');
const dir = mkdtempSync(join(tmpdir(), 'bench-forward-'));
const base = {
  host: '127.0.0.1',
  port: 0,
  signing_secret: 'bench-secret-0123456789abcdef',
  broker: { url: redis.url, prefix: 'bf:' },
  log_level: 'warn',
};
const ingest = await startService(parseConfig({ ...base, role: 'ingest', db_path: join(dir, 'ingest.duckdb') }), {
  poll: false,
});
const edge = await startEdge(parseConfig({ ...base, role: 'edge' }));
try {
  const key = (await createKey(ingest.runtime.db, { plan: 'max', name: 'bench' })).key;
  const path = '/api/v1/history/exports';
  for (let i = 0; i < 200; i++) {
    await get(`${ingest.url}${path}`, key);
    await get(`${edge.url}${path}`, key);
  }
  const direct: number[] = [];
  const forwarded: number[] = [];
  const load0 = loadavg();
  for (let i = 0; i < REQUESTS; i++) {
    direct.push(await get(`${ingest.url}${path}`, key));
    forwarded.push(await get(`${edge.url}${path}`, key));
  }
  direct.sort((a, b) => a - b);
  forwarded.sort((a, b) => a - b);
  const line = (name: string, s: number[]) =>
    `${name.padEnd(28)} p50 ${pct(s, 0.5).toFixed(3)} ms  p99 ${pct(s, 0.99).toFixed(3)} ms`;
  console.log(`GET ${path}, ${REQUESTS} each, alternating, one at a time`);
  console.log(line('ingest node directly', direct));
  console.log(line('through an edge', forwarded));
  console.log(
    `added by the hop: p50 +${(pct(forwarded, 0.5) - pct(direct, 0.5)).toFixed(3)} ms, p99 ` +
      `+${(pct(forwarded, 0.99) - pct(direct, 0.99)).toFixed(3)} ms`,
  );
  report({
    bench: 'forward',
    figure: 'history request through an edge, p50',
    value: pct(forwarded, 0.5),
    unit: 'ms',
    baseline: 'the ingest node directly',
    baselineValue: pct(direct, 0.5),
    ratio: pct(forwarded, 0.5) / pct(direct, 0.5),
    met: null,
  });
  console.log(
    `load average before/after: ${load0.map((l) => l.toFixed(2)).join(' ')} / ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')} on 2 CPUs`,
  );
} finally {
  agent.destroy();
  await edge.close();
  await ingest.close();
  await redis.close();
  rmSync(dir, { recursive: true, force: true });
}
