// The service's Prometheus metrics: one prom-client Registry per process (never the global default,
// so tests can run several services side by side), the metric definitions, and the adapters the
// composition root hands to components (core/telemetry.ts ports, the pipeline's poll records, the
// event bus). Figures that already exist elsewhere (open streams, feed health, the hub's counters,
// the outbox depth) are read when Prometheus scrapes, so nothing runs between scrapes for them.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { DomainEvent } from '../core/events.ts';
import type { FeedHealth } from '../core/ports.ts';
import type { DurationObserver, RequestObserver } from '../core/telemetry.ts';
import type { FeedPoll } from '../core/types.ts';

/** The stream hub's cumulative counters (stream/hub.ts HubStats has these and more). */
export interface HubFigures {
  framesEncoded: number;
  eventWrites: number;
  closed: Readonly<Record<string, number>>;
}

/** What is read at scrape time; each source may be bound later, or never (its metric stays absent). */
export interface ScrapeSources {
  /** event streams open on the socket layer (API and status page) */
  openStreams(): number;
  feeds(): readonly FeedHealth[];
  hub(): HubFigures;
  /** null until the first reading */
  outbox(): { depth: number; oldestPendingMs: number | null } | null;
  dbQueueDepth(): number;
  /** the history queue behind the live state (pipeline/history-queue.ts) */
  historyQueue(): { depth: number; lag_ms: number };
  /** trips followed for stop events now (pipeline/stop-events/) */
  tripsInProgress?(): number;
  now(): number;
}

export interface MetricsOptions {
  /** process metrics (CPU, memory, event loop lag, GC, handles); default true */
  defaultMetrics?: boolean;
  /** constant labels on every series, e.g. { instance_role: 'primary' } */
  labels?: Record<string, string>;
}

/** A webhook attempt's outcome, as webhooks/delivery-store.ts AttemptVerdict carries it. */
export interface AttemptOutcome {
  result: { outcome: string; latency_ms: number | null };
}

export interface SnapshotRun {
  ms: number;
  bytes: number;
}

const PREFIX = 'transit_';
/** Request latencies: sub-millisecond cached reads up to slow exports. */
const REQUEST_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
const QUEUE_BUCKETS = [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30];
const POLL_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const SNAPSHOT_BUCKETS = [0.1, 0.5, 1, 5, 15, 60, 300, 900];

/** Per route and status: plain integers on the request path, handed to prom-client at scrape. */
interface RouteCell {
  readonly labels: { route: string };
  readonly byStatus: Map<number, number>;
  /** latencies: count per REQUEST_BUCKETS bound (not cumulative), then above the last */
  readonly buckets: Float64Array;
  sum: number;
  count: number;
}

/**
 * transit_http_request_duration_seconds as a prom-client metric read at scrape time: a
 * prom-client Histogram hashes its labels on every observation, which on a cached read costs
 * more than the rest of the metrics together; here an observation is a few additions.
 */
class RouteLatencies {
  readonly name = `${PREFIX}http_request_duration_seconds`;
  readonly help = 'Time from the request reaching the request chain to its response (or stream start), by route id.';
  readonly type = 'histogram';
  readonly aggregator = 'sum';

  constructor(private readonly routes: ReadonlyMap<string, RouteCell>) {}

  static observe(cell: RouteCell, seconds: number): void {
    let i = 0;
    while (i < REQUEST_BUCKETS.length && seconds > REQUEST_BUCKETS[i]!) i++;
    cell.buckets[i]!++;
    cell.sum += seconds;
    cell.count++;
  }

  get() {
    const values: Array<{ labels: Record<string, string | number>; value: number; metricName: string }> = [];
    for (const [route, cell] of this.routes) {
      if (cell.count === 0) continue;
      let cumulative = 0;
      REQUEST_BUCKETS.forEach((le, i) => {
        cumulative += cell.buckets[i]!;
        values.push({ labels: { route, le }, value: cumulative, metricName: `${this.name}_bucket` });
      });
      values.push({ labels: { route, le: '+Inf' }, value: cell.count, metricName: `${this.name}_bucket` });
      values.push({ labels: { route }, value: cell.sum, metricName: `${this.name}_sum` });
      values.push({ labels: { route }, value: cell.count, metricName: `${this.name}_count` });
    }
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator });
  }
}

