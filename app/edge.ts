// `serve --role edge`: REST and SSE only, any number of them behind a load balancer. An edge opens
// no shared database file (no lock): its private in-memory DuckDB holds the schedules it imports
// from the same config (route directory, 404 checks) and the api_keys rows the ingest node
// publishes. Live state, the event log, limits, stream slots and revocations come from the
// broker; its metering goes to the ingest node's DuckDB through the broker. It serves its own
// status page (app/edge-status.ts), also with the broker and the ingest node down. Every other
// path (reliability, webhooks, exports, account and usage, dashboard) is forwarded to the ingest
// node as it is (http/forward.ts), found at ingest.url or the address it announces in the
// broker: the ingest node authenticates, counts and meters it.
import { randomBytes } from 'node:crypto';
import { configuredIngestUrl, type Config } from '../core/config.ts';
import { defaultLogger, type Logger } from '../core/logger.ts';
import { BrokerLiveView } from '../broker/live-state.ts';
import { BrokerMeter } from '../broker/meter.ts';
import { assertNativeUws, startServer, type RunningServer } from '../http/server.ts';
import { checkPortFree, listenAddress } from '../http/listen.ts';
import { sendBudgetFromConfig } from '../stream/send-budget.ts';
import { ForwardingHandler } from '../http/forward.ts';
import { IngestLink } from '../http/ingest-link.ts';
import { ingestAddress } from '../broker/ingest-address.ts';
import { createApi } from './api.ts';
import { openBrokerNode, type BrokerNode } from './broker-node.ts';
import { openRuntime } from './runtime.ts';
import { openEdgeStatus } from './edge-status.ts';
import { openStreaming } from './fanout.ts';

export interface EdgeService {
  readonly url: string;
  readonly server: RunningServer;
  readonly node: BrokerNode;
  readonly live: BrokerLiveView;
  close(): Promise<void>;
}

export async function startEdge(config: Readonly<Config>, options: { log?: Logger } = {}): Promise<EdgeService> {
  if (config.role !== 'edge' || !config.broker.url) throw new Error('startEdge needs role edge and broker.url');
  assertNativeUws();
  await checkPortFree(config.host, config.port);
  const log = options.log ?? defaultLogger();
  const node = (await openBrokerNode(config, log))!;
  const closers: Array<() => Promise<void>> = [];
  const closeAll = async () => {
    for (const close of closers.reverse()) await close().catch((err: unknown) => log.error({ err }, 'closing failed'));
    closers.length = 0;
  };
  try {
    // a private database: the schedules (imported from the config's sources) and the key rows;
    // no feed is polled here
    // served ids for every configured feed, though an edge polls none
    const runtime = await openRuntime({ ...config, db_path: ':memory:', feeds: [] }, { log, idConfig: () => config });
    closers.push(() => runtime.close());
    const { db, bus } = runtime;
    // feeds age here too: with the ingest node down, freshness says how old this copy is
    const live = await BrokerLiveView.open(node.broker, { freshness: config.freshness });
    closers.push(() => live.close());
    // ingest.url first: with the broker down the edge still reaches the ingest node
    const link = new IngestLink({
      configured: configuredIngestUrl(config),
      announced: ingestAddress(node.broker),
      log: log.child({ component: 'ingest-link' }),
    }).start();
    closers.push(() => link.close());
    const streams = await openStreaming({
      db,
      bus,
      live,
      config,
      log,
      followedLog: node.eventLog,
      allowance: node.allowance,
    });
    closers.push(() => streams.close());
    let forwarding: ForwardingHandler | null = null;
    const status = await openEdgeStatus({
      config,
      broker: node.broker,
      live,
      link,
      forwarding: () => ({ forwarded: forwarding?.forwarded ?? 0, failed: forwarding?.failed ?? 0 }),
      bus,
      hub: streams.hub,
      log,
    });
    closers.push(() => status.close());
    // the status page's request figures are teed from the meter, as on the ingest node
    const meter = status.service.wrapMeter(
      new BrokerMeter(node.broker, { flushMs: config.api.meter_flush_ms }).start(),
    );
    streams.useMeter(meter);
    const api = await createApi({
      db,
      live,
      config,
      log,
      meter,
      ids: runtime.ids,
      limiter: node.limiter,
      streams: streams.provider,
      routes: [...streams.routes, ...status.routes],
      // cursors must verify on whichever edge the next page lands: configure signing_secret
      signingSecret: config.signing_secret ?? randomBytes(32),
    });
    // a revocation notice (or a recheck that finds one) ends the key's open streams here too
    const provider = streams.provider;
    api.keys.onRevoked?.((keyId) => {
      const ended = provider.revokeKey(keyId);
      if (ended) log.info({ key_id: keyId, streams: ended }, 'revoked key: its open streams ended');
    });
    await node.bindKeys(api.keys, db);
    if (!config.signing_secret) log.warn('signing_secret is not set: a cursor issued by one edge fails on another');
    forwarding = new ForwardingHandler(api.handler, {
      target: () => link.target(),
      servesLocally: (method, path) => api.handler.serves(method, path),
      timeoutMs: config.broker.forward_timeout_ms,
      log: log.child({ component: 'forward' }),
    });
    const server = await startServer({
      handler: forwarding,
      host: config.host,
      port: config.port,
      maxBodyBytes: config.api.max_body_bytes,
      shutdownTimeoutMs: config.api.shutdown_timeout_ms,
      streamBufferBytes: config.sse.buffer_bytes,
      sendBudget: sendBudgetFromConfig(config.sse, { log: log.child({ component: 'stream' }) }),
      log,
    });
    const url = listenAddress(server.host, server.port).local;
    await status.start({ url, port: server.port, openStreams: () => server.openStreams });
    let closing: Promise<void> | null = null;
    return {
      url,
      server,
      node,
      live,
      close() {
        closing ??= (async () => {
          streams.endStreams();
          await server.close();
          // the heartbeat leaves the ingest node's list while the broker connection is open
          await status.close();
          await streams.close().catch((err: unknown) => log.error({ err }, 'closing the event streams failed'));
          // metering of the last requests goes to the broker before the connection closes
          await meter.close();
          closers.length = 0;
          await link.close();
          await live.close();
          await node.close();
          await runtime.close();
        })();
        return closing;
      },
    };
  } catch (err) {
    await closeAll();
    await node.close().catch(() => undefined);
    throw err;
  }
}
