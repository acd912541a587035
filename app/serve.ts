import { ConfigError, type Config } from '../core/config.ts';
import { defaultLogger, type Logger } from '../core/logger.ts';
import { createApi } from './api.ts';
import { BusReliabilitySnapshots } from '../http/read/reliability-snapshots.ts';
import { SlidingWindowLimiter } from '../accounts/limiter.ts';
import { accountRoutes, connectionStreamsView } from '../http/routes/account.ts';
import { dashboardRoutes } from '../dashboard/routes.ts';
import { exportRoutes } from '../http/routes/exports.ts';
import { performanceRoutes } from '../http/routes/performance.ts';
import { reliabilityRoutes } from '../http/routes/reliability.ts';
import { webhookRoutes } from '../http/routes/webhooks.ts';
import { checkPortFree, ListenError, listenAddress } from '../http/listen.ts';
import { closeOnSignals, startServer, assertNativeUws, type RunningServer } from '../http/server.ts';
import { DbMeter } from '../accounts/meter.ts';
import { statusRoutes } from '../status/routes.ts';
import { createStatus } from '../status/index.ts';
import { scheduleRetention } from '../store/retention.ts';
import {
  addDays,
  expandMissingDays,
  resolveTimezone,
  scheduleFinalize,
  wallClock,
} from '../store/reliability/index.ts';
import { startScheduleRefresh, type ScheduleRefreshJob } from '../store/schedule-refresh.ts';
import { scheduleExports, scheduleSnapshot } from '../exports/index.ts';
import { createWebhooks, SecretBox } from '../webhooks/index.ts';
import { startAdminServer, type AdminServer } from '../admin/server.ts';
import { adminSocketPath, type FeedConfig } from '../core/config.ts';
import {
  executeCaptured,
  isOperationName,
  type ReloadOutcome,
  type ServiceHooks,
} from '../admin/operations/dispatch.ts';
import { createReloader } from './reload.ts';
import { ServiceMetrics } from '../observability/metrics.ts';
import { startMetricsServer, type MetricsServer } from '../observability/server.ts';
import { openRuntime, type Runtime } from './runtime.ts';
import { resolveSigningSecret } from '../core/signing-secret.ts';
import { openStreaming, type Streaming } from './fanout.ts';
import { openBrokerNode, type BrokerNode } from './broker-node.ts';
import { HeartbeatReader } from '../broker/node-heartbeats.ts';
import { hostname } from 'node:os';
import { sendBudgetFromConfig } from '../stream/send-budget.ts';

// The composition root of `serve`: runtime (db, bus, pipeline) + HTTP API + background jobs.
// Shutdown runs in reverse: stop accepting and finish requests, stop jobs, stop the pipeline,
// flush, close the database.

export interface Service {
  runtime: Runtime;
  server: RunningServer;
  /**
   * Schedule versions while serving: `schedules.refreshSchedule(id, { force })` checks a source
   * now and swaps a changed copy in; `schedules.update(list)` applies a reloaded config.
   */
  schedules: ScheduleRefreshJob;
  /** this process's registry: metricsText() for the admin socket's GET /metrics */
  metrics: ServiceMetrics;
  /** the scraper's listener (metrics.port), null when not configured */
  metricsServer: MetricsServer | null;
  url: string;
  /** the admin channel's socket; null when admin.enabled is false or the database is in memory */
  admin: AdminServer | null;
  /** re-reads the config (SIGHUP, `transit-api reload`) and applies feeds and schedules */
  reload(): Promise<ReloadOutcome>;
  close(): Promise<void>;
}

export interface ServeOptions {
  /** default: the process's logger */
  log?: Logger;
  /** start polling right away (default true) */
  poll?: boolean;
  /** where a reload reads the config again (the file the service started with); absent: reload is refused */
  reloadFrom?: { file: string | null; read: () => Readonly<Config> };
  /** Prometheus text for GET /metrics on the admin socket; default: this service's registry */
  metricsText?: () => Promise<string>;
}

