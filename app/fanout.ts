// The streaming component as the composition root assembles it: the DuckDB-backed event log,
// the hub fed by the event bus, one version watch for the query streams, the per-key allowance
// and the connection-minute meter, exposed to the API as a StreamProvider plus the
// /api/v1/events/stream route. `serve` and the streaming tests build it the same way.
import type { Config } from '../core/config.ts';
import { componentLogger, type Logger } from '../core/logger.ts';
import type { DomainEvent, EventBus } from '../core/events.ts';
import { LIVE_SLICES, type LiveView } from '../core/ports.ts';
import type { Meter } from '../accounts/meter.ts';
import { eventRoutes } from '../http/routes/events.ts';
import { connectionMinutes, HubStreams, liveChannel, RELIABILITY_CHANNEL, type StreamTag } from '../http/sse-routes.ts';
import type { RouteDef } from '../http/types.ts';
import type { Db } from '../store/db.ts';
import { StreamAllowance, type StreamAllowanceStore } from '../stream/allowance.ts';
import { ConnectionMeter } from '../stream/connection-meter.ts';
import { DuckDbEventLog } from '../stream/duckdb-event-log.ts';
import type { EventLog, StoredEvent } from '../stream/event-log.ts';
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
  /** how often the LiveView's slice versions are compared (default 100 ms) */
  changeCheckMs?: number;
  /** how often started connection-minutes are reported (default 5 s) */
  meterTickMs?: number;
  /** default: the plans' limits, counted in this process */
  allowance?: StreamAllowanceStore;
  /**
   * A log fed from elsewhere (broker/event-log.ts: ids from the broker's sequence): the hub takes
   * its events instead of the bus's, and nothing is persisted in DuckDB. Default: DuckDbEventLog.
   */
  followedLog?: FollowedEventLog;
}

export interface FollowedEventLog extends EventLog {
  readonly size: number;
  readonly bytes: number;
  /** Starts delivering the events it adopts, in id order. */
  follow(onEvents: (events: readonly StoredEvent[]) => void): void;
}

export interface Streaming {
  readonly hub: StreamHub;
  readonly eventLog: DuckDbEventLog | FollowedEventLog;
  readonly allowance: StreamAllowanceStore;
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
const channelsOf = (event: DomainEvent): readonly string[] =>
  event.type === 'reliability.updated' ? [RELIABILITY_CHANNEL] : NO_CHANNELS;

export async function openStreaming(deps: StreamingDeps): Promise<Streaming> {
  const { config } = deps;
  const log = componentLogger(deps.log, 'stream');
  const eventLog: DuckDbEventLog | FollowedEventLog =
    deps.followedLog ??
    (await DuckDbEventLog.open(deps.db, {
      capacity: config.sse.event_log_size,
      maxBytes: config.sse.event_log_max_bytes,
      maxAgeMs: config.sse.event_log_max_age_s * 1000,
      // the age bound and the id floor follow the API clock (a soak runs it faster)
      now: deps.clock,
      log,
    }));
  const hub = new StreamHub(hubOptionsFromConfig(config.sse, { log, ...deps.hub }), eventLog).start();
  // each slice of the LiveView is a channel of its own, moved only when its content changes (also
  // when no event is published, e.g. a freshness verdict); reliability results change with
  // reliability.updated
  let detach = () => {};
  if (deps.followedLog) {
    deps.followedLog.follow((events) => {
      hub.publishStored(events);
      if (events.some((e) => e.type === 'reliability.updated')) hub.changed([RELIABILITY_CHANNEL]);
    });
  } else {
    detach = hub.attachBus(deps.bus, channelsOf);
  }
  const live = deps.live;
  const watch = new VersionWatch({
    sources: LIVE_SLICES.map((slice) => ({
      channel: liveChannel(slice),
      read: () => (live.sliceVersion ? live.sliceVersion(slice) : live.version),
    })),
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
