// The current state held in memory for fast reads, and the change events it publishes.
import type { Config, FeedConfig } from '../core/config.ts';
import { domainEvent, rowEvent, type EventBus, type EventScope } from '../core/events.ts';
import { ServedIds } from '../core/served-ids.ts';
import { servedAlert, servedArrival, servedTrip, servedVehicle } from '../core/served-rows.ts';
import type { FeedHealth, LiveSlice, LiveView, ScheduleIndex } from '../core/ports.ts';
import {
  type StopEventAnomaly,
  isSuccessfulPoll,
  type Alert,
  type Arrival,
  type FeedPoll,
  type Freshness,
  type Mode,
  type TripObservation,
  type VehiclePosition,
} from '../core/types.ts';
import { AlertBook, type AlertChange } from './alert-lifecycle.ts';
import { diffTripArrivals } from './arrivals.ts';
import { alertData, arrivalUpdate, feedChange, tripCancellation, vehicleData } from './event-data.ts';
import { alertScope, scopeOfRows } from './event-scope.ts';
import { freshnessAt } from './freshness.ts';
import type { NormalizedPoll } from './normalize-feed.ts';
import { foldFindings, ruleChangeData } from './quality/health.ts';
import { DAY_MS, utcDate } from '../core/dates.ts';

/** Resolved alerts stay readable in memory this long; their versions stay in history for good. */
const RESOLVED_ALERT_KEEP_MS = 24 * 3_600_000;
/** trip.canceled is announced once per trip and service date; dates this old are forgotten. */
const CANCELED_MEMORY_DAYS = 3;

interface FeedSlot {
  feed: FeedConfig;
  health: FeedHealth;
  vehicles: VehiclePosition[];
  vehicleById: Map<string, VehiclePosition>;
  /** the modes of `vehicles`, in the order they first come */
  vehicleModes: Set<Mode>;
  arrivals: Arrival[];
  /** the last poll's rows by service date and trip, to announce only what changed */
  tripArrivals: Map<string, Arrival[]>;
  changedMs: number | null;
  /** freshness changes are announced once the feed has delivered a body since start */
  seenWorking: boolean;
  /**
   * what the feed's last data concerned: the scope of its feed.stale, feed.recovered and rule
   * events. Worked out from the poll's rows when first asked (those events are rare, a poll's rows
   * thousands), with the ids and schedule of that poll.
   */
  scope: () => EventScope;
  /** moves whenever `health` changes */
  healthVersion: number;
}

export interface LiveStateOptions {
  config: Readonly<Config>;
  bus: EventBus;
  now?: () => number;
  initialAlerts?: readonly Alert[];
  /** the schedule of a feed: tells an alert's rail lines from its bus and streetcar routes in events */
  scheduleFor?: (feed: FeedConfig) => ScheduleIndex | undefined;
  /** the ids events carry, as REST serves them (core/served-ids.ts); default: as stored */
  servedIds?: () => ServedIds;
}

export class LiveState implements LiveView {
  private readonly slots = new Map<string, FeedSlot>();
  private readonly book = new AlertBook();
  private readonly canceledSeen = new Set<string>();
  private readonly now: () => number;
  /** every slice's moves added up: moves whenever any slice does */
  private versionCounter = 0;
  private readonly sliceVersions = new Map<LiveSlice, number>();
  /** lists rebuilt when their slice moved, by slice, with the version they were built at */
  private readonly lists = new Map<LiveSlice, { version: number; list: readonly unknown[] }>();
  private readonly changeListeners = new Set<() => void>();

  private readonly ids: () => ServedIds;

  constructor(private readonly options: LiveStateOptions) {
    this.now = options.now ?? Date.now;
    this.ids = options.servedIds ?? (() => ServedIds.NONE);
    for (const feed of options.config.feeds) this.slots.set(feed.id, newSlot(feed));
    if (options.initialAlerts?.length) this.book.restore(options.initialAlerts);
  }

  get version(): number {
    return this.versionCounter;
  }

  sliceVersion(slice: LiveSlice): number {
    return this.sliceVersions.get(slice) ?? 0;
  }

  feedVersion(feedId: string): number {
    return this.slots.get(feedId)?.healthVersion ?? -1;
  }

  onChange(listener: () => void): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  vehicles(mode: Mode): readonly VehiclePosition[] {
    return this.list(`vehicles:${mode}`, () => {
      const out: VehiclePosition[] = [];
      for (const slot of this.slots.values()) for (const v of slot.vehicles) if (v.mode === mode) out.push(v);
      return out;
    });
  }