export async function startService(config: Readonly<Config>, options: ServeOptions = {}): Promise<Service> {
  assertNativeUws();
  // a taken port fails now, before the database is opened (the listen below is exclusive too)
  await checkPortFree(config.host, config.port).catch(explainListenError);
  const log = options.log ?? defaultLogger();
  const metrics = new ServiceMetrics();
  const runtime = await openRuntime(config, { log, onPoll: metrics.poll, dbQueueWait: metrics.dbQueueWait });
  const { db, bus, pipeline } = runtime;
  const stops: Array<() => void | Promise<void>> = [];
  let streaming: Streaming | null = null;
  let node: BrokerNode | null = null;
  try {
    // broker.url: this node shares its event log, limits and usage with the others (role all or ingest here)
    node = await openBrokerNode(config, log);
    const timezone = await resolveTimezone(db, config.reliability.timezone);
    // days imported while stopped were expanded by the import; this fills days never expanded
    // (yesterday, the horizon moved on), leaving every expanded day with its version
    const today = wallClock(new Date(), timezone).date;
    await expandMissingDays(db, addDays(today, -1), addDays(today, config.reliability.horizon_days));
    stops.push(bus.subscribe(metrics.events));
    // one secret for cursors, download links and the encryption of webhook secrets at rest
    const signing = resolveSigningSecret(config, log);
    const signingSecret = signing.secret;
    const webhooks = createWebhooks({
      db,
      bus,
      config,
      log,
      onVerdict: metrics.webhookAttempt,
      secrets: new SecretBox(signing.secret, signing.previous),
    });
    await webhooks.start();
    stops.push(() => webhooks.stop());

    const servedIds = () => runtime.ids.current;
    const reliability = await BusReliabilitySnapshots.start(db, bus, { log, ids: servedIds });
    stops.push(() => reliability.close());
    // SSE: the event log, the hub fed by the bus, allowance and connection-minutes (on `meter`)
    if (node) await node.startIngest({ db, bus, live: pipeline.state });
    const streams = await openStreaming({
      db,
      bus,
      live: pipeline.state,
      config,
      log,
      ...(node ? { followedLog: node.eventLog, allowance: node.allowance } : {}),
    });
    streaming = streams;
    // the status page's request figures come from a recorder teed into the billing meter; its
    // viewers read a topic of the same hub
    const status = await createStatus({ db, live: pipeline.state, config, bus, hub: streams.hub, log });
    stops.push(() => status.stop());
    const meter = status.wrapMeter(
      new DbMeter(db, { flushMs: config.api.meter_flush_ms, batchRows: config.api.meter_batch_rows, log }).start(),
    );
    streams.useMeter(meter);
    // the account routes show the window the API enforces, so both read the same limiter
    const limiter = node?.limiter ?? new SlidingWindowLimiter();
    const api = await createApi({
      db,
      live: pipeline.state,
      config,
      log,
      meter,
      signingSecret,
      limiter,
      requests: metrics,
      reliability,
      ids: runtime.ids,
      streams: streams.provider,
      routes: [
        ...reliabilityRoutes({ db, settings: config.reliability, ids: servedIds }),
        ...performanceRoutes({ db, settings: config.reliability, performance: config.performance, ids: servedIds }),
        ...streams.routes,
        ...webhookRoutes(webhooks),
        ...statusRoutes(status),
        ...dashboardRoutes(),
        ...accountRoutes({ db, limiter, meter, streams: connectionStreamsView(streams.connections), log }),
        ...exportRoutes({
          db,
          dir: config.exports.dir,
          secret: signingSecret,
          ttlS: config.exports.url_ttl_s,
          baseUrl: (config.public_base_url ?? '').replace(/\/+$/, ''),
          log: log.child({ component: 'exports' }),
        }),
      ],
    });
    // a revocation (here, by another node, or by SQL as a recheck finds it) ends the key's open
    // streams and its webhooks at once
    api.keys.onRevoked?.((keyId) => {
      const ended = streams.provider.revokeKey(keyId);
      if (ended) log.info({ key_id: keyId, streams: ended }, 'revoked key: its open streams ended');
      webhooks
        .keyRevoked(keyId)
        .catch((err: unknown) => log.error({ err, key_id: keyId }, "ending a revoked key's webhooks failed"));
    });
    // revocations published by any node drop the key from this node's cache
    await node?.bindKeys(api.keys);
    const server = await startServer({
      handler: api.handler,
      host: config.host,
      port: config.port,
      maxBodyBytes: config.api.max_body_bytes,
      shutdownTimeoutMs: config.api.shutdown_timeout_ms,
      streamBufferBytes: config.sse.buffer_bytes,
      // one budget for the send buffers of every stream, /status/stream included
      sendBudget: sendBudgetFromConfig(config.sse, { log: log.child({ component: 'stream' }) }),
      log,
    }).catch(explainListenError);
    status.setOpenStreams(() => server.openStreams);
    if (node) {
      const broker = node.broker;
      status.collector.setApiDegraded(() =>
        broker.state === 'down'
          ? 'The broker is unreachable: rate limits and stream allowances count per node, and edges serve their last ' +
            'live state, until it returns'
          : null,
      );
      // this node's broker link, and the edges as their heartbeats say
      const nodeId = `${hostname()}:${server.port}`;
      status.collector.setNode(() => ({
        role: config.role,
        nodeId,
        broker: { state: broker.state, downSinceMs: broker.downSinceMs },
      }));
      const heartbeats = new HeartbeatReader(broker).start();
      stops.push(() => heartbeats.close());
      status.collector.setEdges(() => heartbeats.list());
    }
    // a schedule version or the feeds changed: the served ids (logged when they change), then
    // what lists routes by them
    const reloadIds = async (): Promise<void> => {
      await runtime.ids.reload();
      await api.reloadDirectory();
      await reliability.refresh();
    };
    const schedules = await startScheduleRefresh(db, {
      schedules: config.schedules,
      timezone,
      horizonDays: config.reliability.horizon_days,
      onSwap(id, index) {
        // the pipeline reads this map on every poll: the next poll matches against the new version
        runtime.schedules.set(id, index);
        reloadIds().catch((err: unknown) =>
          log.error({ err }, 'reloading the route directory after a schedule swap failed'),
        );
      },
      log,
    });
    stops.push(() => schedules.stop());
    status.setSchedules(() => schedules.health());

    const url = listenAddress(server.host, server.port).local;
    // edges forward history paths here; behind NAT or a proxy set broker.advertise_url
    await node?.announceIngest((config.broker.advertise_url ?? url).replace(/\/+$/, ''));
    const startedAt = new Date().toISOString();
    const reload = createReloader({
      runtime,
      file: options.reloadFrom?.file ?? null,
      read:
        options.reloadFrom?.read ??
        (() => {
          throw new ConfigError(['this service was started without a config file to read again']);
        }),
      schedules,
      feedsChanged: (feeds: readonly FeedConfig[]) => status.collector.setFeeds(feeds),
      ids: { current: servedIds, reload: reloadIds },
      log,
    });
    const socket = adminSocketPath(config);
    const hooks: ServiceHooks = {
      info: () => ({ pid: process.pid, started_at: startedAt, url, admin_socket: socket }),
      keyRevoked: (keyId) => {
        api.keys.invalidate?.(keyId);
        // every other node drops it too
        node
          ?.revoked(keyId)
          .catch((err: unknown) => log.error({ err }, 'publishing a revocation to the broker failed'));
      },
      async scheduleImported(scheduleId) {
        // the import expanded its days; the pipeline, the route directory and the schedule's
        // health on /status take the new version
        await schedules.scheduleImported(scheduleId);
        await reloadIds();
      },
      servedIds,
      reload,
    };
    // operator commands run here, on this process's database, while it serves
    const admin =
      socket === null
        ? null
        : await startAdminServer({
            path: socket,
            ping: () => ({ pid: process.pid, started_at: startedAt, db_path: config.db_path }),
            commands: Object.fromEntries(
              ['keys', 'reliability', 'export', 'import-gtfs', 'snapshot', 'backup', 'status', 'reload']
                .filter(isOperationName)
                .map((name) => [
                  name,
                  (request) => executeCaptured(name, { db, config: runtime.config, service: hooks }, request),
                ]),
            ),
            metricsText: options.metricsText ?? (() => metrics.metricsText()),
            log,
          }).catch(async (err: unknown) => {
            await server.close();
            throw err;
          });
    if (admin) stops.push(() => admin.close());

    const retention = scheduleRetention(db, config, log);
    stops.push(() => retention.stop());
    const finalize = await scheduleFinalize(db, bus, config, { log, ids: servedIds });
    stops.push(() => finalize.stop());
    const exportsJob = await scheduleExports(db, bus, config, { log });
    stops.push(() => exportsJob.stop());
    const snapshot = await scheduleSnapshot(db, config, {
      log,
      onSnapshot: metrics.snapshotWritten,
      onSnapshotFailed: metrics.snapshotFailed,
    });
    stops.push(() => snapshot.stop());

    metrics.bind({
      openStreams: () => server.openStreams,
      feeds: () => pipeline.state.feeds(),
      hub: () => streams.hub.stats(),
      outbox: () => status.collector.outboxFigures,
      dbQueueDepth: () => db.queueDepth,
      historyQueue: () => pipeline.historyQueue(),
      tripsInProgress: () => pipeline.tripsInProgress(),
    });
    const metricsServer =
      config.metrics.port === undefined
        ? null
        : await startMetricsServer({ metrics, host: config.metrics.host, port: config.metrics.port, log });
    if (metricsServer) {
      stops.push(() => metricsServer.close());
      log.info({ url: metricsServer.url }, 'metrics listening');
    }

    if (options.poll !== false) pipeline.start();
    // feeds are judged from now on: a feed not polled within two intervals of this is down
    await status.start();
    let closing: Promise<void> | null = null;
    return {
      runtime,
      server,
      schedules,
      metrics,
      metricsServer,
      url,
      admin,
      reload,
      close() {
        closing ??= (async () => {
          // no operator command starts once shutdown has begun; those running finish first
          await admin?.close();
          // pending events go out and streams end first: clients resume by id after the restart
          streams.endStreams();
          await server.close();
          for (const stop of stops.reverse())
            await Promise.resolve(stop()).catch((err) => log.error({ err }, 'stopping a job failed'));
          // the event log keeps what the pipeline publishes until it stops, then is persisted
          await pipeline.stop();
          await streams.close().catch((err) => log.error({ err }, 'closing the event streams failed'));
          // the last events and live state reach the broker, and the usage read so far is persisted
          await node?.close();
          await runtime.close();
        })();
        return closing;
      },
    };
  } catch (err) {
    for (const stop of stops.reverse()) await Promise.resolve(stop()).catch(() => undefined);
    await streaming?.close().catch(() => undefined);
    await node?.close().catch(() => undefined);
    await runtime.close().catch(() => undefined);
    throw err;
  }
}

/** A port that cannot be listened on, with what to do about it in the words of the CLI and config. */
function explainListenError(err: unknown): never {
  if (!(err instanceof ListenError)) throw err;
  const fix =
    err.code === 'EADDRINUSE'
      ? 'stop the other process (another transit-api serve?) or choose another port'
      : 'choose another port or host';
  throw new Error(`${err.message}; ${fix} with --port <n>, TRANSIT_PORT or "port" in the config`, { cause: err });
}

export { closeOnSignals };
