// Soak: a day of a large real feed through the real service, accelerated. The MBTA all-mode trip
// updates capture (1,479 trips, 32k stop time updates) is replayed every 10 s of a virtual
// clock, as fast as the machine goes: the header timestamp at the virtual now, predictions and
// service dates moved with it by whole hours, and on each replay about 10% of the trips get a new
// delay from a random stop on (the others stay as they were, as between two real polls). Each replay goes through the
// real pipeline
// (ingestSnapshot: normalize → live state → events → history in DuckDB), the DuckDB event log,
// the hub and a real uWS server with SSE clients: readers on /api/v1/events/stream and
// /status/stream, and clients on both that stop reading (reopened whenever the server cuts them).
// Every SOAK_EVERY polls it prints the database file size, the event log (memory and table),
// heap, RSS and the send budget; after warm-up they should stay flat, except the history tables,
// which keep what changed until retention_days (their growth is printed apart: MiB per virtual
// hour and history rows per poll).
//
//   npm run bench:soak                       8,640 polls (a day at 10 s)
//   SOAK_POLLS=2000 SOAK_EVERY=250 npm run bench:soak
//   TRANSIT_FIXTURES_REAL=/path/to/fixtures-real   when ../shared/fixtures-real is elsewhere
//   SOAK_READERS (4), SOAK_STALLED (2), SOAK_DIR (keep the database there)
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openRuntime } from '../app/runtime.ts';
import { openStreaming } from '../app/fanout.ts';
import { parseConfig } from '../core/config.ts';
import type { DomainEvent } from '../core/events.ts';
import { createLogger } from '../core/logger.ts';
import { localDate } from '../core/dates.ts';
import { createApi } from '../app/api.ts';
import { createKey } from '../accounts/keys.ts';
import { statusRoutes } from '../status/routes.ts';
import { startServer } from '../http/server.ts';
import { createStatus } from '../status/index.ts';
import { decodeFeedMessage, feedMessageCodec } from '../pipeline/decode.ts';
import { Db, dbOptions } from '../store/db.ts';
import { DuckDbEventLog } from '../stream/duckdb-event-log.ts';
import { sendBudgetFromConfig } from '../stream/send-budget.ts';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const FIXTURES = process.env.TRANSIT_FIXTURES_REAL ?? join(REPO, '..', 'shared', 'fixtures-real');
const CAPTURE = join(FIXTURES, 'mbta', 'tripupdates-2022-02-01-canceled.pb');
const POLLS = Number(process.env.SOAK_POLLS ?? 8_640);
const EVERY = Number(process.env.SOAK_EVERY ?? Math.max(1, Math.round(POLLS / 24)));
const READERS = Number(process.env.SOAK_READERS ?? 4);
const STALLED = Number(process.env.SOAK_STALLED ?? 2);
const INTERVAL_MS = 10_000;
const TZ = 'America/New_York';
const MiB = 2 ** 20;

if (!existsSync(CAPTURE)) {
  console.log(`skipping: ${CAPTURE} is absent (set TRANSIT_FIXTURES_REAL)`);
  process.exit(0);
}

// ---- the replayed feed ----------------------------------------------------------------------

interface Stu {
  arrival?: { time?: number };
  departure?: { time?: number };
}
interface Entity {
  trip_update?: { timestamp?: number; trip: { start_date?: string }; stop_time_update?: Stu[] };
  vehicle?: { timestamp?: number };
}
interface Message {
  header: { timestamp: number };
  entity: Entity[];
}

const codec = feedMessageCodec();
const decoded = decodeFeedMessage(readFileSync(CAPTURE));
if (!decoded.ok) throw new Error(`${CAPTURE}: ${decoded.error}`);
const message = codec.toObject(decoded.message as never, { longs: Number }) as Message;
const captureS = message.header.timestamp;
// the capture's times, kept apart so each replay is the capture shifted, plus each trip's offset
const baseTimes = message.entity.map((e) =>
  (e.trip_update?.stop_time_update ?? []).map((u) => [u.arrival?.time, u.departure?.time] as const),
);
const baseStamps = message.entity.map((e) => [e.trip_update?.timestamp, e.vehicle?.timestamp] as const);
/** per trip: from which stop its current delay applies, and how much (s); most trips keep theirs between polls */
const offsets = message.entity.map(() => ({ from: 0, delayS: 0 }));
let seed = 42;
const random = () => {
  seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
  return seed / 2 ** 31;
};

