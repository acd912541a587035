// Redis 7 (Streams, Lua, pub/sub, hashes) against NATS JetStream (streams, KV, core pub/sub) on
// the jobs a multi-node deploy gives its broker, both real Debian servers started on loopback in
// this run: append + read from an offset (the event log), fan-out to N nodes, an exact shared
// 5-minute window (the limiter), a live-state KV snapshot, and pub/sub latency (revocations).
// Figures are same-run ratios; the machine is shared, so read them as orders of magnitude.
//   npm run bench:broker            (BROKER_EVENTS=20000 BROKER_SUBSCRIBERS=8)
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager, type JetStreamClient } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { brokerMissing, brokerVersion, startBroker, type BrokerServer } from '../test/support/broker-servers.ts';
import { REDIS_WINDOW_LUA } from '../broker/redis-scripts.ts';

const EVENTS = Number(process.env.BROKER_EVENTS ?? 20_000);
const SUBSCRIBERS = Number(process.env.BROKER_SUBSCRIBERS ?? 8);
const PAYLOAD = 'x'.repeat(300);
const WINDOW_MS = 300_000;
const QUOTA = 600;
const LIMIT_CLIENTS = 4;
const LIMIT_ATTEMPTS = 3_000;
const KV_ENTRIES = 2_000;
const PINGS = 2_000;

type Figures = Record<string, string>;
const out = (line: string) => process.stdout.write(`${line}\n`);
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN;
};
const rate = (n: number, ms: number) => `${Math.round((n / ms) * 1000).toLocaleString('en-US')}/s`;
const us = (ms: number) => `${(ms * 1000).toFixed(0)} µs`;
const body = (i: number) => JSON.stringify({ i, t: performance.now(), p: PAYLOAD });

async function redisJobs(server: BrokerServer): Promise<Figures> {
  const f: Figures = {};
  const r = new Redis(server.url, { maxRetriesPerRequest: null });
  const key = 'bench:log';
  // append: pipelined XADD in batches of 100, bounded length as the log would be
  let t0 = performance.now();
  for (let i = 0; i < EVENTS; i += 100) {
    const p = r.pipeline();
    for (let j = i; j < Math.min(EVENTS, i + 100); j++) p.xadd(key, 'MAXLEN', '~', '100000', '*', 'e', body(j));
    await p.exec();
  }
  f.append = rate(EVENTS, performance.now() - t0);
  // read from an offset: the middle of the log, 1,000 per call
  const all = await r.xrange(key, '-', '+', 'COUNT', String(EVENTS / 2));
  let from = all[all.length - 1]![0];
  t0 = performance.now();
  let read = 0;
  for (;;) {
    const batch = await r.xrange(key, `(${from}`, '+', 'COUNT', '1000');
    if (batch.length === 0) break;
    read += batch.length;
    from = batch[batch.length - 1]![0];
  }
  f.read_from_offset = rate(read, performance.now() - t0);
  // fan-out: N nodes each block on XREAD; paced publisher (2,000 events/s) for latency
  const subs = Array.from({ length: SUBSCRIBERS }, () => new Redis(server.url));
  const latencies: number[] = [];
  const fanN = 2_000;
  let delivered = 0;
  let done!: () => void;
  const allIn = new Promise<void>((res) => {
    done = res;
  });
  const start = (await r.xrevrange(key, '+', '-', 'COUNT', '1'))[0]![0];
  for (const s of subs) {
    void (async () => {
      let last = start;
      let got = 0;
      while (got < fanN) {
        const res = (await s.xread('COUNT', '1000', 'BLOCK', '1000', 'STREAMS', key, last)) as Array<
          [string, Array<[string, string[]]>]
        > | null;
        if (!res) continue;
        const now = performance.now();
        for (const [id, fields] of res[0]![1]) {
          last = id;
          got++;
          latencies.push(now - (JSON.parse(fields[1]!) as { t: number }).t);
        }
      }
      delivered += got;
      if (delivered === fanN * SUBSCRIBERS) done();
    })();
  }
  await new Promise((res) => setTimeout(res, 200));
  t0 = performance.now();
  for (let i = 0; i < fanN; i += 20) {
    const p = r.pipeline();
    for (let j = 0; j < 20; j++) p.xadd(key, 'MAXLEN', '~', '100000', '*', 'e', body(i + j));
    await p.exec();
    await new Promise((res) => setTimeout(res, 10));
  }
  await allIn;
  f.fanout_delivered = `${rate(delivered, performance.now() - t0)} to ${SUBSCRIBERS} nodes (paced 2,000/s)`;
  f.fanout_latency = `p50 ${us(pct(latencies, 50))} p99 ${us(pct(latencies, 99))}`;
  subs.forEach((s) => {
    s.disconnect();
  });
  // exact window: LIMIT_CLIENTS connections race on one key
  const clients = Array.from({ length: LIMIT_CLIENTS }, () => new Redis(server.url));
  for (const c of clients) c.defineCommand('window', { numberOfKeys: 1, lua: REDIS_WINDOW_LUA });
  let allowed = 0;
  t0 = performance.now();
  await Promise.all(
    clients.map(async (c) => {
      for (let i = 0; i < LIMIT_ATTEMPTS / LIMIT_CLIENTS; i++) {
        const res = await (
          c as unknown as {
            window(
              k: string,
              now: number,
              win: number,
              q: number,
              m: string,
            ): Promise<[number, number, number, number]>;
          }
        ).window('bench:win', 0, WINDOW_MS, QUOTA, 'take');
        if (res[0] >= 0) allowed++;
      }
    }),
  );
  f.window =
    `${rate(LIMIT_ATTEMPTS, performance.now() - t0)} decisions, ${allowed} of ${LIMIT_ATTEMPTS} allowed ` +
    `(quota ${QUOTA}), 0 retries (one Lua call each)`;
  clients.forEach((c) => {
    c.disconnect();
  });
  // live-state KV: one hash, pipelined HSET, HGETALL snapshot
  t0 = performance.now();
  const p = r.pipeline();
  for (let i = 0; i < KV_ENTRIES; i++) p.hset('bench:live', `v${i}`, body(i));
  await p.exec();
  f.kv_put = rate(KV_ENTRIES, performance.now() - t0);
  t0 = performance.now();
  const snap = await r.hgetall('bench:live');
  f.kv_snapshot = `${Object.keys(snap).length} entries in ${(performance.now() - t0).toFixed(1)} ms`;
  // pub/sub one-way latency, one message at a time
  const sub = new Redis(server.url);
  await sub.subscribe('bench:ping');
  const lat: number[] = [];
  let resolveOne!: () => void;
  sub.on('message', (_ch, msg: string) => {
    lat.push(performance.now() - Number(msg));
    resolveOne();
  });
  for (let i = 0; i < PINGS; i++) {
    const got = new Promise<void>((res) => {
      resolveOne = res;
    });
    await r.publish('bench:ping', String(performance.now()));
    await got;
  }
  f.pubsub_latency = `p50 ${us(pct(lat, 50))} p99 ${us(pct(lat, 99))}`;
  sub.disconnect();
  r.disconnect();
  return f;
}

