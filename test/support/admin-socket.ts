// A plain GET on a service's admin socket (GET /metrics, what a scraper with --unix-socket does).
import { request } from 'node:http';
import { socketAddress } from '../../admin/socket-path.ts';

export function adminGet(path: string, urlPath: string): Promise<{ status: number; body: string }> {
  const socket = socketAddress(path);
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request({ socketPath: socket.address, method: 'GET', path: urlPath }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  }).finally(() => socket.release());
}