export class ServiceMetrics implements RequestObserver {
  readonly registry = new Registry();
  readonly contentType = this.registry.contentType;
  private sources: Partial<ScrapeSources> = {};
  private readonly routes = new Map<string, RouteCell>();
  private readonly dbQueueWaitHistogram: Histogram<never>;
  private readonly polls: Counter<'feed' | 'status'>;
  private readonly pollDuration: Histogram<'feed'>;
  private readonly rejected: Counter<'feed' | 'reason'>;
  private readonly ruleFindings: Counter<'feed' | 'rule'>;
  private readonly trips: Counter<'feed' | 'result'>;
  private readonly strategyDecisions: Counter<'feed' | 'strategy' | 'result'>;
  private readonly matchRatio: Gauge<'feed'>;
  private readonly stopEvents: Counter<'feed'>;
  private readonly stopEventAnomalies: Counter<'feed' | 'kind'>;
  private readonly published: Counter<'type'>;
  private readonly attempts: Counter<'outcome'>;
  private readonly exportFiles: Counter<'dataset' | 'format' | 'outcome'>;
  private readonly exportRows: Counter<'dataset'>;
  private readonly snapshots: Counter<'outcome'>;
  private readonly snapshotDuration: Histogram<never>;
  private readonly snapshotLastSuccess: Gauge<never>;
  private readonly snapshotBytes: Gauge<never>;

