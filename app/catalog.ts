// The full route table for documentation: what `npm run openapi` writes to docs/openapi.yaml and
// what the drift test compares with it. Route factories only capture their dependencies, so
// empty stand-ins are enough here. Each feature adds its routes below, exactly as the
// composition root passes them to createApi({ routes }).
import type { LiveView } from '../core/ports.ts';
import { SlidingWindowLimiter } from '../accounts/limiter.ts';
import { buildOpenApi } from '../docs/openapi.ts';
import { withDocs } from '../docs/routes.ts';
import { Directory } from '../http/read/directory.ts';
import { LiveIndex } from '../http/read/live-index.ts';
import { accountRoutes } from '../http/routes/account.ts';
import { dashboardRoutes } from '../dashboard/routes.ts';
import { eventRoutes, type EventStreamSource } from '../http/routes/events.ts';
import { exportRoutes } from '../http/routes/exports.ts';
import { coreRoutes } from '../http/routes/index.ts';
import { performanceRoutes } from '../http/routes/performance.ts';
import { reliabilityRoutes } from '../http/routes/reliability.ts';
import { statusRoutes } from '../status/routes.ts';
import type { StatusPages } from '../status/index.ts';
import { webhookRoutes } from '../http/routes/webhooks.ts';
import type { RouteDef } from '../http/types.ts';
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
      index: new LiveIndex(emptyLive),
      directory: new Directory(),
      baseUrl: '',
      thresholds: { stale_after_s: 90, expired_after_s: 300 },
    }),
    ...reliabilityRoutes({ db: noDb, settings: { service_day_end: '04:00' } }),
    ...performanceRoutes({
      db: noDb,
      settings: { service_day_end: '04:00' },
      performance: { on_time_window_s: [-60, 300], min_observations: 10 },
    }),
    ...eventRoutes(noStreams),
    ...webhookRoutes(noWebhooks),
    ...statusRoutes(noStatus),
    ...accountRoutes({ db: noDb, limiter: new SlidingWindowLimiter() }),
    ...dashboardRoutes(),
    ...exportRoutes({ db: noDb, dir: '', secret: 'documentation-only-secret', ttlS: 3_600 }),
  ];
}

/** The document `npm run openapi` commits: the whole table, documentation routes included. */
export function documentedOpenApi(serverUrl?: string): Record<string, unknown> {
  return buildOpenApi(withDocs(documentedRoutes()), { serverUrl });
}