  arrivals(): readonly Arrival[] {
    return this.list('arrivals', () => {
      const out: Arrival[] = [];
      for (const slot of this.slots.values()) for (const a of slot.arrivals) out.push(a);
      return out;
    });
  }

  alerts(): readonly Alert[] {
    return this.list('alerts', () => this.book.list());
  }

  feeds(): readonly FeedHealth[] {
    return this.list('feeds', () => [...this.slots.values()].map((s) => ({ ...s.health })));
  }

  feed(feedId: string): FeedHealth | undefined {
    const health = this.slots.get(feedId)?.health;
    return health && { ...health };
  }

  /** Adds a feed, or gives a known one its new settings (its entities stay until its next poll). */
  upsertFeed(feed: FeedConfig): void {
    const slot = this.slots.get(feed.id);
    if (slot) {
      slot.feed = feed;
      this.healthChanged(slot);
    } else {
      this.slots.set(feed.id, newSlot(feed));
      this.bump('feeds');
      this.bump('freshness');
    }
  }

  /**
   * Forgets a feed: its vehicles and arrivals leave the state, and its alerts are resolved as
   * when they leave a feed (returned, to be recorded in history, so a restart does not bring
   * them back as active).
   */
  removeFeed(feedId: string, nowMs: number = this.now()): Alert[] {
    const slot = this.slots.get(feedId);
    if (!slot || !this.slots.delete(feedId)) return [];
    const versions = this.publishAlertChanges(this.book.applyFeed(feedId, [], nowMs), nowMs);
    for (const mode of slot.vehicleModes) this.bump(`vehicles:${mode}`);
    if (slot.arrivals.length) this.bump('arrivals');
    this.bump('feeds');
    this.bump('freshness');
    return versions;
  }

  /**
   * Folds one poll in. Rows replace the feed's previous vehicles and arrivals; failed and
   * unchanged polls only update health. Returns the alert versions to record in history.
   */
  applyPoll(poll: FeedPoll, rows?: NormalizedPoll): Alert[] {
    const slot = this.slots.get(poll.feed_id);
    if (!slot) throw new Error(`unknown feed ${poll.feed_id}`);
    const h = slot.health;
    const succeeded = isSuccessfulPoll(poll.status);
    h.polls++;
    h.last_poll_ms = poll.polled_ms;
    h.last_status = poll.status;
    h.last_error = poll.error;
    if (!succeeded) h.failures++;
    else h.last_success_ms = poll.polled_ms;
    for (const n of Object.values(poll.rejected)) h.rejected += n ?? 0;
    if (poll.stop_events) {
      // a new object each time: copies of the health handed out earlier keep what they said
      const before = h.stop_events ?? { written: 0, anomalies: {} };
      const anomalies = { ...before.anomalies };
      for (const [kind, n] of Object.entries(poll.stop_events.anomalies) as [StopEventAnomaly, number][])
        anomalies[kind] = (anomalies[kind] ?? 0) + n;
      h.stop_events = { written: before.written + poll.stop_events.written, anomalies };
    }

    let versions: Alert[] = [];
    // a duplicate is a snapshot stored before (e.g. before a restart): still the feed's current data
    if (rows && (poll.status === 'ok' || poll.status === 'duplicate')) {
      slot.changedMs = poll.polled_ms;
      h.entities = rows.entities;
      h.header_timestamp_ms = rows.header_timestamp_ms;
      h.matching = poll.matching;
      this.replaceVehicles(slot, rows.vehicles, poll.polled_ms);
      this.replaceArrivals(slot, rows.arrivals, poll.polled_ms);
      this.announceCancellations(rows.trips, poll.polled_ms);
      versions = this.publishAlertChanges(
        this.book.applyFeed(slot.feed.id, rows.alerts, poll.polled_ms),
        poll.polled_ms,
      );
      const schedule = rows.alerts.length ? this.options.scheduleFor?.(slot.feed) : undefined;
      const feed = slot.feed;
      const ids = this.ids();
      let scope: EventScope | undefined;
      slot.scope = () => (scope ??= scopeOfRows(feed, rows, schedule, ids));
    }
    if (poll.findings) this.foldRules(slot, poll);
    this.evaluateFreshness(slot, this.now());
    // counters and poll times moved, whatever the poll brought
    this.healthChanged(slot);
    return versions;
  }

