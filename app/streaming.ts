// The streaming component as the composition root assembles it: the DuckDB-backed event log,
// the hub fed by the event bus, one version watch for the query streams, the per-key allowance
// and the connection-minute meter, exposed to the API as a StreamProvider plus the
// /api/v1/events/stream route. `serve` and the streaming tests build it the same way.
import type { Config } from '../core/config.ts';
import { componentLogger, type Logger } from '../core/logger.ts';
import type { DomainEvent, EventBus } from '../core/events.ts';
import type { LiveView } from '../core/ports.ts';
import type { Meter } from '../http/meter.ts';
import { eventRoutes } from '../http/routes/events.ts';
import { connectionMinutes, HubStreams, LIVE_CHANNEL, RELIABILITY_CHANNEL, type StreamTag } from '../http/streams.ts';
import type { RouteDef } from '../http/types.ts';
import type { Db } from '../store/db.ts';
import { StreamAllowance } from '../stream/allowance.ts';
import { ConnectionMeter } from '../stream/connection-meter.ts';
import { DuckDbEventLog } from '../stream/duckdb-event-log.ts';
import { hubOptionsFromConfig, StreamHub, type HubOptions } from '../stream/hub.ts';
import { VersionWatch } from '../stream/version-watch.ts';

export interface StreamingDeps {
  db: Db;
  bus: EventBus;
  live: LiveView;
  config: Readonly<Config>;
  /** the API clock: metering and the time query results are rendered at */
  clock?: () => number;
  log?: Logger;
  /** hub settings beyond the config (tests: short lifetimes, a short retry) */
  hub?: Partial<HubOptions>;
  /** how often the LiveView version is compared (default 100 ms) */
  changeCheckMs?: number;
  /** how often started connection-minutes are reported (default 5 s) */
  meterTickMs?: number;
  /** default: the plans' limits, counted in this process */
  allowance?: StreamAllowance;
}

export interface Streaming {
  readonly hub: StreamHub;
  readonly eventLog: DuckDbEventLog;
  readonly allowance: StreamAllowance;
  readonly connections: ConnectionMeter<StreamTag>;
  /** pass as createApi({ streams }) */
  readonly provider: HubStreams;
  /** pass in createApi({ routes }) */
  readonly routes: readonly RouteDef[];
  /** Where connection-minutes are recorded: the API's meter, which createApi builds after this. */
  useMeter(meter: Meter): void;
  /**
   * Delivers pending events and ends every stream (clients resume after `retry`). Events keep
   * reaching the log until close(), so stop the producers between the two.
   */
  endStreams(): void;
  /** Ends streams, reports open minutes, persists the event log; before the database closes. */
  close(): Promise<void>;
}

const NO_CHANNELS: readonly string[] = [];
const channelsOf = (event: DomainEvent): readonly string[] => (event.type === 'reliability.updated' ? [RELIABILITY_CHANNEL] : NO_CHANNELS);

export async function openStreaming(deps: StreamingDeps): Promise<Streaming> {
  const { config } = deps;
  const log = componentLogger(deps.log, 'stream');
  const eventLog = await DuckDbEventLog.open(deps.db, {
    capacity: config.sse.event_log_size,
    maxBytes: config.sse.event_log_max_bytes,
    maxAgeMs: config.sse.event_log_max_age_s * 1000,
    // the age bound and the id floor follow the API clock (a soak runs it faster)
    now: deps.clock,
    log,
  });
  const hub = new StreamHub(hubOptionsFromConfig(config.sse, { log, ...deps.hub }), eventLog).start();
  // alerts, vehicles, arrivals and feed health all move the LiveView version (also when no event
  // is published, e.g. an unchanged poll); reliability results change with reliability.updated
  const detach = hub.attachBus(deps.bus, channelsOf);
  const watch = new VersionWatch({
    sources: [{ channel: LIVE_CHANNEL, read: () => deps.live.version }],
    onChange: (channels) => hub.changed(channels),
    intervalMs: deps.changeCheckMs,
    log,
  }).start();
  let usage: Meter | null = null;
  const connections = new ConnectionMeter<StreamTag>({
    sink: {
      record(tag, minutes, atMs) {
        if (!usage) throw new Error('connection-minutes recorded before the API meter was bound');
        usage.record(connectionMinutes(tag, minutes, atMs));
      },
    },
    now: deps.clock,
    tickMs: deps.meterTickMs,
    log,
  }).start();
  const allowance = deps.allowance ?? new StreamAllowance();
  const provider = new HubStreams({ hub, allowance, connections, now: deps.clock });
  let closing: Promise<void> | null = null;
  const endStreams = () => {
    watch.stop();
    hub.close();
  };
  return {
    hub,
    eventLog,
    allowance,
    connections,
    provider,
    routes: eventRoutes(provider),
    useMeter(meter) {
      usage = meter;
    },
    endStreams,
    close() {
      closing ??= (async () => {
        endStreams();
        detach();
        // the minutes of streams still open (none after endStreams) and the last tick's
        connections.stop();
        await eventLog.close();
      })();
      return closing;
    },
  };
}
