// Webhook delivery throughput and latency: events published on the bus become signed
// deliveries to 100 endpoints on a local receiver, through the durable DuckDB outbox.
// Baseline, measured in the same run: the same number of signed POSTs sent by a bare
// keep-alive node:http client at the same concurrency, with no outbox and no audit.
// CONCURRENCY takes a list: one full run per value (the worker's overall bound; its batches,
// and so its throughput, grow with it).
//   node --import tsx bench/webhooks.ts
//   ENDPOINTS=100 EVENTS=100 RATE_EVENTS_PER_S=1 RATE_SECONDS=10 CONCURRENCY=32,128 node --import tsx bench/webhooks.ts
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InMemoryEventBus, newEventId, type DomainEvent } from '../core/events.ts';
import { Db } from '../store/db.ts';
import { createWebhooks } from '../webhooks/index.ts';
import { signHeaders, generateSecret } from '../webhooks/signing.ts';
import { startReceiver, verifyDelivery, type ReceivedRequest } from '../test/support/webhooks.ts';

const ENDPOINTS = Number(process.env.ENDPOINTS ?? 100);
const EVENTS = Number(process.env.EVENTS ?? 100);
const RATE = Number(process.env.RATE_EVENTS_PER_S ?? 1);
const RATE_SECONDS = Number(process.env.RATE_SECONDS ?? 10);
const CONCURRENCY_LIST = String(process.env.CONCURRENCY ?? '32,128')
  .split(',')
  .map(Number);
const PER_ENDPOINT = Number(process.env.PER_ENDPOINT ?? 4);
/** verify one delivery in this many with standardwebhooks (all of them would load the receiver) */
const VERIFY_EVERY = Number(process.env.VERIFY_EVERY ?? 25);

const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
const fmt = (n: number, digits = 1) => n.toLocaleString('en-US', { maximumFractionDigits: digits });