  /** A checked body's rule findings: the feed's rules, and an event for each rule that starts or stops firing. */
  private foldRules(slot: FeedSlot, poll: FeedPoll): void {
    const { rules, changes } = foldFindings(slot.health.rules, poll.findings!, poll.polled_ms);
    slot.health.rules = rules;
    for (const change of changes) {
      const type = change.firing ? 'feed.rule_firing' : 'feed.rule_cleared';
      this.options.bus.publish(domainEvent(type, poll.polled_ms, slot.scope(), ruleChangeData(slot.feed.id, change)));
    }
  }

  /** A poll's status settled after it was applied (a duplicate found late): its health says so. */
  restatus(poll: FeedPoll): void {
    const slot = this.slots.get(poll.feed_id);
    if (!slot || slot.health.last_poll_ms !== poll.polled_ms) return;
    slot.health.last_status = poll.status;
    this.healthChanged(slot);
  }

  /** Re-evaluates what time alone changes: freshness and alert periods. Returns alert versions. */
  tick(nowMs: number = this.now()): Alert[] {
    for (const slot of this.slots.values()) this.evaluateFreshness(slot, nowMs);
    const versions = this.publishAlertChanges(this.book.tick(nowMs), nowMs);
    // publishAlertChanges moved the alerts slice for the versions; a pruned alert moves it too
    if (this.book.prune(nowMs - RESOLVED_ALERT_KEEP_MS) > 0) this.bump('alerts');
    this.forgetOldCancellations(nowMs);
    return versions;
  }

  private evaluateFreshness(slot: FeedSlot, nowMs: number): void {
    const h = slot.health;
    const next = freshnessAt(
      { header_ms: h.header_timestamp_ms, changed_ms: slot.changedMs },
      nowMs,
      this.options.config.freshness,
    );
    const previous = h.freshness;
    // the first verdict once the feed has delivered is a baseline, not a change worth an event
    const baseline = !slot.seenWorking;
    if (slot.changedMs !== null) slot.seenWorking = true;
    if (next === previous) return;
    h.freshness = next;
    this.healthChanged(slot);
    this.bump('freshness');
    if (baseline) return;
    const rank: Record<Freshness, number> = { fresh: 0, stale: 1, expired: 2 };
    const type = next === 'fresh' ? 'feed.recovered' : 'feed.stale';
    if (type === 'feed.stale' && rank[next] < rank[previous]) return; // expired → stale is no recovery yet
    this.options.bus.publish(domainEvent(type, nowMs, slot.scope(), feedChange(h, previous)));
  }

  private replaceVehicles(slot: FeedSlot, vehicles: VehiclePosition[], nowMs: number): void {
    const previous = slot.vehicleById;
    const next = new Map<string, VehiclePosition>();
    const nextModes = new Set<Mode>();
    let lastMode: Mode | null = null;
    const ids = this.ids();
    for (const v of vehicles) {
      next.set(v.vehicle_id, v);
      if (v.mode && v.mode !== lastMode) {
        nextModes.add(v.mode);
        lastMode = v.mode;
      }
      const before = previous.get(v.vehicle_id);
      if (
        before &&
        before.timestamp_ms === v.timestamp_ms &&
        before.lat === v.lat &&
        before.lon === v.lon &&
        before.trip_id === v.trip_id
      )
        continue;
      const served = servedVehicle(ids, v);
      this.options.bus.publish(rowEvent('vehicle.position', nowMs, v.mode, served.route_id, vehicleData(served)));
    }
    // every delivered body moves the modes it touches (observed_ms alone changes each row)
    const modes = new Set(slot.vehicleModes);
    for (const m of nextModes) modes.add(m);
    for (const m of modes) this.bump(`vehicles:${m}`);
    slot.vehicles = vehicles;
    slot.vehicleById = next;
    slot.vehicleModes = nextModes;
  }

