// An edge's own status page (/status, /status.json, /status/stream), served from memory with the
// broker and the ingest node both down: the feeds and alerts as its copy of the live state has
// them (their freshness judged again here), its own request figures, and the node section (its
// broker link, the age of its live state, whether the ingest node answers). Every 2 s it
// publishes a heartbeat through the broker, which the ingest node's page lists.
import { hostname } from 'node:os';
import type { Config } from '../core/config.ts';
import type { EventBus } from '../core/events.ts';
import type { Logger } from '../core/logger.ts';
import type { BrokerLiveView } from '../broker/live-state.ts';
import { HeartbeatPublisher } from '../broker/node-heartbeats.ts';
import type { Broker } from '../broker/redis.ts';
import type { IngestLink } from '../http/ingest-link.ts';
import type { RouteDef } from '../http/types.ts';
import { createStatus, type StatusService } from '../status/index.ts';
import type { EdgeHeartbeat } from '../status/node-schema.ts';
import { worse } from '../status/schema.ts';
import { statusRoutes } from '../status/routes.ts';
import type { StreamHub } from '../stream/hub.ts';
import { iso } from '../core/dates.ts';

export interface EdgeStatusDeps {
  config: Readonly<Config>;
  broker: Broker;
  live: BrokerLiveView;
  link: IngestLink;
  /** forwarded requests so far, and those answered 503 here */
  forwarding: () => { forwarded: number; failed: number };
  bus: EventBus;
  hub: StreamHub;
  log: Logger;
}

export interface EdgeStatus {
  readonly service: StatusService;
  readonly routes: RouteDef[];
  /** Once the edge listens: open streams from the socket layer, then the heartbeat. */
  start(listening: { url: string; port: number; openStreams: () => number }): Promise<void>;
  close(): Promise<void>;
}

export async function openEdgeStatus(deps: EdgeStatusDeps): Promise<EdgeStatus> {
  const { broker, live, link } = deps;
  const service = await createStatus({
    db: null,
    live,
    config: deps.config,
    bus: deps.bus,
    hub: deps.hub,
    log: deps.log,
  });
  let nodeId = hostname();
  service.collector.setApiDegraded(() =>
    broker.state === 'down'
      ? 'The broker is unreachable: rate limits and stream allowances count on this node alone until it returns'
      : null,
  );
  service.collector.setNode(() => ({
    role: 'edge',
    nodeId,
    broker: { state: broker.state, downSinceMs: broker.downSinceMs },
    live: { publishedMs: live.publishedMs, snapshots: live.resyncs, changes: live.changesApplied },
    ingest: { ...link.state, ...deps.forwarding() },
  }));
  let heartbeat: HeartbeatPublisher | null = null;
  return {
    service,
    routes: statusRoutes(service),
    async start({ url, port, openStreams }) {
      nodeId = `${hostname()}:${port}`;
      service.setOpenStreams(openStreams);
      await service.start();
      heartbeat = new HeartbeatPublisher(broker, nodeId, (n) => heartbeatOf(service, n, nodeId, url)).start();
    },
    async close() {
      await heartbeat?.close();
      await service.stop();
    },
  };
}

/** The edge's own health (its node and API components, not the feeds every node shares) in a few figures. */
function heartbeatOf(service: StatusService, n: number, nodeId: string, url: string): EdgeHeartbeat {
  const doc = service.document();
  const node = doc.node;
  const state = worse(node?.state ?? 'unknown', doc.api.state);
  const reason = node && node.state === state ? node.reason : doc.api.reason;
  const last5 = doc.api.last_5m;
  return {
    n,
    node_id: nodeId,
    url,
    started_at: doc.started_at,
    sent_at: iso(Date.now())!,
    state,
    reason,
    live_state_age_s: node?.live_state?.age_s ?? null,
    ingest_reachable: node?.ingest?.reachable ?? null,
    requests_per_minute: last5.requests_per_minute,
    error_rate: last5.error_rate,
    p99_ms: last5.p99_ms,
    open_streams: doc.api.open_streams,
  };
}
