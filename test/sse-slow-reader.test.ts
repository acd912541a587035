// One client that never reads and 100 that do, on the same event stream of the real server: the
// readers get every event while the slow one's buffer fills, and the slow one is cut (by the
// hub's bound, not by uWS's idle timeout) so it holds neither memory nor the others back.
import { connect, type Socket } from 'node:net';
import t from 'tap';
import { until } from './support/wait.ts';
import { seqEvent, startStreamHarness } from './support/streaming.ts';

const READERS = 100;
const BUFFER_BYTES = 64 * 1024;
const PAD = 'x'.repeat(16 * 1024);
const MARK = Buffer.from('{"tick":');

interface Reader {
  socket: Socket;
  bytes: number;
  ticks: number[];
  latencies: number[];
  status: string | null;
}

function request(port: number, key: string): Socket {
  const socket = connect(port, '127.0.0.1');
  socket.write(
    `GET /api/v1/events/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nAccept: ` +
      `text/event-stream\r\n\r\n`,
  );
  socket.on('error', () => undefined);
  return socket;
}

/** Reads everything; records each tick event ({"tick":n,"ts":ms}) and its latency. */
function reader(port: number, key: string): Reader {
  const r: Reader = { socket: request(port, key), bytes: 0, ticks: [], latencies: [], status: null };
  let carry = Buffer.alloc(0);
  r.socket.on('data', (chunk: Buffer) => {
    const now = Date.now();
    r.bytes += chunk.length;
    const buf = carry.length ? Buffer.concat([carry, chunk]) : chunk;
    if (r.status === null) r.status = buf.subarray(0, 12).toString('latin1');
    let at = 0;
    let end = 0;
    for (;;) {
      at = buf.indexOf(MARK, end);
      if (at < 0) break;
      const close = buf.indexOf(0x7d, at); // }
      if (close < 0) break;
      const { tick, ts } = JSON.parse(buf.subarray(at, close + 1).toString('latin1')) as { tick: number; ts: number };
      r.ticks.push(tick);
      r.latencies.push(now - ts);
      end = close + 1;
    }
    // a marker cut by the chunk boundary is completed by the next chunk
    const keepFrom = at >= 0 ? at : Math.max(end, buf.length - MARK.length);
    carry = Buffer.from(buf.subarray(keepFrom));
  });
  return r;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

t.test('a client that never reads is cut; 100 readers keep receiving', async (t) => {
  const h = await startStreamHarness({ config: { sse: { buffer_bytes: BUFFER_BYTES } } });
  t.teardown(() => h.close());
  // 25 concurrent streams per Max key
  const keys = await Promise.all(Array.from({ length: 5 }, () => h.key('max')));

  const slow = request(h.port, keys[0]!);
  slow.pause();
  let slowClosed = false;
  slow.on('close', () => {
    slowClosed = true;
  });
  const readers = Array.from({ length: READERS }, (_, i) => reader(h.port, keys[(i + 1) % keys.length]!));
  t.teardown(() => {
    slow.destroy();
    for (const r of readers) r.socket.destroy();
  });
  await until(
    'every stream open',
    () => h.streaming.hub.stats().subscribers === READERS + 1 && readers.every((r) => r.status !== null),
  );
  t.ok(
    readers.every((r) => r.status === 'HTTP/1.1 200'),
    'every reader got 200',
  );

  // each round: one tick and 128 KB of padding; the slow client's kernel buffers (a few MB on
  // loopback) fill first, then the hub's bound
  let tick = 0;
  let published = 0;
  const round = () => {
    h.publish(seqEvent(tick, { data: { tick, ts: Date.now() } }));
    tick++;
    for (let i = 0; i < 8; i++) h.publish(seqEvent(published++, { data: { pad: PAD } }));
  };
  const timer = setInterval(round, 20);
  t.teardown(() => clearInterval(timer));
  await until('the slow client to be cut', () => h.streaming.hub.stats().closed.slow === 1);
  const cutAtTick = tick;
  // the readers go on receiving after the cut
  await until('twenty more rounds', () => tick >= cutAtTick + 20);
  clearInterval(timer);
  await until('every reader to get every tick', () => readers.every((r) => r.ticks.length === tick));

  const stats = h.streaming.hub.stats();
  t.equal(stats.closed.slow, 1, 'cut for falling behind (not by the uWS idle timeout)');
  t.equal(stats.closed.client, 0, 'no reader was dropped');
  t.equal(stats.subscribers, READERS);
  for (const r of readers) {
    if (r.ticks.some((n, i) => n !== i))
      t.fail(`a reader missed or repeated ticks: ${r.ticks.slice(0, 20).join(',')}…`);
  }
  t.pass(`${READERS} readers got all ${tick} ticks in order`);

  // the slow client finds its connection gone as soon as it reads
  let slowBytes = 0;
  slow.on('data', (chunk: Buffer) => {
    slowBytes += chunk.length;
  });
  slow.resume();
  await until('the slow connection to close', () => slowClosed);
  const total = readers[0]!.bytes;
  t.ok(
    slowBytes < total,
    `the slow client got ${(slowBytes / 1e6).toFixed(1)} MB of the ${(total / 1e6).toFixed(1)} MB sent to readers`,
  );
  const phase = (from: number, to: number) => {
    const values = readers.flatMap((r) => r.latencies.filter((_, i) => r.ticks[i]! >= from && r.ticks[i]! < to));
    return `p50 ${percentile(values, 50)} ms, p99 ${percentile(values, 99)} ms`;
  };
  t.comment(
    `slow client cut at tick ${cutAtTick} of ${tick}. Reader latency while it filled: ${phase(0, cutAtTick)}; ` +
      `after the cut: ${phase(cutAtTick, tick)} (server, readers and publisher share one process on a shared ` +
      `machine; not asserted)`,
  );
});