  constructor(options: MetricsOptions = {}) {
    const registers = [this.registry];
    if (options.labels) this.registry.setDefaultLabels(options.labels);
    if (options.defaultMetrics !== false) collectDefaultMetrics({ register: this.registry });
    const self = this;

    // HTTP
    const routes = this.routes;
    new Counter({
      name: `${PREFIX}http_requests_total`,
      help: 'Requests answered, by route id (OpenAPI operationId, "(unmatched)" when none) and status.',
      labelNames: ['route', 'status'],
      registers,
      collect() {
        this.reset();
        for (const [route, cell] of routes) {
          for (const [status, n] of cell.byStatus) this.inc({ route, status: String(status) }, n);
        }
      },
    });
    this.registry.registerMetric(new RouteLatencies(routes) as unknown as Parameters<Registry['registerMetric']>[0]);

    // event streams and the bus
    new Gauge({
      name: `${PREFIX}sse_streams_open`,
      help: 'Event streams open on the socket layer (API streams and status page viewers).',
      registers,
      collect() {
        if (self.sources.openStreams) this.set(self.sources.openStreams());
      },
    });
    new Counter({
      name: `${PREFIX}sse_events_encoded_total`,
      help: 'Events fanned out to /events/stream subscribers: each encoded once, whatever the number of subscribers.',
      registers,
      collect() {
        if (!self.sources.hub) return;
        this.reset();
        this.inc(self.sources.hub().framesEncoded);
      },
    });
    new Counter({
      name: `${PREFIX}sse_event_writes_total`,
      help: 'Writes of encoded events to subscriber groups of /events/stream.',
      registers,
      collect() {
        if (!self.sources.hub) return;
        this.reset();
        this.inc(self.sources.hub().eventWrites);
      },
    });
    new Counter({
      name: `${PREFIX}sse_streams_closed_total`,
      help: 'Event streams closed by the hub, by reason.',
      labelNames: ['reason'],
      registers,
      collect() {
        if (!self.sources.hub) return;
        this.reset();
        for (const [reason, n] of Object.entries(self.sources.hub().closed)) this.inc({ reason }, n);
      },
    });
    this.published = new Counter({
      name: `${PREFIX}events_published_total`,
      help: 'Domain events published on the event bus (to streams, webhooks and the event log), by type.',
      labelNames: ['type'],
      registers,
    });

    // webhooks
    new Gauge({
      name: `${PREFIX}webhook_outbox_depth`,
      help: 'Webhook deliveries pending or waiting for a retry (read every status.outbox_refresh_s).',
      registers,
      collect() {
        const figures = self.sources.outbox?.();
        if (figures) this.set(figures.depth);
      },
    });
    new Gauge({
      name: `${PREFIX}webhook_outbox_oldest_pending_seconds`,
      help: 'Age of the oldest delivery pending or waiting for a retry; 0 when none is.',
      registers,
      collect() {
        const figures = self.sources.outbox?.();
        if (!figures) return;
        const now = self.sources.now?.() ?? Date.now();
        this.set(figures.oldestPendingMs === null ? 0 : Math.max(0, (now - figures.oldestPendingMs) / 1000));
      },
    });
    this.attempts = new Counter({
      name: `${PREFIX}webhook_attempts_total`,
      help: 'Webhook delivery attempts, by outcome.',
      labelNames: ['outcome'],
      registers,
    });

    // feeds
    this.polls = new Counter({
      name: `${PREFIX}feed_polls_total`,
      help: 'Feed polls, by feed and outcome (ok, unchanged, http_error, timeout, network_error, too_large, decode_error).',
      labelNames: ['feed', 'status'],
      registers,
    });
    this.pollDuration = new Histogram({
      name: `${PREFIX}feed_poll_duration_seconds`,
      help: 'Time of one poll to the live state and its events: fetch, decode, normalize, state (its history is stored behind).',
      labelNames: ['feed'],
      buckets: POLL_BUCKETS,
      registers,
    });
    new Gauge({
      name: `${PREFIX}feed_age_seconds`,
      help: 'Seconds since the feed header timestamp of the last good poll (absent before one).',
      labelNames: ['feed'],
      registers,
      collect() {
        if (!self.sources.feeds) return;
        this.reset();
        const now = self.sources.now?.() ?? Date.now();
        for (const feed of self.sources.feeds()) {
          if (feed.header_timestamp_ms !== null)
            this.set({ feed: feed.feed_id }, Math.max(0, (now - feed.header_timestamp_ms) / 1000));
        }
      },
    });
    this.rejected = new Counter({
      name: `${PREFIX}feed_entities_rejected_total`,
      help: 'Feed entities (or whole bodies) rejected, by feed and reason.',
      labelNames: ['feed', 'reason'],
      registers,
    });
    this.ruleFindings = new Counter({
      name: `${PREFIX}feed_rule_findings_total`,
      help: 'Feed rule findings in the bodies polled, by feed and rule (GTFS-Realtime validator ids; docs/guides/feed-quality.md).',
      labelNames: ['feed', 'rule'],
      registers,
    });
    this.trips = new Counter({
      name: `${PREFIX}feed_trips_total`,
      help: 'Trips of trip updates and vehicles looked up in the schedule, by feed and result (matched, unmatched, ambiguous).',
      labelNames: ['feed', 'result'],
      registers,
    });
    this.strategyDecisions = new Counter({
      name: `${PREFIX}feed_trip_strategy_decisions_total`,
      help: 'Decisions of each trip matching strategy tried, by feed, strategy and result.',
      labelNames: ['feed', 'strategy', 'result'],
      registers,
    });
    this.matchRatio = new Gauge({
      name: `${PREFIX}feed_trip_match_ratio`,
      help: 'Share of trips matched to the schedule in the last poll that looked trips up (0 to 1).',
      labelNames: ['feed'],
      registers,
    });

    this.stopEvents = new Counter({
      name: `${PREFIX}stop_events_total`,
      help: 'Stop events written (a trip passing a stop), by the feed whose poll passed them.',
      labelNames: ['feed'],
      registers,
    });
    this.stopEventAnomalies = new Counter({
      name: `${PREFIX}stop_event_anomalies_total`,
      help: 'Feed misbehaviour met while following trips (store/SCHEMA.md, stop_events), by feed and kind.',
      labelNames: ['feed', 'kind'],
      registers,
    });
    new Gauge({
      name: `${PREFIX}trips_in_progress`,
      help: 'Trips followed for stop events now: the memory the trip tracker holds.',
      registers,
      collect() {
        if (self.sources.tripsInProgress) this.set(self.sources.tripsInProgress());
      },
    });

    // the database
    this.dbQueueWaitHistogram = new Histogram({
      name: `${PREFIX}db_queue_wait_seconds`,
      help: "Time a statement waited for the database's one shared connection.",
      buckets: QUEUE_BUCKETS,
      registers,
    });
    new Gauge({
      name: `${PREFIX}db_queue_depth`,
      help: 'Statements waiting for the shared connection now.',
      registers,
      collect() {
        if (self.sources.dbQueueDepth) this.set(self.sources.dbQueueDepth());
      },
    });
    for (const [name, help, read] of [
      [
        'depth',
        'Polls live and waiting for their history append (polling pauses when it is full).',
        (q: { depth: number }) => q.depth,
      ],
      [
        'lag_seconds',
        'How long the oldest poll waiting for its history append has waited (0 when none).',
        (q: { lag_ms: number }) => q.lag_ms / 1000,
      ],
    ] as const) {
      new Gauge({
        name: `${PREFIX}history_queue_${name}`,
        help,
        registers,
        collect() {
          if (self.sources.historyQueue) this.set(read(self.sources.historyQueue()));
        },
      });
    }

    // jobs
    this.exportFiles = new Counter({
      name: `${PREFIX}export_files_total`,
      help: 'History export files written or failed, by dataset, format and outcome (ready, failed).',
      labelNames: ['dataset', 'format', 'outcome'],
      registers,
    });
    this.exportRows = new Counter({
      name: `${PREFIX}export_rows_total`,
      help: 'Rows written to history export files, by dataset.',
      labelNames: ['dataset'],
      registers,
    });
    this.snapshots = new Counter({
      name: `${PREFIX}snapshot_runs_total`,
      help: 'Analyst snapshot runs, by outcome (ok, failed).',
      labelNames: ['outcome'],
      registers,
    });
    this.snapshotDuration = new Histogram({
      name: `${PREFIX}snapshot_duration_seconds`,
      help: 'Time to write the analyst snapshot.',
      buckets: SNAPSHOT_BUCKETS,
      registers,
    });
    this.snapshotLastSuccess = new Gauge({
      name: `${PREFIX}snapshot_last_success_timestamp_seconds`,
      help: 'When the last analyst snapshot was written (Unix time).',
      registers,
    });
    this.snapshotBytes = new Gauge({
      name: `${PREFIX}snapshot_bytes`,
      help: 'Size of the last analyst snapshot.',
      registers,
    });
  }

