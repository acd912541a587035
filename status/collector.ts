// Gathers the status document in memory: every tick it reads feed health and alerts from the live
// state, request figures from the request recorder and the last outbox figures, classifies each
// component, records state changes, and tells listeners when something worth showing changed.
// Nothing on the request path touches DuckDB: reads and writes run here in the background.
import { isAlertFeed, type Config, type FeedConfig } from '../core/config.ts';
import type { EventBus, Unsubscribe } from '../core/events.ts';
import type { Logger } from '../core/logger.ts';
import type { FeedHealth, LiveView } from '../core/ports.ts';
import { publicText, type Secrets } from '../core/public-text.ts';
import {
  MODES,
  STOP_EVENT_ANOMALIES,
  type Mode,
  type StopEventAnomaly,
  type StopEventCounts,
  type TripMatching,
} from '../core/types.ts';
import type { ScheduleHealth } from '../store/schedule-refresh.ts';
import {
  classifyAlertIngestion,
  classifyApi,
  classifyFeed,
  classifySchedule,
  summarize,
  type Verdict,
} from './classify.ts';
import { ruleSpec } from '../pipeline/quality/rules.ts';
import { FeedHistory } from './feed-history.ts';
import { FindingsHistory } from './feed-findings.ts';
import { IncidentLog, type StateChange } from './incidents.ts';
import type { RequestStats } from './request-stats.ts';
import type {
  AlertIngestion,
  ApiStatus,
  EdgeHealth,
  FeedRuleFindings,
  NodeStatus,
  FeedStatus,
  KnownState,
  ScheduleStatus,
  StatusDocument,
  WebhookOutbox,
} from './schema.ts';
import type { OutboxFigures, StatusStore } from './status-store.ts';
import { edgeHealth, edgeWeight, nodeStatus, type HeartbeatEntry, type NodeFacts } from './node-status.ts';
import { DAY_MS, iso, utcDate } from '../core/dates.ts';

const HOUR_MS = 3_600_000;
/** an unchanged page is still re-sent this often, so slowly moving figures (requests/min) stay current */
const REFRESH_MS = 15_000;
/** figure-only changes are sent at most this often; state changes go out on the next tick */
const MIN_PUSH_MS = 1_000;
const PRUNE_EVERY_MS = 6 * HOUR_MS;

export interface CollectorOptions {
  live: LiveView;
  config: Readonly<Pick<Config, 'feeds' | 'status'>>;
  requests: RequestStats;
  /** null: no persistence and no outbox figures (tests, or a store that failed to open) */
  store: StatusStore | null;
  bus?: EventBus;
  clock?: () => number;
  log?: Logger;
}

export interface StatusUpdate {
  doc: StatusDocument;
  /** true when a component changed state (as opposed to figures only) */
  stateChanged: boolean;
}

export class StatusCollector {
  private readonly clock: () => number;
  /** when watching began: feeds never polled since then are judged from here */
  private startedMs: number;
  private readonly histories = new Map<string, FeedHistory>();
  private readonly findings = new Map<string, FindingsHistory>();
  private feedsById: Map<string, FeedConfig>;
  /** feeds the config says carry alerts: sources from before their first poll */
  private configuredAlertSources = new Set<string>();
  /** feeds seen delivering alerts (now, or in the last 7 days of the poll log) */
  private readonly alertSources = new Set<string>();
  /** the last error of each feed as received and as shown, so a steady error is redacted once */
  private readonly shownErrors = new Map<string, { raw: string; shown: string }>();
  private readonly incidents: IncidentLog;
  private readonly listeners = new Set<(update: StatusUpdate) => void>();
  private timer: NodeJS.Timeout | null = null;
  private unsubscribe: Unsubscribe | null = null;
  private soon: NodeJS.Immediate | null = null;
  private doc: StatusDocument | null = null;
  private signature = '';
  private states = '';
  private lastPushMs = 0;
  private lastPruneMs = 0;
  private lastAlertEventMs: number | null = null;
  private outbox: (OutboxFigures & { asOfMs: number }) | null = null;
  private outboxReading = false;
  private lastOutboxTryMs = -Infinity;
  private pendingWrites: StateChange[] = [];
  private flushing: Promise<void> | null = null;
  private writeFailing = false;
  private openStreams: () => number = () => 0;
  private scheduleHealth: () => readonly ScheduleHealth[] = () => [];
  private apiDegraded: () => string | null = () => null;
  private nodeFacts: () => NodeFacts | null = () => null;
  private heartbeats: () => readonly HeartbeatEntry[] = () => [];
  /** bumps whenever the document is rebuilt (every tick) */
  version = 0;

