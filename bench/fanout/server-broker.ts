// The API server of `api` with its event log on the broker, as an edge of a multi-node deploy
// has it (docs/guides/multi-node.md): events published on the bus are appended to a Redis
// stream (BrokerEventPublisher, as the ingest node does), read back by the node's one XREAD loop
// (BrokerEventLog) and fanned out by the hub. Against `api` in the same run, the latency
// difference is the broker hop. The redis-server it starts runs unpinned (its CPU is not the
// server's).
//
// The two-edge runs (run.ts `edge1`, `edge2`) start this file in two roles on a Redis the runner
// starts (FANOUT_BROKER_URL): FANOUT_BROKER_ROLE=ingest publishes to the broker and serves
// nothing; FANOUT_BROKER_ROLE=edge serves streams from the broker and publishes nothing.
//
// The broker hop itself: each event carries the time it was published on the ingest side's bus
// (`pub`, epoch µs); the serving side notes when its XREAD loop handed the event to the hub
// (bus → BrokerEventPublisher → Lua append → XREAD → mirror), and writes p50/p99 of the
// difference to FANOUT_HOP_TRACE at exit, events of the warm-up left out.
import { BrokerEventLog, BrokerEventPublisher } from '../../broker/event-log.ts';
import { Broker } from '../../broker/redis.ts';
import { InMemoryEventBus } from '../../core/events.ts';
import { createLogger } from '../../core/logger.ts';
import { Db } from '../../store/db.ts';
import { encodeEventPayload } from '../../stream/event-log.ts';
import { frame } from '../../stream/sse-frame.ts';
import { startBroker } from '../../test/support/broker-servers.ts';
import { announce, benchEnv, epochMicros, padFor, startPublisher, WriteTrace } from './publisher.ts';
import { benchConfig, benchEvent, serveBenchApi } from './api-server.ts';

const { rate, eventBytes } = benchEnv();
const config = benchConfig();
const log = createLogger();
const role = process.env.FANOUT_BROKER_ROLE ?? 'both';
const url = process.env.FANOUT_BROKER_URL ?? (await startBroker('redis')).url;
const broker = await new Broker({ url, prefix: 'fanout:', log }).ready();
const bounds = {
  capacity: config.sse.event_log_size,
  maxBytes: config.sse.event_log_max_bytes,
  maxAgeMs: config.sse.event_log_max_age_s * 1000,
};
const db = await Db.open(':memory:');
const bus = new InMemoryEventBus();
if (role !== 'edge') new BrokerEventPublisher(broker, bounds).attach(bus);
const eventLog = await BrokerEventLog.open(broker, bounds);
const hops = new WriteTrace('FANOUT_HOP_TRACE');
const PUB = /"pub":(\d+)/;
const follow = eventLog.follow.bind(eventLog);
eventLog.follow = (onEvents) =>
  follow((events) => {
    const now = epochMicros();
    for (const e of events) {
      const m = PUB.exec(e.payload);
      if (m) hops.record(Number(m[1]), now);
    }
    onEvents(events);
  });
const { server, streaming, path } = await serveBenchApi({ db, bus, config, log, followedLog: eventLog });

const event = (seq: number, ts: number, pub: number, pad: string) => benchEvent(seq, ts, pad, { pub });
const pad = padFor(eventBytes, (p) =>
  frame({
    id: 1_700_000_000_000_000,
    event: 'vehicle.position',
    data: encodeEventPayload(event(0, Date.now() * 1000, Date.now() * 1000, p)),
  }),
);

const stop =
  role === 'edge'
    ? () => {}
    : startPublisher(rate, (batch) => {
        const pub = epochMicros();
        for (const { seq, ts } of batch) bus.publish(event(seq, ts, pub, pad));
      });
announce(
  server.port,
  () => {
    stop();
    streaming.endStreams();
    if (role !== 'ingest') hops.save();
    // the redis-server child is killed when this process exits (test/support/broker-servers.ts)
  },
  path,
);
