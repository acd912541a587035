// A real loopback HTTP server that misbehaves on request, for the fetcher's and pipeline's fault
// tests. Each behaviour is what a broken feed host actually does on the wire.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Fault = 'ok' | 'timeout' | 'status500' | 'truncated' | 'huge' | 'huge_chunked' | 'slow' | 'etag';

export interface FaultServer {
  url(path?: string): string;
  /** requests seen, with the conditional headers they carried */
  requests: { path: string; ifNoneMatch: string | null; ifModifiedSince: string | null }[];
  close(): Promise<void>;
}

export async function startFaultServer(
  body: Uint8Array,
  plan: (req: IncomingMessage, n: number) => Fault,
): Promise<FaultServer> {
  const requests: FaultServer['requests'] = [];
  const timers = new Set<NodeJS.Timeout>();
  const later = (ms: number, fn: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      fn();
    }, ms);
    timers.add(timer);
  };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    requests.push({
      path: req.url ?? '/',
      ifNoneMatch: (req.headers['if-none-match'] as string | undefined) ?? null,
      ifModifiedSince: (req.headers['if-modified-since'] as string | undefined) ?? null,
    });
    const fault = plan(req, requests.length);
    switch (fault) {
      case 'timeout':
        return; // never answers; the client's deadline must end it
      case 'status500':
        res.writeHead(500, { 'content-type': 'text/plain' }).end('internal error');
        return;
      case 'truncated':
        // promise more than is sent, then drop the connection
        res.writeHead(200, { 'content-type': 'application/x-protobuf', 'content-length': String(body.length + 1000) });
        res.write(body.subarray(0, Math.min(100, body.length)), () => later(20, () => res.socket?.destroy()));
        return;
      case 'huge':
        res.writeHead(200, { 'content-length': String(100 * 1024 * 1024) });
        res.write(Buffer.alloc(64 * 1024));
        return;
      case 'huge_chunked': {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        const chunk = Buffer.alloc(64 * 1024, 7);
        let sent = 0;
        const pump = () => {
          if (res.destroyed || sent > 100) return res.end();
          sent++;
          res.write(chunk) ? setImmediate(pump) : res.once('drain', pump);
        };
        pump();
        return;
      }
      case 'slow': {
        res.writeHead(200, { 'content-length': String(body.length) });
        let offset = 0;
        const trickle = () => {
          if (res.destroyed || offset >= body.length) return;
          res.write(body.subarray(offset, offset + 1));
          offset++;
          later(50, trickle);
        };
        trickle();
        return;
      }
      case 'etag': {
        const etag = '"v1"';
        if (req.headers['if-none-match'] === etag) {
          res.writeHead(304).end();
          return;
        }
        res.writeHead(200, { etag, 'last-modified': 'Tue, 07 Nov 2023 10:00:00 GMT' }).end(body);
        return;
      }
      default:
        res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end(body);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (path = '/feed') => `http://127.0.0.1:${port}${path}`,
    requests,
    close: async () => {
      for (const timer of timers) clearTimeout(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