  constructor(private readonly options: CollectorOptions) {
    this.clock = options.clock ?? Date.now;
    this.startedMs = this.clock();
    this.feedsById = new Map(options.config.feeds.map((f) => [f.id, f]));
    for (const f of options.config.feeds) this.histories.set(f.id, new FeedHistory());
    this.configuredAlertSources = new Set(options.config.feeds.filter(isAlertFeed).map((f) => f.id));
    this.incidents = new IncidentLog(options.config.status.history_days);
  }

  /** Loads the recorded history and the last hour of polls (failures are logged), then ticks. */
  async start(): Promise<void> {
    this.startedMs = this.clock();
    const store = this.options.store;
    if (store) {
      const sinceMs = this.startedMs - this.options.config.status.history_days * DAY_MS;
      try {
        const { changes, before } = await store.loadChanges(sinceMs);
        // reasons recorded by an earlier version may hold what is now kept off public pages
        const secrets = this.allFeedSecrets();
        this.incidents.load(
          changes.map((c) => ({ ...c, reason: publicText(c.reason, secrets) })),
          before,
        );
      } catch (err) {
        this.log('could not load the incident history', err);
      }
      await this.seedFromPollLog(store);
    }
    this.unsubscribe =
      this.options.bus?.subscribe((events) => {
        let relevant = false;
        for (const e of events) {
          if (e.type.startsWith('alert.')) this.lastAlertEventMs = Math.max(this.lastAlertEventMs ?? 0, e.at_ms);
          if (e.type.startsWith('alert.') || e.type.startsWith('feed.')) relevant = true;
        }
        if (relevant) this.tickSoon();
      }) ?? null;
    this.tick();
    this.timer = setInterval(() => this.tick(), this.options.config.status.tick_ms);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (this.soon) clearImmediate(this.soon);
    this.soon = null;
    this.unsubscribe?.();
    this.unsubscribe = null;
    await this.flushWrites();
  }

  /** The configured feeds after a config reload: their intervals, and the history of removed ones forgotten. */
  setFeeds(feeds: readonly FeedConfig[]): void {
    this.feedsById = new Map(feeds.map((f) => [f.id, f]));
    for (const id of this.histories.keys()) if (!this.feedsById.has(id)) this.histories.delete(id);
    for (const id of this.findings.keys()) if (!this.feedsById.has(id)) this.findings.delete(id);
    // a changed url or headers must be redacted anew
    this.shownErrors.clear();
    this.configuredAlertSources = new Set(feeds.filter(isAlertFeed).map((f) => f.id));
    this.tickSoon();
  }

  /** Open API streams, provided once the server runs. */
  setOpenStreams(count: () => number): void {
    this.openStreams = count;
  }

  /**
   * Why the API is degraded whatever its figures say, or null (e.g. the broker of a multi-node
   * deploy is unreachable and limits count per node).
   */
  setApiDegraded(reason: () => string | null): void {
    this.apiDegraded = reason;
  }

  /** This node's links in a multi-node deploy (broker, live state, ingest node); null: one process. */
  setNode(facts: () => NodeFacts | null): void {
    this.nodeFacts = facts;
    this.tickSoon();
  }

  /** The edges' heartbeats as last read from the broker (the ingest node's page lists them). */
  setEdges(entries: () => readonly HeartbeatEntry[]): void {
    this.heartbeats = entries;
  }

  /** The schedules' versions and last source checks, provided once the refresh job runs (in memory). */
  setSchedules(health: () => readonly ScheduleHealth[]): void {
    this.scheduleHealth = health;
    this.tickSoon();
  }