async function natsJobs(server: BrokerServer): Promise<Figures> {
  const f: Figures = {};
  const nc: NatsConnection = await connect({ servers: server.url });
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: 'BENCH', subjects: ['bench.log'], max_msgs: 100_000 });
  const js: JetStreamClient = jetstream(nc);
  const enc = new TextEncoder();
  const dec = new TextDecoder();
  // append: 100 acknowledged publishes in flight at a time
  let t0 = performance.now();
  for (let i = 0; i < EVENTS; i += 100) {
    const batch: Promise<unknown>[] = [];
    for (let j = i; j < Math.min(EVENTS, i + 100); j++) batch.push(js.publish('bench.log', enc.encode(body(j))));
    await Promise.all(batch);
  }
  f.append = rate(EVENTS, performance.now() - t0);
  // read from an offset: an ordered consumer from the middle
  t0 = performance.now();
  const oc = await js.consumers.get('BENCH', {
    deliver_policy: DeliverPolicy.StartSequence,
    opt_start_seq: EVENTS / 2 + 1,
  });
  let read = 0;
  const msgs = await oc.consume({ max_messages: 1000 });
  for await (const m of msgs) {
    read++;
    if (m.info.pending === 0) break;
  }
  f.read_from_offset = rate(read, performance.now() - t0);
  // fan-out: N nodes, each an ordered consumer of new messages
  const fanN = 2_000;
  const latencies: number[] = [];
  let delivered = 0;
  let done!: () => void;
  const allIn = new Promise<void>((res) => {
    done = res;
  });
  const conns = await Promise.all(Array.from({ length: SUBSCRIBERS }, () => connect({ servers: server.url })));
  await Promise.all(
    conns.map(async (c) => {
      const consumer = await jetstream(c).consumers.get('BENCH', { deliver_policy: DeliverPolicy.New });
      const it = await consumer.consume({ max_messages: 1000 });
      void (async () => {
        let got = 0;
        for await (const m of it) {
          latencies.push(performance.now() - (JSON.parse(dec.decode(m.data)) as { t: number }).t);
          if (++got === fanN) break;
        }
        delivered += got;
        if (delivered === fanN * SUBSCRIBERS) done();
      })();
    }),
  );
  await new Promise((res) => setTimeout(res, 300));
  t0 = performance.now();
  for (let i = 0; i < fanN; i += 20) {
    const batch: Promise<unknown>[] = [];
    for (let j = 0; j < 20; j++) batch.push(js.publish('bench.log', enc.encode(body(i + j))));
    await Promise.all(batch);
    await new Promise((res) => setTimeout(res, 10));
  }
  await allIn;
  f.fanout_delivered = `${rate(delivered, performance.now() - t0)} to ${SUBSCRIBERS} nodes (paced 2,000/s)`;
  f.fanout_latency = `p50 ${us(pct(latencies, 50))} p99 ${us(pct(latencies, 99))}`;
  await Promise.all(conns.map((c) => c.close()));
  // exact window in KV: read, trim, compare-and-set on the revision, retry on conflict
  const kvm = new Kvm(nc);
  await kvm.create('benchwin', { history: 1 });
  const clients = await Promise.all(Array.from({ length: LIMIT_CLIENTS }, () => connect({ servers: server.url })));
  let allowed = 0;
  let retries = 0;
  t0 = performance.now();
  await Promise.all(
    clients.map(async (c) => {
      const kv = await new Kvm(c).open('benchwin');
      for (let i = 0; i < LIMIT_ATTEMPTS / LIMIT_CLIENTS; i++) {
        for (;;) {
          const now = Date.now();
          const entry = await kv.get('k');
          const stamps = entry?.value.length
            ? (JSON.parse(dec.decode(entry.value)) as number[]).filter((s) => s > now - WINDOW_MS)
            : [];
          if (stamps.length >= QUOTA) break;
          stamps.push(now);
          try {
            if (entry) await kv.update('k', enc.encode(JSON.stringify(stamps)), entry.revision);
            else await kv.create('k', enc.encode(JSON.stringify(stamps)));
            allowed++;
            break;
          } catch {
            retries++;
          }
        }
      }
    }),
  );
  f.window =
    `${rate(LIMIT_ATTEMPTS, performance.now() - t0)} decisions, ${allowed} of ${LIMIT_ATTEMPTS} allowed ` +
    `(quota ${QUOTA}), ${retries} CAS retries`;
  await Promise.all(clients.map((c) => c.close()));
  // live-state KV: put, then read every key back (what an edge does at start)
  const live = await kvm.create('benchlive', { history: 1 });
  t0 = performance.now();
  for (let i = 0; i < KV_ENTRIES; i += 100) {
    const batch: Promise<unknown>[] = [];
    for (let j = i; j < i + 100; j++) batch.push(live.put(`v${j}`, enc.encode(body(j))));
    await Promise.all(batch);
  }
  f.kv_put = rate(KV_ENTRIES, performance.now() - t0);
  t0 = performance.now();
  let n = 0;
  const w = await live.watch({ include: 'lastValue' as never });
  for await (const e of w) {
    n++;
    if (e.delta === 0) break;
  }
  f.kv_snapshot = `${n} entries in ${(performance.now() - t0).toFixed(1)} ms`;
  // core pub/sub one-way latency
  const sub = nc.subscribe('bench.ping');
  const lat: number[] = [];
  const pub = await connect({ servers: server.url });
  const iter = sub[Symbol.asyncIterator]();
  for (let i = 0; i < PINGS; i++) {
    pub.publish('bench.ping', String(performance.now()));
    const m = await iter.next();
    lat.push(performance.now() - Number(dec.decode(m.value!.data)));
  }
  f.pubsub_latency = `p50 ${us(pct(lat, 50))} p99 ${us(pct(lat, 99))}`;
  await pub.close();
  await nc.close();
  void AckPolicy;
  return f;
}

async function main(): Promise<void> {
  for (const kind of ['redis', 'nats'] as const) {
    const missing = brokerMissing(kind);
    if (missing) throw new Error(missing);
  }
  out(
    `# bench/broker: ${EVENTS} events of ~${PAYLOAD.length + 40} B, ${SUBSCRIBERS} subscriber nodes, ` +
      `${LIMIT_CLIENTS} limiter clients, node ${process.version}`,
  );
  out(`# ${brokerVersion('redis')}`);
  out(`# ${brokerVersion('nats')}`);
  const results: Array<[string, Figures]> = [];
  for (const kind of ['redis', 'nats'] as const) {
    const server = await startBroker(kind);
    try {
      results.push([kind, kind === 'redis' ? await redisJobs(server) : await natsJobs(server)]);
    } finally {
      await server.close();
    }
  }
  const jobs = Object.keys(results[0]![1]);
  out(`| job | ${results.map(([k]) => k).join(' | ')} |`);
  out(`|---|${results.map(() => '---').join('|')}|`);
  for (const job of jobs) out(`| ${job} | ${results.map(([, f]) => f[job] ?? '').join(' | ')} |`);
}

await main();
