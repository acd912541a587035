// The full route table for documentation: what `npm run openapi` writes to http/openapi.yaml and
// what the drift test compares with it. Route factories only capture their dependencies, so
// empty stand-ins are enough here. Each feature adds its routes below, exactly as the
// composition root passes them to createApi({ routes }).
import { silentLogger } from '../core/logger.ts';
import type { LiveView } from '../core/ports.ts';
import { App } from './app.ts';
import type { KeyAuthenticator } from './auth.ts';
import { CursorCodec } from './cursor.ts';
import { SlidingWindowLimiter } from './limiter.ts';
import { MemoryMeter } from './meter.ts';
import { Directory } from './read/directory.ts';
import { LiveIndex } from './read/live-index.ts';
import { accountRoutes } from './routes/account.ts';
import { dashboardRoutes } from './routes/dashboard.ts';
import { eventRoutes, type EventStreamSource } from './routes/events.ts';
import { exportRoutes } from './routes/exports.ts';
import { coreRoutes } from './routes/index.ts';
import { reliabilityRoutes } from './routes/reliability.ts';
import { statusRoutes } from './routes/status.ts';
import type { StatusPages } from './status/index.ts';
import { webhookRoutes } from './routes/webhooks.ts';
import type { RouteDef } from './types.ts';
import type { Webhooks } from '../webhooks/index.ts';
import type { Db } from '../store/db.ts';

const emptyLive: LiveView = { vehicles: () => [], arrivals: () => [], alerts: () => [], feeds: () => [], version: 0 };
// the documentation app never runs a handler, so the webhook routes need no component behind them
const noWebhooks = {} as Webhooks;
const noDb = {} as Db;
const noStreams = {} as EventStreamSource;
const noStatus = {} as StatusPages;

export function documentedRoutes(): RouteDef[] {
  return [
    ...coreRoutes({
      index: new LiveIndex(emptyLive), directory: new Directory(), baseUrl: '', thresholds: { stale_after_s: 90, expired_after_s: 300 },
    }),
    ...reliabilityRoutes({ db: noDb, settings: { service_day_end: '04:00' } }),
    ...eventRoutes(noStreams),
    ...webhookRoutes(noWebhooks),
    ...statusRoutes(noStatus),
    ...accountRoutes({ db: noDb, limiter: new SlidingWindowLimiter() }),
    ...dashboardRoutes(),
    ...exportRoutes({ db: noDb, dir: '', secret: 'documentation-only-secret', ttlS: 3_600 }),
  ];
}

/** The app the committed OpenAPI document describes (documentation routes included). */
export function documentedApp(): App {
  const keys: KeyAuthenticator = { authenticate: () => null, close: () => {} };
  return new App({
    routes: documentedRoutes(),
    keys,
    limiter: new SlidingWindowLimiter(),
    meter: new MemoryMeter(),
    cursors: new CursorCodec('documentation-only-secret'),
    clock: Date.now,
    log: silentLogger,
    maxBodyBytes: 1024,
    responseCacheEntries: 1,
  });
}
