// What a node of a multi-node deploy (docs/guides/multi-node.md) opens on the broker, by
// role: every serving node follows the shared event log and counts limits and stream slots in
// the broker; the node that runs the pipeline (role all or ingest) also appends the events,
// publishes the live state, and persists every node's metering. No broker.url: none of this,
// and `serve` is the one process it always was.
import type { Config } from '../core/config.ts';
import type { EventBus } from '../core/events.ts';
import type { Logger } from '../core/logger.ts';
import type { LiveView } from '../core/ports.ts';
import type { Db } from '../store/db.ts';
import { BrokerStreamAllowance } from '../broker/allowance.ts';
import { BrokerEventLog, BrokerEventPublisher } from '../broker/event-log.ts';
import { spillPath, takeSpill, writeSpill } from '../broker/event-spill.ts';
import { BrokerRateLimiter } from '../broker/limiter.ts';
import { LiveStatePublisher } from '../broker/live-state.ts';
import { BrokerUsageIngest } from '../broker/meter.ts';
import { Broker } from '../broker/redis.ts';
import { revocationNotices, type RevocationNotices } from '../broker/revocations.ts';
import { KeyPublisher, KeyReplica } from '../broker/api-key-rows.ts';
import { IngestAnnouncer } from '../broker/ingest-address.ts';

export interface BrokerNode {
  readonly broker: Broker;
  readonly eventLog: BrokerEventLog;
  readonly limiter: BrokerRateLimiter;
  readonly allowance: BrokerStreamAllowance;
  /**
   * Set once the API's key cache exists: revocations drop keys from it. With `replica` (an edge),
   * the api_keys rows of this node's own database follow the ingest node's first.
   */
  bindKeys(keys: { invalidate?(keyId: string): void; recheck?(): Promise<void> }, replica?: Db): Promise<void>;
  /** tells every node a key is revoked */
  revoked(keyId: string): Promise<void>;
  /** the ingest side (role all or ingest): events, live state and every node's usage */
  startIngest(deps: { db: Db; bus: EventBus; live: LiveView }): Promise<void>;
  /** the ingest side, once it listens: tells edges where to forward the paths they do not serve */
  announceIngest(url: string): Promise<void>;
  /** Stops the ingest side first (its last events and state reach the broker), then the rest. */
  close(): Promise<void>;
}

export async function openBrokerNode(config: Readonly<Config>, log: Logger): Promise<BrokerNode | null> {
  const url = config.broker.url;
  if (!url) return null;
  const broker = await new Broker({ url, prefix: config.broker.prefix, log }).ready();
  const bounds = {
    capacity: config.sse.event_log_size,
    maxBytes: config.sse.event_log_max_bytes,
    maxAgeMs: config.sse.event_log_max_age_s * 1000,
  };
  const eventLog = await BrokerEventLog.open(broker, bounds);
  const limiter = new BrokerRateLimiter(broker);
  const allowance = new BrokerStreamAllowance(broker, { leaseTtlMs: config.broker.lease_ttl_s * 1000 }).start();
  let notices: RevocationNotices | null = null;
  let keyPublisher: KeyPublisher | null = null;
  const stops: Array<() => Promise<void>> = [];
  return {
    broker,
    eventLog,
    limiter,
    allowance,
    async bindKeys(keys, replicaDb) {
      const replica = replicaDb ? await new KeyReplica(broker, replicaDb).start() : null;
      if (replica) stops.push(() => replica.close());
      notices = await revocationNotices(broker, {
        // the rows first: a key dropped from the cache is read again from them
        revoked: (keyId) => {
          if (!replica) keys.invalidate?.(keyId);
          else void replica.sync().then(() => keys.invalidate?.(keyId));
        },
        // notices missed while the subscription was down: every cached key is read again now
        // (after the rows, on an edge), and a revoked one ends as if its notice had come
        resync: () => {
          log.warn({ component: 'broker' }, 'revocation notices may have been missed; rechecking every cached key');
          void (replica ? replica.sync() : Promise.resolve()).then(() => keys.recheck?.());
        },
      });
    },
    async revoked(keyId) {
      // the rows reach the broker before the notice, so an edge reads the revocation with them
      await keyPublisher?.sync();
      await notices?.publish(keyId);
    },
    async startIngest({ db, bus, live }) {
      const publisher = new BrokerEventPublisher(broker, bounds);
      // events the last run could not hand to the broker go first
      const spill = spillPath(config.db_path);
      const kept = spill ? takeSpill(spill) : [];
      if (kept.length) log.warn({ events: kept.length, file: spill }, 'appending the events kept by the last stop');
      publisher.restore(kept);
      const detach = publisher.attach(bus);
      const state = new LiveStatePublisher(broker, live).start();
      const usage = await new BrokerUsageIngest(broker, db).start();
      const keys = new KeyPublisher(broker, db).start();
      keyPublisher = keys;
      await keys.sync();
      stops.push(async () => {
        await keys.close();
        detach();
        await publisher.close();
        const unsent = publisher.pending();
        if (spill && unsent.length) {
          writeSpill(spill, unsent);
          log.warn(
            { events: unsent.length, file: spill },
            'the broker did not take every event; kept for the next start',
          );
        }
        await state.close();
        // the edges' last flushes arrive within their meter_flush_ms; a later start reads on from the offset
        await usage.close();
      });
    },
    async announceIngest(url) {
      const announcer = await new IngestAnnouncer(broker, url).start();
      stops.push(() => announcer.close());
    },
    async close() {
      for (const stop of stops.reverse())
        await stop().catch((err: unknown) => log.error({ err }, 'stopping the broker side failed'));
      // unspent rate-window leases go back to the shared window while the connection is open
      await limiter.close();
      await allowance.close();
      await eventLog.close();
      await notices?.close();
      await broker.close();
    },
  };
}
