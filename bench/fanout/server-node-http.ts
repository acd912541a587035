// Baseline: a minimal node:http SSE broadcaster (one write per event per client).
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { announce, benchEnv, padFor, startPublisher } from './publisher.ts';

const { rate, eventBytes } = benchEnv();
const clients = new Set<ServerResponse>();
const build = (seq: number, ts: number, pad: string) =>
  `id: ${seq}\nevent: vehicle.position\ndata: {"seq":${seq},"ts":${ts},"pad":"${pad}"}\n\n`;
const pad = padFor(eventBytes, (p) => build(0, Date.now() * 1000, p));

const server = createServer((req, res) => {
  res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-store' });
  res.write('retry: 3000\n\n');
  clients.add(res);
  req.on('close', () => clients.delete(res));
});
server.keepAliveTimeout = 0;
server.requestTimeout = 0;

server.listen({ host: '127.0.0.1', port: 0, backlog: 4096 }, () => {
  const stop = startPublisher(rate, (batch) => {
    for (const { seq, ts } of batch) {
      const bytes = Buffer.from(build(seq, ts, pad));
      for (const res of clients) res.write(bytes);
    }
  });
  announce((server.address() as AddressInfo).port, stop);
});
