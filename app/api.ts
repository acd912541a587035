// Assembles the API from the store and the live state: keys, limiter, meter, directory, the
// core routes (http/routes/index.ts) plus whatever other features add. The composition root calls createApi, then
// startServer({ handler: api.handler, … }).
import { randomBytes } from 'node:crypto';
import { ServedIds } from '../core/served-ids.ts';
import type { Config } from '../core/config.ts';
import { defaultLogger, type Logger } from '../core/logger.ts';
import type { LiveView } from '../core/ports.ts';
import type { RequestObserver } from '../core/telemetry.ts';
import type { Db } from '../store/db.ts';
import { RequestHandler } from '../http/request-handler.ts';
import { KeyStore, type KeyAuthenticator } from '../accounts/auth.ts';
import { CursorCodec } from '../http/cursor.ts';
import { SlidingWindowLimiter, type RateLimiter } from '../accounts/limiter.ts';
import { DbMeter, type Meter } from '../accounts/meter.ts';
import { StoreDirectory, type RouteDirectory, type ServedIdsSource } from '../http/read/directory.ts';
import { IdScopes } from '../store/id-scope.ts';
import { LiveIndex } from '../http/read/live-index.ts';
import { directoryKnownIds } from '../http/known-ids.ts';
import type { ReliabilitySnapshots } from '../http/routes/deps.ts';
import { coreRoutes } from '../http/routes/index.ts';
import { withDocs } from '../docs/routes.ts';
import type { RouteDef, StreamProvider } from '../http/types.ts';

export interface ApiDeps {
  db: Db;
  live: LiveView;
  config: Readonly<Config>;
  clock?: () => number;
  log?: Logger;
  /** per request: route id, status, latency (metrics) */
  requests?: RequestObserver;
  /** default: read from the store's schedules now and every api.directory_refresh_s */
  directory?: RouteDirectory;
  /**
   * the served ids (core/served-ids.ts), read again with the directory; default: read from the
   * store's schedules and the config's feeds (ids as stored when a directory is given)
   */
  ids?: ServedIdsSource;
  /** last-7-day figures for the bus directory */
  reliability?: ReliabilitySnapshots;
  /** event-stream output of SSE-capable routes */
  streams?: StreamProvider;
  /** routes of other features, appended after the core table */
  routes?: readonly RouteDef[];
  /** default: DbMeter on `db` */
  meter?: Meter;
  /** default: in-memory sliding window */
  limiter?: RateLimiter;
  /** default: KeyStore on `db` */
  keys?: KeyAuthenticator;
  /** signs cursors; default config.signing_secret, else random per process */
  signingSecret?: string | Buffer;
}

export interface Api {
  handler: RequestHandler;
  keys: KeyAuthenticator;
  meter: Meter;
  limiter: RateLimiter;
  directory: RouteDirectory;
  index: LiveIndex;
  ids: ServedIdsSource;
  /** call after a schedule import so directories and 404 checks see the new routes */
  reloadDirectory(): Promise<void>;
}

export async function createApi(deps: ApiDeps): Promise<Api> {
  const clock = deps.clock ?? Date.now;
  const log = deps.log ?? defaultLogger();
  const api = deps.config.api;
  const keys = deps.keys ?? new KeyStore(deps.db, { recheckMs: api.key_recheck_ms, clock, log }).start();
  const meter =
    deps.meter ?? new DbMeter(deps.db, { flushMs: api.meter_flush_ms, batchRows: api.meter_batch_rows, log }).start();
  const limiter = deps.limiter ?? new SlidingWindowLimiter();
  let directory = deps.directory;
  let storeDirectory: StoreDirectory | null = null;
  const ids: ServedIdsSource =
    deps.ids ?? (directory ? { current: ServedIds.NONE } : new IdScopes(deps.db, () => deps.config, log));
  if (!directory) {
    storeDirectory = new StoreDirectory(deps.db, log, ids);
    await storeDirectory.reload();
    storeDirectory.start(api.directory_refresh_s * 1000);
    directory = storeDirectory;
  }
  const index = new LiveIndex(deps.live, () => ids.current);
  const baseUrl = (deps.config.public_base_url ?? '').replace(/\/+$/, '');
  const routes = withDocs(
    [
      ...coreRoutes({ index, directory, thresholds: deps.config.freshness, baseUrl, reliability: deps.reliability }),
      ...(deps.routes ?? []),
    ],
    { serverUrl: deps.config.public_base_url ?? '/' },
  );
  const handler = new RequestHandler({
    routes,
    keys,
    limiter,
    meter,
    cursors: new CursorCodec(deps.signingSecret ?? deps.config.signing_secret ?? randomBytes(32)),
    clock,
    log,
    observer: deps.requests,
    streams: deps.streams,
    baseUrl,
    maxBodyBytes: api.max_body_bytes,
    responseCacheEntries: api.response_cache_entries,
    knownIds: directoryKnownIds(directory, index),
    onClose: storeDirectory ? [() => storeDirectory.close()] : [],
  });
  return {
    handler,
    keys,
    meter,
    limiter,
    directory,
    index,
    ids,
    reloadDirectory: async () => {
      await storeDirectory?.reload();
    },
  };
}