  /** Binds what is read at scrape time (open streams, feed health, hub counters, outbox, queue). */
  bind(sources: Partial<ScrapeSources>): this {
    this.sources = { ...this.sources, ...sources };
    return this;
  }

  /** The request path: two Map lookups and a few additions. */
  request(route: string, status: number, seconds: number): void {
    let cell = this.routes.get(route);
    if (!cell) {
      cell = {
        labels: { route },
        byStatus: new Map(),
        buckets: new Float64Array(REQUEST_BUCKETS.length + 1),
        sum: 0,
        count: 0,
      };
      this.routes.set(route, cell);
    }
    cell.byStatus.set(status, (cell.byStatus.get(status) ?? 0) + 1);
    RouteLatencies.observe(cell, seconds);
  }

  readonly dbQueueWait: DurationObserver = (seconds) => {
    this.dbQueueWaitHistogram.observe(seconds);
  };

  readonly poll = (poll: FeedPoll): void => {
    const feed = poll.feed_id;
    this.polls.inc({ feed, status: poll.status });
    this.pollDuration.observe({ feed }, poll.duration_ms / 1000);
    for (const [reason, n] of Object.entries(poll.rejected)) if (n) this.rejected.inc({ feed, reason }, n);
    if (poll.stop_events) {
      // zero too, so a feed that follows trips has its series from its first poll
      this.stopEvents.inc({ feed }, poll.stop_events.written);
      for (const [kind, n] of Object.entries(poll.stop_events.anomalies))
        if (n) this.stopEventAnomalies.inc({ feed, kind }, n);
    }
    if (poll.findings)
      for (const [rule, t] of Object.entries(poll.findings)) this.ruleFindings.inc({ feed, rule }, t.count);
    const m = poll.matching;
    if (m && m.trips > 0) {
      if (m.matched) this.trips.inc({ feed, result: 'matched' }, m.matched);
      if (m.unmatched) this.trips.inc({ feed, result: 'unmatched' }, m.unmatched);
      if (m.ambiguous) this.trips.inc({ feed, result: 'ambiguous' }, m.ambiguous);
      for (const [strategy, counts] of Object.entries(m.strategies)) {
        if (!counts) continue;
        for (const result of ['matched', 'unmatched', 'ambiguous'] as const) {
          if (counts[result]) this.strategyDecisions.inc({ feed, strategy, result }, counts[result]);
        }
      }
      this.matchRatio.set({ feed }, m.match_rate);
    }
  };

  /** Subscribed to the event bus: events by type, and export files from export.ready/failed. */
  readonly events = (events: readonly DomainEvent[]): void => {
    for (const event of events) {
      this.published.inc({ type: event.type });
      if (event.type === 'export.ready' || event.type === 'export.failed') {
        const { dataset, format } = event.data;
        this.exportFiles.inc({ dataset, format, outcome: event.type === 'export.ready' ? 'ready' : 'failed' });
        if (event.type === 'export.ready' && typeof event.data.rows === 'number')
          this.exportRows.inc({ dataset }, event.data.rows);
      }
    }
  };

  readonly webhookAttempt = (verdict: AttemptOutcome): void => {
    this.attempts.inc({ outcome: verdict.result.outcome });
  };

  readonly snapshotWritten = (summary: SnapshotRun): void => {
    this.snapshots.inc({ outcome: 'ok' });
    this.snapshotDuration.observe(summary.ms / 1000);
    this.snapshotBytes.set(summary.bytes);
    this.snapshotLastSuccess.set((this.sources.now?.() ?? Date.now()) / 1000);
  };

  readonly snapshotFailed = (): void => {
    this.snapshots.inc({ outcome: 'failed' });
  };

  /** The Prometheus text exposition (format 0.0.4) of every metric. */
  metricsText(): Promise<string> {
    return this.registry.metrics();
  }
}