/**
 * The capture at `nowMs`: the header at now; predictions moved by whole hours, so between two
 * polls a trip keeps its times unless its delay changes (as in a live feed), and once an hour
 * the whole capture moves on, as if the fleet had turned over.
 */
function replay(nowMs: number): Uint8Array {
  const nowS = Math.floor(nowMs / 1000);
  const shift = Math.floor((nowS - captureS) / 3_600) * 3_600;
  const startDate = localDate(nowMs, TZ).replaceAll('-', '');
  message.header.timestamp = nowS;
  message.entity.forEach((entity, i) => {
    const tu = entity.trip_update;
    const [tuStamp, vehicleStamp] = baseStamps[i]!;
    if (entity.vehicle && vehicleStamp) entity.vehicle.timestamp = vehicleStamp + shift;
    if (!tu) return;
    if (tuStamp) tu.timestamp = tuStamp + shift;
    if (tu.trip.start_date) tu.trip.start_date = startDate;
    const updates = tu.stop_time_update ?? [];
    // about one trip in ten moves: a new delay from a random stop on
    if (updates.length && random() < 0.1)
      offsets[i] = { from: Math.floor(random() * updates.length), delayS: Math.round((random() - 0.3) * 240) };
    const { from, delayS } = offsets[i]!;
    updates.forEach((u, k) => {
      const [arrival, departure] = baseTimes[i]![k]!;
      const extra = k >= from ? delayS : 0;
      if (u.arrival && arrival) u.arrival.time = arrival + shift + extra;
      if (u.departure && departure) u.departure.time = departure + shift + extra;
    });
  });
  return codec.encode(codec.fromObject(message)).finish();
}

// ---- the service -----------------------------------------------------------------------------

const dir = process.env.SOAK_DIR ?? mkdtempSync(join(tmpdir(), 'soak-'));
const dbPath = join(dir, 'soak.duckdb');
const config = parseConfig({
  host: '127.0.0.1',
  port: 0,
  db_path: dbPath,
  // never polled: every body comes from replay() through ingestSnapshot
  feeds: [{ id: 'mbta-tu', kind: 'gtfs-rt', url: 'file:///dev/null', interval_s: INTERVAL_MS / 1000, mode: 'bus' }],
  exports: { enabled: false, dir: join(dir, 'exports') },
  snapshot: { enabled: false, path: join(dir, 'snapshot.duckdb') },
  signing_secret: 'soak-secret-0123456789abcdef',
});
const virtual = { now: Date.parse('2026-11-23T05:00:00Z') };
const clock = () => virtual.now;
// warnings and errors only, on stderr: the figures go to stdout
const log = createLogger({ level: 'warn', pretty: false });
const runtime = await openRuntime(config, { now: clock, log });
const { db, bus, pipeline } = runtime;
const streaming = await openStreaming({ db, bus, live: pipeline.state, config, clock, log });
const status = await createStatus({ db, live: pipeline.state, config, bus, hub: streaming.hub, log });
const api = await createApi({
  db,
  live: pipeline.state,
  config,
  clock,
  log,
  streams: streaming.provider,
  routes: [...streaming.routes, ...statusRoutes(status)],
});
streaming.useMeter(api.meter);
const budget = sendBudgetFromConfig(config.sse);
const server = await startServer({
  handler: api.handler,
  host: '127.0.0.1',
  port: 0,
  streamBufferBytes: config.sse.buffer_bytes,
  sendBudget: budget,
});
status.setOpenStreams(() => server.openStreams);
await status.start();

// per-poll figures of what the pipeline published
let events = 0;
let arrivalEvents = 0;
let arrivalBytes = 0;
bus.subscribe((batch: readonly DomainEvent[]) => {
  events += batch.length;
  for (const e of batch) {
    if (e.type !== 'arrival.updated') continue;
    arrivalEvents++;
    arrivalBytes += JSON.stringify(e.data).length;
  }
});

// ---- clients ---------------------------------------------------------------------------------

