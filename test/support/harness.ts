// Starts the real API (DuckDB in memory, uWS on an ephemeral loopback port) for integration tests.
import { parseConfig, type Config } from '../../core/config.ts';
import type { LiveView } from '../../core/ports.ts';
import { createApi, type Api, type ApiDeps } from '../../app/api.ts';
import { createKey } from '../../accounts/keys.ts';
import type { Plan } from '../../accounts/plans.ts';
import type { RouteDirectory } from '../../http/read/directory.ts';
import type { ReliabilitySnapshots } from '../../http/routes/deps.ts';
import { startServer, type RunningServer } from '../../http/server.ts';
import type { RouteDef } from '../../http/types.ts';
import { Db } from '../../store/db.ts';
import { demoDirectory, demoLive, NOW } from './network.ts';
import type { Logger } from '../../core/logger.ts';
import { logInto } from './logs.ts';

export interface Clock {
  now: number;
}

export interface Harness {
  url: string;
  db: Db;
  api: Api;
  server: RunningServer;
  clock: Clock;
  live: LiveView;
  /** everything the API logged as an error (internal failures) */
  errors: unknown[];
  key(plan: Plan, options?: { test?: boolean; name?: string }): Promise<string>;
  get(path: string, headers?: Record<string, string>): Promise<Response>;
  close(): Promise<void>;
}

/** Routes of a feature that needs the harness's own database and parsed config (webhooks). */
export type RouteFactory = (env: { db: Db; config: Readonly<Config> }) => readonly RouteDef[];

export async function startHarness(
  options: Partial<Pick<ApiDeps, 'streams' | 'meter' | 'limiter'>> & {
    routes?: readonly RouteDef[] | RouteFactory;
    /** the bus directory's snapshots, or a factory for ones that read the harness's database */
    reliability?: ReliabilitySnapshots | ((env: { db: Db; config: Readonly<Config> }) => ReliabilitySnapshots);
    live?: LiveView;
    directory?: RouteDirectory;
    config?: Record<string, unknown>;
    quiet?: boolean;
    /** a database file instead of an in-memory database */
    dbPath?: string;
    /** the API's logger instead of one that collects errors into `errors` */
    log?: Logger;
  } = {},
): Promise<Harness> {
  const { live: givenLive, directory, config: rawConfig, quiet, dbPath, routes, reliability, log, ...deps } = options;
  const db = await Db.open(dbPath ?? ':memory:');
  const clock: Clock = { now: NOW };
  const live = givenLive ?? demoLive();
  const config = parseConfig({ signing_secret: 'test-secret-0123456789abcdef', ...(rawConfig ?? {}) });
  const errors: unknown[] = [];
  const api = await createApi({
    db,
    live,
    config,
    clock: () => clock.now,
    directory: directory ?? demoDirectory(),
    // errors only: a 5xx is logged once with its stack at error, and once more as a request at warn
    log:
      log ??
      logInto((_message, line) => {
        errors.push(line.err);
        if (!quiet) process.stderr.write(`${JSON.stringify(line)}\n`);
      }, 'error'),
    ...deps,
    ...(routes ? { routes: typeof routes === 'function' ? routes({ db, config }) : routes } : {}),
    ...(reliability
      ? { reliability: typeof reliability === 'function' ? reliability({ db, config }) : reliability }
      : {}),
  });
  const server = await startServer({ handler: api.handler, host: '127.0.0.1', port: 0 });
  const url = `http://127.0.0.1:${server.port}`;
  let closed = false;
  return {
    url,
    db,
    api,
    server,
    clock,
    live,
    errors,
    async key(plan, opts = {}) {
      return (await createKey(db, { plan, test: opts.test ?? false, name: opts.name ?? null })).key;
    },
    get(path, headers = {}) {
      return fetch(`${url}${path}`, { headers });
    },
    async close() {
      if (closed) return;
      closed = true;
      await server.close();
      await db.close();
    },
  };
}

export function bearer(key: string): Record<string, string> {
  return { authorization: `Bearer ${key}` };
}
