// scratch: real uWS + UwsSseSink: slow reader cut, fast reader unaffected, graceful end drains
import net from 'node:net';
import uWS, { listenLoopback } from '../bench/fanout/uws.ts';
import { UwsSseSink } from '../bench/fanout/uws-sse-sink.ts';
import { StreamHub } from '../stream/hub.ts';
import { MemoryEventLog } from '../stream/event-log.ts';
import type { Subscription } from '../stream/subscriber.ts';

const hub = new StreamHub({ bufferBytes: 256 * 1024, pingIntervalMs: 15000, maxConnectionMs: 3600000, coalesceMs: 0 }, new MemoryEventLog({ capacity: 100000 }));
const reasons: string[] = [];
const app = uWS.App().get('/s', (res, req) => {
  const lastEventId = req.getHeader('last-event-id') || null;
  const sink = new UwsSseSink(res);
  let sub: Subscription | null = null;
  res.onAborted(() => { sink.aborted(); sub?.close(); });
  const plan = hub.openEvents({ filter: {}, lastEventId });
  sink.writeHead('200 OK', plan.headers);
  sub = plan.start(sink);
  sub.onClose((r) => reasons.push(r));
});
const port = await listenLoopback(app);
function client(read: boolean) {
  const s = net.connect(port, '127.0.0.1');
  s.write('GET /s HTTP/1.1\r\nHost: x\r\n\r\n');
  const st = { bytes: 0, events: 0, ended: false, closed: false, s };
  if (!read) s.pause();
  s.on('data', (d) => { st.bytes += d.length; st.events += (d.toString().match(/event: vehicle/g) ?? []).length; if (d.toString().includes('\r\n0\r\n\r\n')) st.ended = true; });
  s.on('close', () => { st.closed = true; });
  s.on('error', () => {});
  return st;
}
const slow = client(false);
const fast = Array.from({ length: 20 }, () => client(true));
await new Promise((r) => setTimeout(r, 300));
const pad = 'x'.repeat(1000);
let n = 0;
for (let round = 0; round < 200; round++) {
  const batch = Array.from({ length: 50 }, () => ({ type: 'vehicle.position' as const, at_ms: Date.now(), modes: ['bus' as const], routes: ['1'], data: { n: n++, pad } }));
  hub.publish(batch);
  await new Promise((r) => setTimeout(r, 5));
}
await new Promise((r) => setTimeout(r, 500));
console.log('published', n, 'reasons', JSON.stringify(reasons));
slow.s.resume(); await new Promise((r) => setTimeout(r, 300)); console.log('slow closed', slow.closed, 'slow bytes', slow.bytes);
console.log('fast events min', Math.min(...fast.map((f) => f.events)), 'max', Math.max(...fast.map((f) => f.events)));
// graceful end with a paused client holding backlog: resume reading, expect terminating chunk
const paused = client(false);
await new Promise((r) => setTimeout(r, 100));
const batch = Array.from({ length: 100 }, () => ({ type: 'vehicle.position' as const, at_ms: Date.now(), modes: ['bus' as const], routes: ['1'], data: { n: n++, pad } }));
hub.publish(batch);
await new Promise((r) => setTimeout(r, 100));
hub.close();
paused.s.resume();
await new Promise((r) => setTimeout(r, 500));
console.log('paused client after end: events', paused.events, 'ended', paused.ended, 'reasons', JSON.stringify(reasons.slice(-3)));
console.log('fast ended', fast.every((f) => f.ended));
process.exit(0);
