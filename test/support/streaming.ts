// The real API with streaming as `serve` composes it (app/fanout.ts): DuckDB (a file, so a
// restart on the same database can be shown), the event bus, the LiveView test double, uWS on a
// loopback port. restart() closes everything like a shutdown and starts again on the same file
// and port.
import { freePort } from './wait.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStreaming, type Streaming } from '../../app/fanout.ts';
import { parseConfig, type Config } from '../../core/config.ts';
import { InMemoryEventBus, type DomainEvent } from '../../core/events.ts';
import { createApi, type Api } from '../../app/api.ts';
import { createKey, type CreatedKey } from '../../accounts/keys.ts';
import type { Plan } from '../../accounts/plans.ts';
import { startServer, type RunningServer } from '../../http/server.ts';
import { Db } from '../../store/db.ts';
import type { HubOptions } from '../../stream/hub.ts';
import { sendBudgetFromConfig, type SendBudget } from '../../stream/send-budget.ts';
import type { RouteDef } from '../../http/types.ts';
import type { FakeLive } from './fake-live.ts';
import { demoDirectory, demoLive, NOW } from './network.ts';
import { logInto } from './logs.ts';
import { rawEvent, type RawEventFields } from './events.ts';

export interface StreamHarnessOptions {
  /** merged into the parsed config (sse section, api section, …) */
  config?: Record<string, unknown>;
  hub?: Partial<HubOptions>;
  meterTickMs?: number;
  live?: FakeLive;
  quiet?: boolean;
  /** more routes beside the event stream (e.g. the status page's) */
  routes?: readonly RouteDef[];
}

export interface StreamHarness {
  readonly url: string;
  readonly port: number;
  readonly dir: string;
  readonly db: Db;
  readonly api: Api;
  readonly server: RunningServer;
  readonly streaming: Streaming;
  /** the server's budget for unsent stream bytes (sse.send_budget_bytes, sse.stall_timeout_s) */
  readonly budget: SendBudget;
  readonly bus: InMemoryEventBus;
  readonly live: FakeLive;
  readonly config: Readonly<Config>;
  /** the API clock (metering, rendering) */
  readonly clock: { now: number };
  readonly errors: unknown[];
  key(plan: Plan, options?: { test?: boolean }): Promise<string>;
  /** the key and its id (usage rows name the id) */
  createKey(plan: Plan, options?: { test?: boolean }): Promise<CreatedKey>;
  publish(event: DomainEvent): void;
  /** shuts down like `serve` does, then starts again on the same database file and port */
  restart(): Promise<void>;
  /** shuts down and removes the database folder */
  close(): Promise<void>;
}

interface Instance {
  db: Db;
  api: Api;
  server: RunningServer;
  streaming: Streaming;
  budget: SendBudget;
  bus: InMemoryEventBus;
}

export async function startStreamHarness(options: StreamHarnessOptions = {}): Promise<StreamHarness> {
  const dir = mkdtempSync(join(tmpdir(), 'sse-test-'));
  const dbPath = join(dir, 'api.duckdb');
  const config = parseConfig({ signing_secret: 'test-secret-0123456789abcdef', ...(options.config ?? {}) });
  const live = options.live ?? demoLive();
  const clock = { now: NOW };
  const errors: unknown[] = [];
  const log = logInto((message, line) => {
    errors.push(line.err ?? message);
    if (!options.quiet) process.stderr.write(`${JSON.stringify(line)}\n`);
  });

  const open = async (port: number): Promise<Instance> => {
    const db = await Db.open(dbPath);
    const bus = new InMemoryEventBus();
    const streaming = await openStreaming({
      db,
      bus,
      live,
      config,
      clock: () => clock.now,
      log,
      hub: options.hub,
      changeCheckMs: 20,
      meterTickMs: options.meterTickMs,
    });
    const api = await createApi({
      db,
      live,
      config,
      clock: () => clock.now,
      directory: demoDirectory(),
      log,
      streams: streaming.provider,
      routes: [...streaming.routes, ...(options.routes ?? [])],
    });
    streaming.useMeter(api.meter);
    // as app/serve.ts: one budget for every stream the server holds
    const budget = sendBudgetFromConfig(config.sse, { sweepIntervalMs: 50 });
    const server = await startServer({
      handler: api.handler,
      host: '127.0.0.1',
      port,
      streamBufferBytes: config.sse.buffer_bytes,
      sendBudget: budget,
      log,
    });
    return { db, api, server, streaming, budget, bus };
  };

  // the order of app/serve.ts: streams end, the server finishes, producers stop, the log is persisted
  const shutdown = async (instance: Instance) => {
    instance.streaming.endStreams();
    await instance.server.close();
    await instance.streaming.close();
    await instance.db.close();
  };

  // uWS sets SO_REUSEADDR only when given a port: a server started on port 0 leaves TIME_WAIT
  // sockets that keep the restarted server from binding the same port for a minute
  let current = await open(await freePort());
  const port = current.server.port;
  let closed = false;
  return {
    get url() {
      return `http://127.0.0.1:${port}`;
    },
    port,
    dir,
    get db() {
      return current.db;
    },
    get api() {
      return current.api;
    },
    get server() {
      return current.server;
    },
    get streaming() {
      return current.streaming;
    },
    get budget() {
      return current.budget;
    },
    get bus() {
      return current.bus;
    },
    live,
    config,
    clock,
    errors,
    async key(plan, opts = {}) {
      return (await createKey(current.db, { plan, test: opts.test ?? false, name: null })).key;
    },
    createKey(plan, opts = {}) {
      return createKey(current.db, { plan, test: opts.test ?? false, name: null });
    },
    publish(event) {
      current.bus.publish(event);
    },
    async restart() {
      await shutdown(current);
      current = await open(port);
    },
    async close() {
      if (closed) return;
      closed = true;
      await shutdown(current);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A vehicle.position event whose data carries a sequence number (for gap and duplicate checks). */
export function seqEvent(seq: number, over: RawEventFields & { type?: DomainEvent['type'] } = {}): DomainEvent {
  return rawEvent(over.type ?? 'vehicle.position', {
    at_ms: NOW + seq,
    modes: ['bus'],
    routes: ['39'],
    data: { seq },
    ...over,
  });
}
