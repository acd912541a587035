// Shared by the webhook tests and the bench: a real node:http receiver on 127.0.0.1 that
// records every request, and verification through the standardwebhooks package.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { Db } from '../../store/db.ts';
import { InMemoryEventBus, type DomainEvent } from '../../core/events.ts';
import { createWebhooks, type Webhooks } from '../../webhooks/index.ts';
import type { EndpointCreate, EndpointWithSecret } from '../../webhooks/schemas.ts';
import { SecretBox } from '../../webhooks/secret-box.ts';
import type { Resolver } from '../../webhooks/ssrf.ts';
import { rawEvent, type RawEventFields } from './events.ts';
import { ManualClock } from './clock.ts';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** epoch ms of arrival, by the receiver's clock (the wall clock unless told otherwise) */
  at: number;
}

export type Reply = (req: ReceivedRequest, res: http.ServerResponse) => void;

export const ok: Reply = (_req, res) => {
  res.writeHead(204).end();
};

export interface Receiver {
  url: string;
  port: number;
  requests: ReceivedRequest[];
  reply: Reply;
  waitFor(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startReceiver(reply: Reply = ok, now: () => number = Date.now): Promise<Receiver> {
  const waiters: { count: number; resolve: () => void }[] = [];
  const receiver: Receiver = {
    url: '',
    port: 0,
    requests: [],
    reply,
    waitFor(count, timeoutMs = 10_000) {
      if (receiver.requests.length >= count) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`receiver saw ${receiver.requests.length} of ${count} requests`)),
          timeoutMs,
        );
        waiters.push({
          count,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        });
      });
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const entry: ReceivedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: now(),
      };
      receiver.requests.push(entry);
      receiver.reply(entry, res);
      for (const w of [...waiters]) {
        if (receiver.requests.length >= w.count) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve();
        }
      }
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.port = (server.address() as AddressInfo).port;
  receiver.url = `http://127.0.0.1:${receiver.port}`;
  return receiver;
}

/** A reply that never answers: the request stays open until the receiver closes. */
export const hang: Reply = () => undefined;

function headerMap(req: ReceivedRequest): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
    const value = req.headers[name];
    if (typeof value === 'string') out[name] = value;
  }
  return out;
}

/**
 * Verifies a request with the standardwebhooks package. The package checks the timestamp
 * against Date.now() (5 minutes of tolerance); `atMs` is the receiver's notion of now, which
 * under a manual clock is the clock's time, not the wall clock's.
 */
export function verifyDelivery(secret: string, req: ReceivedRequest, atMs?: number): unknown {
  const wh = new Webhook(secret);
  if (atMs === undefined) return wh.verify(req.body, headerMap(req));
  const realNow = Date.now;
  Date.now = () => atMs;
  try {
    return wh.verify(req.body, headerMap(req));
  } finally {
    Date.now = realNow;
  }
}

/** The config section the webhook factory reads, with test-friendly bounds. */
/** The signing_secret of webhook tests; endpoint secrets are stored encrypted with a key derived from it. */
export const WEBHOOK_SIGNING_SECRET = 'webhook-test-secret-0123456789';
export const webhookSecrets = new SecretBox(WEBHOOK_SIGNING_SECRET);

export function webhookConfig(
  overrides: Partial<{ timeout_ms: number; max_concurrency: number; max_concurrency_per_endpoint: number }> = {},
) {
  return {
    signing_secret: WEBHOOK_SIGNING_SECRET,
    webhooks: {
      allow_private_targets: false,
      timeout_ms: 15_000,
      max_concurrency: 8,
      max_concurrency_per_endpoint: 2,
      ...overrides,
    },
  };
}

export interface Harness {
  db: Db;
  clock: ManualClock;
  bus: InMemoryEventBus;
  receiver: Receiver;
  webhooks: Webhooks;
  /** registers an endpoint for `keyId` at the receiver (path `/${name}`) */
  endpoint(name?: string, filters?: EndpointCreate['filters'], keyId?: string): Promise<EndpointWithSecret>;
  event(type?: DomainEvent['type'], extra?: RawEventFields): DomainEvent;
  deliveries(): Promise<Record<string, unknown>[]>;
  attempts(): Promise<Record<string, unknown>[]>;
}

/** A webhooks component on an in-memory DuckDB with a manual clock and a loopback receiver. */
export async function harness(
  t: { teardown(fn: () => unknown): void },
  reply: Reply = ok,
  options: { config?: Parameters<typeof webhookConfig>[0]; resolve?: Resolver; startMs?: number } = {},
): Promise<Harness> {
  const db = await Db.open(':memory:');
  const clock = new ManualClock(options.startMs ?? Date.parse('2026-03-02T08:00:00Z'));
  const bus = new InMemoryEventBus();
  const receiver = await startReceiver(reply, () => clock.now());
  const webhooks = createWebhooks({
    db,
    bus,
    config: webhookConfig(options.config),
    clock,
    random: () => 0.5,
    stopGraceMs: 200,
    targetPolicy: { allow: new Set(['loopback']) },
    ...(options.resolve ? { resolve: options.resolve } : {}),
    onError: (err) => {
      throw err;
    },
  });
  await webhooks.start();
  t.teardown(async () => {
    await webhooks.stop();
    await receiver.close();
    await db.close();
  });
  return {
    db,
    clock,
    bus,
    receiver,
    webhooks,
    endpoint: (name = 'hook', filters = {}, keyId = 'key_test') =>
      webhooks.createEndpoint(keyId, { url: `${receiver.url}/${name}`, filters }),
    event: (type = 'alert.created', extra = {}) =>
      rawEvent(type, {
        at_ms: clock.now(),
        modes: ['bus'],
        routes: ['504'],
        data: { id: `alert-${clock.now()}` },
        ...extra,
      }),
    deliveries: () =>
      db.all(`SELECT delivery_id, message_id, endpoint_id, state, attempt_count, interrupted_count, in_flight,
      epoch_ms(next_attempt_at) AS next_ms, last_status_code, last_error FROM webhook_deliveries ORDER BY seq`),
    attempts: () =>
      db.all(`SELECT delivery_id, attempt, outcome, status_code, latency_ms, error,
      epoch_ms(started_at) AS started_ms, epoch_ms(finished_at) AS finished_ms FROM webhook_attempts ORDER BY
        delivery_id, attempt`),
  };
}