  onUpdate(listener: (update: StatusUpdate) => void): Unsubscribe {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The latest document; built on first use when the collector has not ticked yet. */
  document(): StatusDocument {
    if (!this.doc) this.tick();
    return this.doc!;
  }

  private log(message: string, err?: unknown): void {
    this.options.log?.error({ err }, message);
  }

  private tickSoon(): void {
    if (this.soon || !this.timer) return;
    this.soon = setImmediate(() => {
      this.soon = null;
      this.tick();
    });
  }

  tick(): void {
    const nowMs = this.clock();
    const rules = this.options.config.status;
    const feeds = this.feedStatuses(nowMs);
    const alerts = this.alertIngestion(feeds, nowMs);
    const api = this.apiStatus(nowMs);
    const schedules = this.scheduleStatuses(nowMs);
    const node = this.nodeSection(nowMs);
    const edges = this.edgeSection(nowMs);
    this.record(
      feeds.map((f) => [`feed:${f.feed_id}`, f]),
      nowMs,
    );
    this.record([['alerts', alerts], ['api', api], ...(node ? [['node', node] as [string, Verdict]] : [])], nowMs);
    if (nowMs - this.lastPruneMs > PRUNE_EVERY_MS) this.prune(nowMs);
    void this.flushWrites();
    this.maybeReadOutbox(nowMs, rules.outbox_refresh_s * 1000);

    const overall = summarize([
      ...feeds.map((f) => f.state),
      alerts.state,
      api.state,
      ...schedules.map((s) => s.state),
      ...(node ? [node.state] : []),
      ...edges.map((e) => edgeWeight(e.state)),
    ]);
    const components = [...feeds.map((f) => `feed:${f.feed_id}`), 'alerts', 'api', ...(node ? ['node'] : [])];
    const incidents = this.incidents.incidents(nowMs);
    const doc: StatusDocument = {
      generated_at: iso(nowMs)!,
      started_at: iso(this.startedMs)!,
      state: overall.state,
      summary: overall.reason,
      feeds,
      alerts,
      api,
      schedules,
      node,
      edges,
      history: {
        days: rules.history_days,
        components: this.incidents.days(components, nowMs),
        incidents: incidents.items,
        incidents_total: incidents.total,
      },
    };
    this.doc = doc;
    this.version++;
    this.publish(doc, nowMs);
  }

  private publish(doc: StatusDocument, nowMs: number): void {
    const states = [
      doc.state,
      ...doc.feeds.map((f) => f.state),
      doc.alerts.state,
      doc.api.state,
      ...doc.schedules.map((s) => s.state),
      doc.node?.state,
      ...doc.edges.map((e) => `${e.node_id}:${e.state}`),
    ].join();
    const signature = signatureOf(doc);
    const stateChanged = states !== this.states;
    const due =
      signature !== this.signature ? nowMs - this.lastPushMs >= MIN_PUSH_MS : nowMs - this.lastPushMs >= REFRESH_MS;
    if (!stateChanged && !due) return;
    this.states = states;
    this.signature = signature;
    this.lastPushMs = nowMs;
    for (const listener of this.listeners) {
      try {
        listener({ doc, stateChanged });
      } catch (err) {
        this.log('an update listener failed', err);
      }
    }
  }

  private feedStatuses(nowMs: number): FeedStatus[] {
    const rules = this.options.config.status;
    return this.options.live.feeds().map((raw) => {
      const h = this.publicHealth(raw);
      let history = this.histories.get(h.feed_id);
      if (!history) {
        history = new FeedHistory();
        this.histories.set(h.feed_id, history);
      }
      history.observe(h, nowMs);
      const interval_s = this.feedsById.get(h.feed_id)?.interval_s ?? 15;
      const verdict = classifyFeed(
        {
          health: h,
          interval_s,
          consecutive_failures: history.consecutiveFailures,
          nowMs,
          sinceMs: this.startedMs,
        },
        rules,
      );
      const hour = history.lastHour(nowMs);
      return {
        feed_id: h.feed_id,
        kind: h.kind,
        interval_s,
        state: verdict.state,
        reason: verdict.reason,
        last_poll_at: iso(h.last_poll_ms),
        last_poll_status: h.last_status,
        last_success_at: iso(h.last_success_ms),
        header_timestamp: iso(h.header_timestamp_ms),
        header_age_s: h.header_timestamp_ms === null ? null : Math.round((nowMs - h.header_timestamp_ms) / 100) / 10,
        freshness: h.freshness,
        entities: h.entities,
        schedule_match: scheduleMatch(h.matching),
        stop_events: stopEvents(h.stop_events),
        consecutive_failures: history.consecutiveFailures,
        polls_1h: hour.polls,
        failures_1h: hour.failures,
        error_rate_1h: hour.polls ? Math.round((hour.failures / hour.polls) * 10_000) / 10_000 : null,
        last_error: history.lastError,
        last_error_at: iso(history.lastErrorMs),
        findings: this.findingsOf(h, nowMs),
        sparkline: history.sparkline(nowMs),
      };
    });
  }

  /** The feed's rules that fired in the last hour, with what the live state says of each now. */
  private findingsOf(h: FeedHealth, nowMs: number): FeedRuleFindings[] {
    const history = this.findingsHistory(h.feed_id);
    history.observe(h.rules);
    const now = new Map((h.rules ?? []).map((r) => [r.rule, r]));
    return history.lastHour(nowMs).flatMap((f) => {
      const spec = ruleSpec(f.rule);
      if (!spec) return [];
      return [
        {
          rule: f.rule,
          severity: spec.severity,
          title: spec.title,
          count_1h: f.count,
          example_entity_id: f.example,
          last_seen_at: iso(f.last_seen_ms)!,
          firing: (now.get(f.rule)?.firing_since_ms ?? null) !== null,
          unusable: spec.unusable,
        },
      ];
    });
  }

  private findingsHistory(feedId: string): FindingsHistory {
    let history = this.findings.get(feedId);
    if (!history) {
      history = new FindingsHistory();
      this.findings.set(feedId, history);
    }
    return history;
  }

  private alertIngestion(feeds: readonly FeedStatus[], nowMs: number): AlertIngestion {
    const active = Object.fromEntries(MODES.map((m) => [m, 0])) as Record<Mode, number>;
    const upcoming = Object.fromEntries(MODES.map((m) => [m, 0])) as Record<Mode, number>;
    const perSource = new Map<string, number>();
    let lastChange = this.lastAlertEventMs;
    for (const a of this.options.live.alerts()) {
      this.alertSources.add(a.feed_id);
      const changed = Math.max(a.first_seen_ms, a.updated_ms, a.resolved_ms ?? 0);
      if (changed <= nowMs) lastChange = Math.max(lastChange ?? 0, changed);
      if (a.status === 'resolved') continue;
      perSource.set(a.feed_id, (perSource.get(a.feed_id) ?? 0) + 1);
      for (const m of a.modes) (a.status === 'active' ? active : upcoming)[m]++;
    }
    const sources = feeds
      .filter((f) => this.configuredAlertSources.has(f.feed_id) || this.alertSources.has(f.feed_id))
      .map((f) => ({
        feed_id: f.feed_id,
        state: f.state,
        last_success_at: f.last_success_at,
        alerts: perSource.get(f.feed_id) ?? 0,
      }));
    const verdict = classifyAlertIngestion(sources);
    return {
      state: verdict.state,
      reason: verdict.reason,
      active_by_mode: active,
      upcoming_by_mode: upcoming,
      last_change_at: iso(lastChange),
      sources,
    };
  }

  private apiStatus(nowMs: number): ApiStatus {
    const last5 = this.options.requests.window(5, nowMs);
    const last60 = this.options.requests.window(60, nowMs);
    let verdict = classifyApi(
      { requests: last5.requests, server_errors: last5.server_errors, p99_ms: last5.p99_ms },
      this.options.config.status,
    );
    const degraded = this.apiDegraded();
    if (degraded && verdict.state !== 'down') verdict = { state: 'degraded', reason: degraded };
    let openStreams = 0;
    try {
      openStreams = Math.max(0, this.openStreams());
    } catch (err) {
      this.log('open stream count failed', err);
    }
    const o = this.outbox;
    const webhooks: WebhookOutbox = {
      depth: o ? o.depth : null,
      oldest_pending_at: iso(o?.oldestPendingMs),
      oldest_pending_age_s:
        o && o.oldestPendingMs !== null ? Math.max(0, Math.round((nowMs - o.oldestPendingMs) / 1000)) : null,
      as_of: iso(o?.asOfMs),
    };
    return {
      state: verdict.state,
      reason: verdict.reason,
      last_5m: last5,
      last_60m: last60,
      open_streams: openStreams,
      webhooks,
    };
  }

  private nodeSection(nowMs: number): NodeStatus | null {
    try {
      const facts = this.nodeFacts();
      return facts ? nodeStatus(facts, nowMs) : null;
    } catch (err) {
      this.log('status: reading the node facts failed', err);
      return null;
    }
  }

  private edgeSection(nowMs: number): EdgeHealth[] {
    try {
      return edgeHealth(this.heartbeats(), nowMs);
    } catch (err) {
      this.log("status: reading the edges' heartbeats failed", err);
      return [];
    }
  }

  private scheduleStatuses(nowMs: number): ScheduleStatus[] {
    let list: readonly ScheduleHealth[] = [];
    try {
      list = this.scheduleHealth();
    } catch (err) {
      this.log('status: reading schedule health failed', err);
    }
    const today = utcDate(nowMs);
    return list.map((raw) => {
      const h = publicSchedule(raw);
      const verdict = classifySchedule(h, today);
      const v = h.version;
      const c = h.last_check;
      return {
        schedule_id: h.schedule_id,
        state: verdict.state,
        reason: verdict.reason,
        version_id: v?.version_id ?? null,
        feed_version: v?.feed_version ?? null,
        imported_at: v?.imported_at ?? null,
        service_start_date: v?.service_start_date ?? null,
        service_end_date: v?.service_end_date ?? null,
        trips: v?.trips ?? 0,
        refresh_cron: h.refresh_cron,
        last_check_at: c?.checked_at ?? null,
        last_check_outcome: c?.outcome ?? null,
        last_error: c?.last_error ?? null,
        last_error_at: c?.last_error_at ?? null,
        consecutive_failures: c?.consecutive_failures ?? 0,
      };
    });
  }

  /** Records known states; `unknown` (nothing observed yet) is shown but never stored. */
  private record(entries: ReadonlyArray<[string, Verdict]>, nowMs: number): void {
    for (const [component, verdict] of entries) {
      if (verdict.state === 'unknown') continue;
      const change = this.incidents.transition(component, verdict.state as KnownState, verdict.reason, nowMs);
      if (change) this.pendingWrites.push(change);
    }
  }

  private prune(nowMs: number): void {
    this.lastPruneMs = nowMs;
    this.incidents.prune(nowMs);
    const store = this.options.store;
    if (!store) return;
    store
      .prune(nowMs - this.options.config.status.retention_days * DAY_MS)
      .catch((err: unknown) => this.log('pruning old state changes failed', err));
  }

  /** Writes recorded changes until none are left; on failure they stay queued for the next tick. */
  flushWrites(): Promise<void> {
    this.flushing ??= this.drainWrites().finally(() => {
      this.flushing = null;
    });
    return this.flushing;
  }

  private async drainWrites(): Promise<void> {
    const store = this.options.store;
    if (!store) return;
    while (this.pendingWrites.length) {
      const batch = this.pendingWrites;
      this.pendingWrites = [];
      try {
        await store.insertChanges(batch);
        this.writeFailing = false;
      } catch (err) {
        this.pendingWrites = [...batch, ...this.pendingWrites];
        // one line per failure streak, not one per tick
        if (!this.writeFailing) this.log('storing state changes failed; kept in memory for the next try', err);
        this.writeFailing = true;
        return;
      }
    }
  }

  /** The last webhook outbox reading (every status.outbox_refresh_s), null before the first. */
  get outboxFigures(): (OutboxFigures & { asOfMs: number }) | null {
    return this.outbox;
  }

  private maybeReadOutbox(nowMs: number, everyMs: number): void {
    const store = this.options.store;
    if (!store || this.outboxReading || nowMs - this.lastOutboxTryMs < everyMs) return;
    this.outboxReading = true;
    this.lastOutboxTryMs = nowMs;
    store
      .outbox()
      .then(
        (figures) => {
          this.outbox = { ...figures, asOfMs: this.clock() };
        },
        (err: unknown) => this.log('reading the webhook outbox failed', err),
      )
      .finally(() => {
        this.outboxReading = false;
      });
  }

  /** What a feed's configured url and headers are, for publicText to replace wherever an error repeats them. */
  private feedSecrets(feedId: string): Secrets {
    const feed = this.feedsById.get(feedId);
    return feed ? { locations: [feed.url], values: Object.values(feed.headers) } : {};
  }

  private allFeedSecrets(): Secrets {
    const feeds = [...this.feedsById.values()];
    return { locations: feeds.map((f) => f.url), values: feeds.flatMap((f) => Object.values(f.headers)) };
  }

  /** The health as the public may see it: its last error through publicText (status page, JSON, stream, incidents). */
  private publicHealth(h: FeedHealth): FeedHealth {
    if (h.last_error === null) return h;
    let shown = this.shownErrors.get(h.feed_id);
    if (shown?.raw !== h.last_error) {
      shown = { raw: h.last_error, shown: publicText(h.last_error, this.feedSecrets(h.feed_id)) };
      this.shownErrors.set(h.feed_id, shown);
    }
    return { ...h, last_error: shown.shown };
  }

  private async seedFromPollLog(store: StatusStore): Promise<void> {
    try {
      const seed = await store.pollSeed(this.startedMs - HOUR_MS, this.startedMs, this.startedMs - 7 * DAY_MS);
      for (const [feedId, history] of this.histories) {
        const last = seed.lastErrors.get(feedId);
        history.seed(
          seed.minutes.get(feedId) ?? [],
          last ? { error: publicText(last.error, this.feedSecrets(feedId)), atMs: last.atMs } : null,
        );
      }
      for (const id of seed.alertSources) if (this.feedsById.has(id)) this.alertSources.add(id);
    } catch (err) {
      this.log('could not read the last hour of polls', err);
    }
    try {
      const seed = await store.findingsSeed(this.startedMs - HOUR_MS, this.startedMs);
      for (const [feedId, rows] of seed) if (this.feedsById.has(feedId)) this.findingsHistory(feedId).seed(rows);
    } catch (err) {
      this.log("could not read the last hour of the feeds' rule findings", err);
    }
  }
}

/** A schedule's health with its last error as the public may see it (the source's URL or path replaced). */
function publicSchedule(h: ScheduleHealth): ScheduleHealth {
  const c = h.last_check;
  if (!c?.last_error) return h;
  return { ...h, last_check: { ...c, last_error: publicText(c.last_error, { locations: [h.source] }) } };
}

function stopEvents(counts: StopEventCounts | undefined): FeedStatus['stop_events'] {
  if (!counts) return null;
  const anomalies = Object.fromEntries(STOP_EVENT_ANOMALIES.map((kind) => [kind, counts.anomalies[kind] ?? 0]));
  return { written: counts.written, anomalies: anomalies as Record<StopEventAnomaly, number> };
}

function scheduleMatch(m: TripMatching | null | undefined): FeedStatus['schedule_match'] {
  if (!m || m.trips === 0) return null;
  return {
    trips: m.trips,
    matched: m.matched,
    unmatched: m.unmatched,
    ambiguous: m.ambiguous,
    loose: m.strategies.nyct_loose?.matched ?? 0,
    rate: Math.round(m.match_rate * 10_000) / 10_000,
  };
}

/** What the page shows, minus what only the clock moves (ages, rates over a growing span). */
function signatureOf(doc: StatusDocument): string {
  return JSON.stringify(doc, (key, value: unknown) => {
    if (key === 'generated_at' || key === 'header_age_s' || key === 'oldest_pending_age_s') return undefined;
    // what the node section's clocks move: beats, checks and heartbeats
    if (key === 'age_s' || key === 'updated_at' || key === 'checked_at' || key === 'last_ok_at') return undefined;
    if (key === 'heard_at' || key === 'heartbeat_age_s' || key === 'live_state_age_s') return undefined;
    if (key === 'minutes' || key === 'requests_per_minute' || key === 'degraded_s' || key === 'down_s')
      return undefined;
    return value;
  });
}
