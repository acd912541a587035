// Baseline: a minimal raw uWebSockets.js SSE broadcaster, one corked write per event per client,
// with the drain handler every uWS SSE server needs (pitfalls 4 and 5) and nothing else.
import uWS, { listenLoopback, type HttpResponse } from './uws.ts';
import { announce, benchEnv, epochMicros, padFor, startPublisher, WriteTrace } from './publisher.ts';

const { rate, eventBytes } = benchEnv();
const clients = new Set<HttpResponse>();
const build = (seq: number, ts: number, pad: string) =>
  `id: ${seq}\nevent: vehicle.position\ndata: {"seq":${seq},"ts":${ts},"pad":"${pad}"}\n\n`;
const pad = padFor(eventBytes, (p) => build(0, Date.now() * 1000, p));

const app = uWS.App().get('/*', (res) => {
  const entry = res;
  res.onAborted(() => clients.delete(entry));
  res.onWritable(() => (clients.has(entry) ? entry.write(':\n\n') : true));
  res
    .writeStatus('200 OK')
    .writeHeader('Content-Type', 'text/event-stream; charset=utf-8')
    .writeHeader('Cache-Control', 'no-store')
    .write('retry: 3000\n\n');
  clients.add(res);
});

const port = await listenLoopback(app);
const trace = new WriteTrace();
const stop = startPublisher(rate, (batch) => {
  for (const { seq, ts } of batch) {
    const bytes = Buffer.from(build(seq, ts, pad));
    for (const res of clients) res.cork(() => res.write(bytes));
    trace.record(ts, epochMicros());
  }
});
announce(port, () => {
  stop();
  trace.save();
});
