// GET /metrics for a Prometheus scraper on its own listener (metrics.port, metrics.host: loopback
// by default), apart from the API: scrapes never count against a key, never share the API's
// port with the public, and keep working when the API is saturated. A scrape is rare, so
// node:http is enough here.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { componentLogger, type Logger } from '../core/logger.ts';

export interface MetricsEndpoint {
  metricsText(): Promise<string>;
  readonly contentType: string;
}

export interface MetricsServerOptions {
  metrics: MetricsEndpoint;
  host: string;
  /** 0 picks a free port */
  port: number;
  log?: Logger;
}

export interface MetricsServer {
  readonly host: string;
  readonly port: number;
  readonly url: string;
  close(): Promise<void>;
}

export const METRICS_PATH = '/metrics';

export function startMetricsServer(options: MetricsServerOptions): Promise<MetricsServer> {
  const log = componentLogger(options.log, 'metrics');
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    // as on the API's port: no answer is ever sniffed into another type
    res.setHeader('X-Content-Type-Options', 'nosniff');
    if (path !== METRICS_PATH || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(path === METRICS_PATH ? 405 : 404, {
        'Content-Type': 'text/plain; charset=utf-8',
        ...(path === METRICS_PATH ? { Allow: 'GET, HEAD' } : {}),
      });
      res.end(path === METRICS_PATH ? 'GET only\n' : `not found: the metrics are at ${METRICS_PATH}\n`);
      return;
    }
    options.metrics.metricsText().then(
      (text) => {
        res.writeHead(200, { 'Content-Type': options.metrics.contentType, 'Cache-Control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      (err: unknown) => {
        log.error({ err }, 'collecting metrics failed');
        res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' });
        res.end('collecting metrics failed; see the service log\n');
      },
    );
  });
  // a scraper keeps its connection alive between scrapes; close() must not wait for it
  server.keepAliveTimeout = 65_000;
  return new Promise((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => {
      reject(
        new Error(
          `metrics: could not listen on ${options.host}:${options.port}: ${err.code ?? err.message}; ` +
            'change metrics.port in the config (or leave it unset to serve metrics only on the admin socket)',
          { cause: err },
        ),
      );
    });
    server.listen(options.port, options.host, () => {
      server.on('error', (err) => log.error({ err }, 'metrics listener failed'));
      const { port } = server.address() as AddressInfo;
      const host = options.host.includes(':') ? `[${options.host}]` : options.host;
      let closing: Promise<void> | null = null;
      resolve({
        host: options.host,
        port,
        url: `http://${host}:${port}${METRICS_PATH}`,
        close() {
          closing ??= new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          });
          return closing;
        },
      });
    });
  });
}