interface Client {
  socket: Socket;
  bytes: number;
  closed: boolean;
  lastId: string | null;
}
const keys = await Promise.all(
  Array.from({ length: READERS + STALLED }, () => createKey(db, { plan: 'max', name: 'soak' })),
);
const ID_LINE = Buffer.from('\nid: ');
function client(path: string, key: string | null, reads: boolean, lastId: string | null = null): Client {
  const socket = connect(server.port, '127.0.0.1');
  const c: Client = { socket, bytes: 0, closed: false, lastId };
  socket.on('error', () => undefined);
  socket.on('close', () => {
    c.closed = true;
  });
  socket.on('data', (chunk: Buffer) => {
    c.bytes += chunk.length;
    // a stalled client stops reading once the stream is open
    if (!reads) return void socket.pause();
    // the last complete `id:` line, to resume from as EventSource would
    const at = chunk.lastIndexOf(ID_LINE);
    const eol = at < 0 ? -1 : chunk.indexOf(10, at + ID_LINE.length);
    if (eol > 0) c.lastId = chunk.subarray(at + ID_LINE.length, eol).toString('latin1');
  });
  const headers = `${key ? `Authorization: Bearer ${key}\r\n` : ''}${c.lastId ? `Last-Event-ID: ${c.lastId}\r\n` : ''}`;
  socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${headers}Accept: text/event-stream\r\n\r\n`);
  return c;
}
const readerPaths = [
  ...keys.slice(0, READERS).map((k) => ['/api/v1/events/stream', k.key] as const),
  ['/status/stream', null] as const,
];
let readers = readerPaths.map(([path, key]) => client(path, key, true));
const stalledPaths = [
  ...keys.slice(READERS).map((k) => ['/api/v1/events/stream', k.key] as const),
  ['/status/stream', null] as const,
];
let stalled = stalledPaths.map(([path, key]) => client(path, key, false));
let reopened = 0;
let reconnected = 0;
/** bytes of reader 0 over all its connections */
let readBefore = 0;
function reopenCut(): void {
  stalled = stalled.map((c, i) => {
    if (!c.closed) return c;
    reopened++;
    c.socket.destroy();
    return client(stalledPaths[i]![0], stalledPaths[i]![1], false);
  });
  // readers reconnect and resume by id (the server ends streams too: lifetime, a stall while
  // this process was busy); the status stream has no resume
  readers = readers.map((c, i) => {
    if (!c.closed) return c;
    reconnected++;
    if (i === 0) readBefore += c.bytes;
    return client(readerPaths[i]![0], readerPaths[i]![1], true, c.lastId);
  });
}

// ---- the run ---------------------------------------------------------------------------------

const fileBytes = (path: string) => (existsSync(path) ? statSync(path).size : 0);
async function tableFigures(): Promise<{
  logRows: number;
  logBytes: number;
  history: number;
  historyBytes: number;
  duckdb: number;
}> {
  const [log] = await db.all<{ n: bigint; b: bigint | null }>(
    'SELECT count(*) AS n, sum(length(payload)) AS b FROM event_log',
  );
  // history rows: what the three change-only tables hold (store/SCHEMA.md, Change-only history)
  // and the stop events written beside them
  const [arr] = await db.all<{ n: bigint }>(
    `SELECT (SELECT count(*) FROM arrivals) + (SELECT count(*) FROM trip_observations)
       + (SELECT count(*) FROM vehicle_positions) + (SELECT count(*) FROM stop_events) AS n`,
  );
  // the blocks the history tables' checkpointed rows occupy (the file also holds the event log,
  // whose churn leaves free blocks behind, and rows still in the WAL)
  const [blocks] = await db.all<{ b: bigint | null }>(
    `SELECT count(DISTINCT block_id) * (SELECT any_value(block_size) FROM pragma_database_size()) AS b FROM (
       SELECT block_id FROM pragma_storage_info('arrivals') UNION ALL
       SELECT block_id FROM pragma_storage_info('trip_observations') UNION ALL
       SELECT block_id FROM pragma_storage_info('vehicle_positions') UNION ALL
       SELECT block_id FROM pragma_storage_info('stop_events')) WHERE block_id >= 0`,
  );
  // DuckDB's buffer pool and other allocations: part of RSS, bounded by store.memory_limit
  const [mem] = await db.all<{ b: bigint | null }>('SELECT sum(memory_usage_bytes) AS b FROM duckdb_memory()');
  return {
    logRows: Number(log!.n),
    logBytes: Number(log!.b ?? 0),
    history: Number(arr!.n),
    historyBytes: Number(blocks!.b ?? 0),
    duckdb: Number(mem!.b ?? 0),
  };
}
const mb = (n: number) => (n / MiB).toFixed(1);
const pad = (s: string | number, n: number) => String(s).padStart(n);

console.log(
  `soak: ${POLLS} polls of ${CAPTURE.replace(`${FIXTURES}/`, '')} every ${INTERVAL_MS / 1000} s of virtual time ` +
    `(${((POLLS * INTERVAL_MS) / 3_600_000).toFixed(1)} h), ` +
    `${READERS} + 1 reading and ${stalledPaths.length} stalled SSE clients, database ${dbPath}`,
);
console.log(
  `limits: event log ${mb(config.sse.event_log_max_bytes)} MiB / ${config.sse.event_log_max_age_s} s / ` +
    `${config.sse.event_log_size} events, ` +
    `send budget ${mb(config.sse.send_budget_bytes)} MiB, stall ${config.sse.stall_timeout_s} s, DuckDB memory_limit ` +
    `${config.store.memory_limit}`,
);
console.log(
  [
    pad('poll', 5),
    pad('virtual', 6),
    pad('ms/poll', 7),
    pad('ev/poll', 7),
    pad('arr KB/poll', 11),
    pad('db MiB', 7),
    pad('wal MiB', 7),
    pad('hist rows', 10),
    pad('log MiB', 7),
    pad('log ev', 7),
    pad('tbl rows', 8),
    pad('tbl MiB', 7),
    pad('heap MiB', 8),
    pad('duckdb MiB', 10),
    pad('rss MiB', 7),
    pad('held KiB', 8),
    pad('cut b/s/slow', 12),
    pad('read MiB', 8),
  ].join(' '),
);

const started = performance.now();
let windowStart = performance.now();
let windowEvents = 0;
let windowArrivalBytes = 0;
const rows: Array<{
  poll: number;
  db: number;
  heap: number;
  rss: number;
  log: number;
  tbl: number;
  hist: number;
  histBytes: number;
  duckdb: number;
}> = [];
for (let poll = 1; poll <= POLLS; poll++) {
  virtual.now += INTERVAL_MS;
  const result = await pipeline.ingestSnapshot('mbta-tu', replay(virtual.now), { observed_ms: virtual.now });
  if (result.status !== 'ok') console.error(`poll ${poll}: ${result.status} ${result.error ?? ''}`);
  // let the hub flush and the sockets drain before the next replay
  await new Promise((r) => setImmediate(r));
  await new Promise((r) => setTimeout(r, 1));
  if (poll % 10 === 0) reopenCut();
  if (poll % EVERY !== 0 && poll !== POLLS) continue;
  const t = await tableFigures();
  // the heap that is retained, not what the next collection would free (run with --expose-gc)
  (globalThis as { gc?: () => void }).gc?.();
  const mem = process.memoryUsage();
  const b = budget.stats();
  const n = poll - (rows.length ? rows[rows.length - 1]!.poll : 0);
  const msPerPoll = (performance.now() - windowStart) / n;
  const evPerPoll = (events - windowEvents) / n;
  const arrKb = (arrivalBytes - windowArrivalBytes) / n / 1024;
  const row = {
    poll,
    db: fileBytes(dbPath),
    heap: mem.heapUsed,
    rss: mem.rss,
    log: streaming.eventLog.bytes,
    tbl: t.logBytes,
    hist: t.history,
    histBytes: t.historyBytes,
    duckdb: t.duckdb,
  };
  rows.push(row);
  console.log(
    [
      pad(poll, 5),
      pad(`${((poll * INTERVAL_MS) / 3_600_000).toFixed(1)}h`, 6),
      pad(msPerPoll.toFixed(0), 7),
      pad(evPerPoll.toFixed(0), 7),
      pad(arrKb.toFixed(0), 11),
      pad(mb(row.db), 7),
      pad(mb(fileBytes(`${dbPath}.wal`)), 7),
      pad(t.history, 10),
      pad(mb(row.log), 7),
      pad(streaming.eventLog.size, 7),
      pad(t.logRows, 8),
      pad(mb(t.logBytes), 7),
      pad(mb(mem.heapUsed), 8),
      pad(mb(t.duckdb), 10),
      pad(mb(mem.rss), 7),
      pad((b.bufferedBytes / 1024).toFixed(0), 8),
      pad(`${b.cutForBudget}/${b.cutForStall}/${streaming.hub.stats().closed.slow}`, 12),
      pad(mb(readBefore + readers[0]!.bytes), 8),
    ].join(' '),
  );
  windowStart = performance.now();
  windowEvents = events;
  windowArrivalBytes = arrivalBytes;
}
const elapsedS = (performance.now() - started) / 1000;

// shut down like serve, then time what a restart reads back
const closedByReason = streaming.hub.stats().closed;
streaming.endStreams();
for (const c of [...readers, ...stalled]) c.socket.destroy();
await server.close();
await status.stop();
await pipeline.stop();
await streaming.close();
await runtime.close();
const reopenStarted = performance.now();
const again = await Db.open(dbPath, dbOptions(config.store));
const openMs = performance.now() - reopenStarted;
const restored = await DuckDbEventLog.open(again, {
  capacity: config.sse.event_log_size,
  maxBytes: config.sse.event_log_max_bytes,
  maxAgeMs: config.sse.event_log_max_age_s * 1000,
  now: clock,
});
const reloadMs = performance.now() - reopenStarted - openMs;
await restored.close();
await again.close();

// flat after warm-up: the second half against the end of the first quarter
const at = (share: number) => rows[Math.min(rows.length - 1, Math.max(0, Math.round(rows.length * share) - 1))]!;
const warm = at(0.25);
const end = rows[rows.length - 1]!;
const growth = (key: 'db' | 'heap' | 'rss' | 'log' | 'tbl' | 'duckdb') => `${mb(warm[key])} → ${mb(end[key])} MiB`;
console.log(
  `\n${POLLS} polls in ${elapsedS.toFixed(0)} s (${((elapsedS * 1000) / POLLS).toFixed(0)} ms per poll); ` +
    `${events} events, ` +
    `${arrivalEvents} arrival.updated averaging ` +
    `${(arrivalBytes / Math.max(1, arrivalEvents)).toFixed(0)} bytes of data`,
);
console.log(
  `from poll ${warm.poll} to ${end.poll}: event log in memory ${growth('log')}, its table ${growth('tbl')}, heap ` +
    `${growth('heap')}, ` +
    `DuckDB ${growth('duckdb')}, RSS ${growth('rss')}`,
);
console.log(
  `database file ${growth('db')}: history rows ${warm.hist} → ${end.hist} ` +
    `(${((end.db - warm.db) / Math.max(1, end.hist - warm.hist)).toFixed(1)} bytes per history row; they stay until ` +
    `retention_days.arrivals)`,
);
// the store's growth with service: per virtual hour and per poll, after warm-up (the first rows
// of every trip and stop are behind), and over the whole run
const hours = ((end.poll - warm.poll) * INTERVAL_MS) / 3_600_000;
const polls = Math.max(1, end.poll - warm.poll);
// The file's size swings by tens of MiB as checkpoints free and reuse blocks (the event log's
// table is rewritten as it turns over), so two samples' difference says more about where each
// fell in that cycle than about growth: the slope through every sample after warm-up does not.
const settled = rows.filter((r) => r.poll >= warm.poll);
const meanPoll = settled.reduce((a, r) => a + r.poll, 0) / settled.length;
const meanDb = settled.reduce((a, r) => a + r.db, 0) / settled.length;
const bytesPerPoll =
  settled.reduce((a, r) => a + (r.poll - meanPoll) * (r.db - meanDb), 0) /
  Math.max(
    1e-9,
    settled.reduce((a, r) => a + (r.poll - meanPoll) ** 2, 0),
  );
const pollsPerHour = 3_600_000 / INTERVAL_MS;
console.log(
  `database file growth after warm-up: ${mb(bytesPerPoll * pollsPerHour)} MiB per virtual hour (least-squares ` +
    `slope through ${settled.length} samples, polls ${warm.poll}–${end.poll}); between those two samples alone ` +
    `${mb((end.db - warm.db) / Math.max(hours, 1e-9))} MiB per virtual hour`,
);
console.log(
  `history growth from poll ${warm.poll} to ${end.poll}: ` +
    `${((end.hist - warm.hist) / polls).toFixed(0)} history rows per poll (arrivals, trip_observations, ` +
    `vehicle_positions, stop_events), ` +
    `their checkpointed blocks ${mb((end.histBytes - warm.histBytes) / Math.max(hours, 1e-9))} MiB per virtual hour ` +
    `(${((end.histBytes - warm.histBytes) / Math.max(1, end.hist - warm.hist)).toFixed(1)} bytes per row); ` +
    `whole run: ${(end.hist / end.poll).toFixed(0)} rows per poll, ` +
    `${mb(end.db / ((end.poll * INTERVAL_MS) / 3_600_000))} MiB per virtual hour`,
);
console.log(
  `stalled clients reopened after a cut: ${reopened}; readers reconnected: ${reconnected}; hub closes by reason: ` +
    `${JSON.stringify(closedByReason)}; restart: database opened in ${openMs.toFixed(0)} ms, ` +
    `event log of ${restored.restoredRows} events (${mb(restored.bytes)} MiB) read back in ${reloadMs.toFixed(0)} ms`,
);
console.log('(a shared machine: other agents run beside this one; figures are indicative)');
if (!process.env.SOAK_DIR) rmSync(dir, { recursive: true, force: true });
process.exit(0);