async function baseline(url: string, total: number, concurrency: number): Promise<number> {
  const agent = new http.Agent({ keepAlive: true });
  const secret = generateSecret();
  const target = new URL(url);
  let next = 0;
  const t0 = performance.now();
  const one = () =>
    new Promise<void>((resolve, reject) => {
      const i = next++;
      const body = JSON.stringify({ type: 'alert.created', timestamp: new Date().toISOString(), data: { n: i } });
      const headers = signHeaders([secret], `msg_${i}`, Math.floor(Date.now() / 1000), body);
      const req = http.request(
        {
          host: target.hostname,
          port: target.port,
          path: `/base${i % ENDPOINTS}`,
          method: 'POST',
          agent,
          headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve());
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) await one();
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  agent.destroy();
  return total / seconds;
}

async function run(concurrency: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-webhooks-'));
  const db = await Db.open(join(dir, 'bench.duckdb'));
  const received: { req: ReceivedRequest; path: string }[] = [];
  const receiver = await startReceiver((req, res) => {
    received.push({ req, path: req.path });
    res.writeHead(204).end();
  });
  const bus = new InMemoryEventBus();
  const webhooks = createWebhooks({
    db,
    bus,
    config: {
      signing_secret: 'bench-secret-0123456789abcdef',
      webhooks: {
        allow_private_targets: true,
        timeout_ms: 15_000,
        max_concurrency: concurrency,
        max_concurrency_per_endpoint: PER_ENDPOINT,
      },
    },
  });
  const secrets = new Map<string, string>();
  for (let i = 0; i < ENDPOINTS; i++) {
    const ep = await webhooks.createEndpoint('key_bench', { url: `${receiver.url}/ep${i}`, filters: {} });
    secrets.set(`/ep${i}`, ep.secret);
  }
  await webhooks.start();

  const event = (n: number): DomainEvent =>
    // synthetic data (the receiver reads published_ms); the outbox and worker never look inside `data`
    ({
      id: newEventId(),
      type: 'alert.created',
      at_ms: Date.now(),
      modes: ['bus'],
      routes: ['504'],
      lines: [],
      data: { n, published_ms: Date.now() },
    }) as unknown as DomainEvent;
  const until = async (count: number) => {
    while (received.length < count) await new Promise((r) => setTimeout(r, 5));
  };
  const latencies = (from: number) =>
    received
      .slice(from)
      .map(({ req }) => req.at - (JSON.parse(req.body) as { data: { published_ms: number } }).data.published_ms)
      .sort((a, b) => a - b);

  // 1. burst: all events at once; deliveries/s through outbox, worker, signing and audit
  const t0 = performance.now();
  for (let n = 0; n < EVENTS; n++) bus.publish(event(n));
  await until(EVENTS * ENDPOINTS);
  const burstS = (performance.now() - t0) / 1000;
  const burstLat = latencies(0);

  // 2. steady rate: latency from event to receipt when the worker keeps up
  const start = received.length;
  const steadyEvents = RATE * RATE_SECONDS;
  for (let n = 0; n < steadyEvents; n++) {
    bus.publish(event(n));
    await new Promise((r) => setTimeout(r, 1000 / RATE));
  }
  await until(start + steadyEvents * ENDPOINTS);
  const steadyLat = latencies(start);

  await webhooks.stop();
  let verified = 0;
  let bad = 0;
  received.forEach(({ req, path }, i) => {
    if (i % VERIFY_EVERY) return;
    try {
      verifyDelivery(secrets.get(path)!, req);
      verified++;
    } catch {
      bad++;
    }
  });
  const [states] = await db.all<{ ok: bigint; total: bigint; attempts: bigint }>(
    `SELECT count(*) FILTER (WHERE state = 'succeeded') AS ok, count(*) AS total,
       (SELECT count(*) FROM webhook_attempts) AS attempts FROM webhook_deliveries`,
  );

  const base = await baseline(receiver.url, EVENTS * ENDPOINTS, concurrency);
  await receiver.close();
  await db.close();
  rmSync(dir, { recursive: true, force: true });

  const deliveriesPerS = (EVENTS * ENDPOINTS) / burstS;
  console.log(
    `webhooks bench: ${ENDPOINTS} endpoints, concurrency ${concurrency} (${PER_ENDPOINT} per endpoint), ` +
      `DuckDB file outbox`,
  );
  console.log(`burst: ${EVENTS} events -> ${fmt(EVENTS * ENDPOINTS, 0)} signed deliveries in ${fmt(burstS, 2)} s`);
  console.log(
    `  ${fmt(EVENTS / burstS)} events/s, ${fmt(deliveriesPerS, 0)} deliveries/s; event-to-receipt p50 ` +
      `${fmt(pct(burstLat, 50), 0)} ms, p99 ${fmt(pct(burstLat, 99), 0)} ms (queueing included)`,
  );
  console.log(`steady: ${RATE} events/s for ${RATE_SECONDS} s (${fmt(RATE * ENDPOINTS, 0)} deliveries/s offered)`);
  console.log(
    `  event-to-receipt p50 ${fmt(pct(steadyLat, 50), 0)} ms, p99 ${fmt(pct(steadyLat, 99), 0)} ms, max ` +
      `${fmt(steadyLat.at(-1) ?? NaN, 0)} ms`,
  );
  console.log(`baseline: bare keep-alive node:http signed POSTs at concurrency ${concurrency}: ${fmt(base, 0)} req/s`);
  console.log(`ratio: webhooks deliveries/s / baseline = ${(deliveriesPerS / base).toFixed(3)}`);
  console.log(
    `check: ${states!.ok}/${states!.total} deliveries succeeded, ${states!.attempts} attempts audited, ` +
      `${verified} sampled deliveries verified by standardwebhooks, ${bad} failed verification`,
  );
  if (bad > 0 || states!.ok !== states!.total) process.exitCode = 1;
}

for (const concurrency of CONCURRENCY_LIST) await run(concurrency);