  /**
   * One arrival.updated per trip whose rows changed, carrying only the changed rows: a trip
   * seen for the first time sends every row (`partial: false`); later, the new or changed rows
   * and the stops it no longer predicts (`removed_stops`). A trip that did not change sends
   * nothing. Consumers merge rows by (stop_sequence, stop_id).
   */
  private replaceArrivals(slot: FeedSlot, arrivals: Arrival[], nowMs: number): void {
    const byTrip = new Map<string, Arrival[]>();
    // a trip's rows come one after another (normalize builds them per trip): the key is built
    // once per run of rows, not per row (31k strings a poll on a large feed)
    let list: Arrival[] | undefined;
    let run: Arrival | undefined;
    for (const a of arrivals) {
      if (
        !run ||
        a.trip_id !== run.trip_id ||
        a.service_date !== run.service_date ||
        a.trip_instance !== run.trip_instance
      ) {
        run = a;
        const key = `${a.service_date ?? ''}|${a.trip_id}|${a.trip_instance ?? ''}`;
        list = byTrip.get(key);
        if (!list) {
          list = [];
          byTrip.set(key, list);
        }
      }
      list!.push(a);
    }
    const ids = this.ids();
    for (const [key, list] of byTrip) {
      const previous = slot.tripArrivals.get(key);
      const changes = diffTripArrivals(previous, list);
      if (!changes) continue;
      const first = servedArrival(ids, list[0]!);
      const partial = previous !== undefined && changes.changed.length < list.length;
      const scope = ids.scopeOf(first);
      this.options.bus.publish(
        rowEvent(
          'arrival.updated',
          nowMs,
          first.mode,
          first.route_id,
          arrivalUpdate(
            first,
            partial,
            list.length,
            changes.changed.map((a) => servedArrival(ids, a)),
            changes.removed.map((r) => ({ ...r, stop_id: ids.serve(scope, 'stop', r.stop_id) })),
          ),
        ),
      );
    }
    if (arrivals.length || slot.arrivals.length) this.bump('arrivals');
    slot.arrivals = arrivals;
    slot.tripArrivals = byTrip;
  }

  private announceCancellations(trips: readonly TripObservation[], nowMs: number): void {
    const ids = this.ids();
    for (const raw of trips) {
      const relationship = raw.relationship;
      if (relationship !== 'canceled' && relationship !== 'deleted') continue;
      const t = servedTrip(ids, raw);
      const key = `${t.service_date}|${t.feed_id}|${t.trip_id}`;
      if (this.canceledSeen.has(key)) continue;
      this.canceledSeen.add(key);
      this.options.bus.publish(
        rowEvent('trip.canceled', nowMs, t.mode, t.route_id, tripCancellation({ ...t, relationship })),
      );
    }
  }

  private forgetOldCancellations(nowMs: number): void {
    const cutoff = utcDate(nowMs - CANCELED_MEMORY_DAYS * DAY_MS);
    for (const key of this.canceledSeen) if (key.slice(0, 10) < cutoff) this.canceledSeen.delete(key);
  }

  private publishAlertChanges(changes: AlertChange[], nowMs: number): Alert[] {
    const ids = this.ids();
    for (const { kind, alert } of changes)
      this.options.bus.publish(
        domainEvent(`alert.${kind}`, nowMs, this.alertScope(alert, ids), alertData(servedAlert(ids, alert))),
      );
    if (changes.length) this.bump('alerts');
    return changes.map((c) => c.alert);
  }

  private alertScope(alert: Alert, ids: ServedIds): EventScope {
    const feed = this.slots.get(alert.feed_id)?.feed;
    return alertScope(alert, feed, feed && this.options.scheduleFor?.(feed), ids);
  }

  private bump(slice: LiveSlice): void {
    this.sliceVersions.set(slice, (this.sliceVersions.get(slice) ?? 0) + 1);
    this.versionCounter++;
    for (const listener of this.changeListeners) listener();
  }

  private healthChanged(slot: FeedSlot): void {
    slot.healthVersion++;
    this.bump('feeds');
  }

  /** The slice's list as of its version, rebuilt only after it moved. */
  private list<T>(slice: LiveSlice, build: () => T[]): readonly T[] {
    const version = this.sliceVersion(slice);
    let cached = this.lists.get(slice);
    if (!cached || cached.version !== version) {
      cached = { version, list: build() };
      this.lists.set(slice, cached);
    }
    return cached.list as readonly T[];
  }
}

function newSlot(feed: FeedConfig): FeedSlot {
  return {
    feed,
    health: {
      feed_id: feed.id,
      kind: feed.kind,
      freshness: 'expired',
      header_timestamp_ms: null,
      last_poll_ms: null,
      last_success_ms: null,
      last_status: null,
      last_error: null,
      entities: 0,
      polls: 0,
      failures: 0,
      rejected: 0,
      matching: null,
    },
    vehicles: [],
    vehicleById: new Map(),
    vehicleModes: new Set(),
    arrivals: [],
    tripArrivals: new Map(),
    changedMs: null,
    seenWorking: false,
    scope: () => ({ modes: [], routes: [], lines: [] }),
    healthVersion: 0,
  };
}
