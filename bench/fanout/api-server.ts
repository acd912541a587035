// What the fan-out bench's API servers share (server-api.ts, server-broker.ts): the config they
// run with, the API as app/serve.ts composes it with streaming on the given bus and event log,
// one key for every connection, and the synthetic events they publish.
import { createKey } from '../../accounts/keys.ts';
import { createApi } from '../../app/api.ts';
import { openStreaming, type FollowedEventLog, type Streaming } from '../../app/fanout.ts';
import { parseConfig, type Config } from '../../core/config.ts';
import type { DomainEvent, EventBus } from '../../core/events.ts';
import type { Logger } from '../../core/logger.ts';
import type { LiveView } from '../../core/ports.ts';
import { startServer, type RunningServer } from '../../http/server.ts';
import type { Db } from '../../store/db.ts';
import { BenchAllowance, BenchLimiter } from './unlimited.ts';

/** FANOUT_COALESCE_MS overrides the hub's coalescing window. */
export function benchConfig(): Readonly<Config> {
  const coalesce = process.env.FANOUT_COALESCE_MS;
  return parseConfig({
    signing_secret: 'fanout-bench-secret-0123456789',
    ...(coalesce === undefined ? {} : { sse: { coalesce_ms: Number(coalesce) } }),
  });
}

export interface BenchApi {
  server: RunningServer;
  streaming: Streaming;
  /** the path every client opens, with the one key (a Max key: the bench measures the fan-out, not plans) */
  path: string;
}

export async function serveBenchApi(opts: {
  db: Db;
  bus: EventBus;
  config: Readonly<Config>;
  log: Logger;
  followedLog?: FollowedEventLog;
}): Promise<BenchApi> {
  const { db, bus, config, log } = opts;
  const live: LiveView = { vehicles: () => [], arrivals: () => [], alerts: () => [], feeds: () => [], version: 0 };
  const streaming = await openStreaming({
    db,
    bus,
    live,
    config,
    log,
    allowance: new BenchAllowance(),
    ...(opts.followedLog ? { followedLog: opts.followedLog } : {}),
  });
  const api = await createApi({
    db,
    live,
    config,
    log,
    limiter: new BenchLimiter(),
    streams: streaming.provider,
    routes: streaming.routes,
  });
  streaming.useMeter(api.meter);
  const { key } = await createKey(db, { plan: 'max', name: 'fan-out bench' });
  const server = await startServer({
    handler: api.handler,
    host: '127.0.0.1',
    port: 0,
    streamBufferBytes: config.sse.buffer_bytes,
    log,
  });
  return { server, streaming, path: `/api/v1/events/stream?api_key=${key}` };
}

/** A vehicle event whose data the bench client reads (`ts`, and what `extra` adds); hub and log never look inside. */
export const benchEvent = (seq: number, ts: number, pad: string, extra: Record<string, number> = {}): DomainEvent =>
  ({
    id: `evt_${seq}`,
    type: 'vehicle.position',
    at_ms: Math.floor(ts / 1000),
    modes: ['bus'],
    routes: ['7'],
    lines: [],
    data: { seq, ts, ...extra, pad },
  }) as unknown as DomainEvent;
