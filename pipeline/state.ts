// The current state held in memory for fast reads, and the change events it publishes.
import type { Config, FeedConfig } from '../core/config.ts';
import type { DomainEvent, EventBus, EventType } from '../core/events.ts';
import type { FeedHealth, LiveView } from '../core/ports.ts';
import { isSuccessfulPoll, MODES, type Alert, type Arrival, type FeedPoll, type Freshness, type Mode, type TripObservation, type VehiclePosition } from '../core/types.ts';
import { AlertBook, type AlertChange } from './alert-lifecycle.ts';
import { diffTripArrivals } from './arrivals.ts';
import { freshnessAt } from './freshness.ts';
import type { NormalizedPoll } from './normalize-feed.ts';

/** Resolved alerts stay readable in memory this long; their versions stay in history for good. */
const RESOLVED_ALERT_KEEP_MS = 24 * 3_600_000;
/** trip.canceled is announced once per trip and service date; dates this old are forgotten. */
const CANCELED_MEMORY_DAYS = 3;

interface FeedSlot {
  feed: FeedConfig;
  health: FeedHealth;
  vehicles: VehiclePosition[];
  vehicleById: Map<string, VehiclePosition>;
  arrivals: Arrival[];
  /** the last poll's rows by service date and trip, to announce only what changed */
  tripArrivals: Map<string, Arrival[]>;
  changedMs: number | null;
  /** freshness changes are announced once the feed has delivered a body since start */
  seenWorking: boolean;
  modes: Mode[];
  routes: string[];
}

export interface LiveStateOptions {
  config: Readonly<Config>;
  bus: EventBus;
  now?: () => number;
  initialAlerts?: readonly Alert[];
}

export class LiveState implements LiveView {
  private readonly slots = new Map<string, FeedSlot>();
  private readonly book = new AlertBook();
  private readonly canceledSeen = new Set<string>();
  private readonly now: () => number;
  private versionCounter = 0;
  private cacheVersion = -1;
  private vehiclesByMode = new Map<Mode, VehiclePosition[]>();
  private arrivalsCache: Arrival[] = [];
  private alertsCache: Alert[] = [];
  private feedsCache: FeedHealth[] = [];

  constructor(private readonly options: LiveStateOptions) {
    this.now = options.now ?? Date.now;
    for (const feed of options.config.feeds) this.slots.set(feed.id, newSlot(feed));
    if (options.initialAlerts?.length) this.book.restore(options.initialAlerts);
  }

  get version(): number {
    return this.versionCounter;
  }

  vehicles(mode: Mode): readonly VehiclePosition[] {
    this.refreshCaches();
    return this.vehiclesByMode.get(mode) ?? [];
  }

  arrivals(): readonly Arrival[] {
    this.refreshCaches();
    return this.arrivalsCache;
  }

  alerts(): readonly Alert[] {
    this.refreshCaches();
    return this.alertsCache;
  }

  feeds(): readonly FeedHealth[] {
    this.refreshCaches();
    return this.feedsCache;
  }

  feed(feedId: string): FeedHealth | undefined {
    const health = this.slots.get(feedId)?.health;
    return health && { ...health };
  }

  /** Adds a feed, or gives a known one its new settings (its entities stay until its next poll). */
  upsertFeed(feed: FeedConfig): void {
    const slot = this.slots.get(feed.id);
    if (slot) slot.feed = feed;
    else this.slots.set(feed.id, newSlot(feed));
    this.bump();
  }

  /**
   * Forgets a feed: its vehicles and arrivals leave the state, and its alerts are resolved as
   * when they leave a feed (returned, to be recorded in history, so a restart does not bring
   * them back as active).
   */
  removeFeed(feedId: string, nowMs: number = this.now()): Alert[] {
    if (!this.slots.delete(feedId)) return [];
    const versions = this.publishAlertChanges(this.book.applyFeed(feedId, [], nowMs), nowMs);
    this.bump();
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
      versions = this.publishAlertChanges(this.book.applyFeed(slot.feed.id, rows.alerts, poll.polled_ms), poll.polled_ms);
      slot.modes = modesOf(rows);
      slot.routes = routesOf(rows);
    }
    this.evaluateFreshness(slot, this.now());
    this.bump();
    return versions;
  }

  /** Re-evaluates what time alone changes: freshness and alert periods. Returns alert versions. */
  tick(nowMs: number = this.now()): Alert[] {
    for (const slot of this.slots.values()) this.evaluateFreshness(slot, nowMs);
    const versions = this.publishAlertChanges(this.book.tick(nowMs), nowMs);
    if (this.book.prune(nowMs - RESOLVED_ALERT_KEEP_MS) > 0 || versions.length) this.bump();
    this.forgetOldCancellations(nowMs);
    return versions;
  }

  private evaluateFreshness(slot: FeedSlot, nowMs: number): void {
    const h = slot.health;
    const next = freshnessAt({ header_ms: h.header_timestamp_ms, changed_ms: slot.changedMs }, nowMs, this.options.config.freshness);
    const previous = h.freshness;
    // the first verdict once the feed has delivered is a baseline, not a change worth an event
    const baseline = !slot.seenWorking;
    if (slot.changedMs !== null) slot.seenWorking = true;
    if (next === previous) return;
    h.freshness = next;
    this.bump();
    if (baseline) return;
    const rank: Record<Freshness, number> = { fresh: 0, stale: 1, expired: 2 };
    const type: EventType = next === 'fresh' ? 'feed.recovered' : 'feed.stale';
    if (type === 'feed.stale' && rank[next] < rank[previous]) return; // expired → stale is no recovery yet
    this.publish(type, nowMs, slot.modes, slot.routes, {
      feed_id: slot.feed.id, freshness: next, previous, header_timestamp_ms: h.header_timestamp_ms,
    });
  }

  private replaceVehicles(slot: FeedSlot, vehicles: VehiclePosition[], nowMs: number): void {
    const previous = slot.vehicleById;
    const next = new Map<string, VehiclePosition>();
    for (const v of vehicles) {
      next.set(v.vehicle_id, v);
      const before = previous.get(v.vehicle_id);
      if (before && before.timestamp_ms === v.timestamp_ms && before.lat === v.lat && before.lon === v.lon && before.trip_id === v.trip_id) continue;
      this.publish('vehicle.position', nowMs, v.mode ? [v.mode] : [], v.route_id ? [v.route_id] : [], v);
    }
    slot.vehicles = vehicles;
    slot.vehicleById = next;
  }

  /**
   * One arrival.updated per trip whose rows changed, carrying only the changed rows: a trip
   * seen for the first time sends every row (`partial: false`); later, the new or changed rows
   * and the stops it no longer predicts (`removed_stops`). A trip that did not change sends
   * nothing. Consumers merge rows by (stop_sequence, stop_id).
   */
  private replaceArrivals(slot: FeedSlot, arrivals: Arrival[], nowMs: number): void {
    const byTrip = new Map<string, Arrival[]>();
    for (const a of arrivals) {
      const key = `${a.service_date ?? ''}|${a.trip_id}|${a.trip_instance ?? ''}`;
      let list = byTrip.get(key);
      if (!list) byTrip.set(key, (list = []));
      list.push(a);
    }
    for (const [key, list] of byTrip) {
      const previous = slot.tripArrivals.get(key);
      const changes = diffTripArrivals(previous, list);
      if (!changes) continue;
      const first = list[0]!;
      const partial = previous !== undefined && changes.changed.length < list.length;
      this.publish('arrival.updated', nowMs, first.mode ? [first.mode] : [], first.route_id ? [first.route_id] : [], {
        feed_id: first.feed_id, trip_id: first.trip_id, trip_instance: first.trip_instance, route_id: first.route_id,
        direction_id: first.direction_id, service_date: first.service_date, trip_relationship: first.trip_relationship,
        partial, stop_count: list.length, arrivals: changes.changed, removed_stops: changes.removed,
      });
    }
    slot.arrivals = arrivals;
    slot.tripArrivals = byTrip;
  }

  private announceCancellations(trips: readonly TripObservation[], nowMs: number): void {
    for (const t of trips) {
      if (t.relationship !== 'canceled' && t.relationship !== 'deleted') continue;
      const key = `${t.service_date}|${t.feed_id}|${t.trip_id}`;
      if (this.canceledSeen.has(key)) continue;
      this.canceledSeen.add(key);
      this.publish('trip.canceled', nowMs, t.mode ? [t.mode] : [], t.route_id ? [t.route_id] : [], t);
    }
  }

  private forgetOldCancellations(nowMs: number): void {
    const cutoff = new Date(nowMs - CANCELED_MEMORY_DAYS * 86_400_000).toISOString().slice(0, 10);
    for (const key of this.canceledSeen) if (key.slice(0, 10) < cutoff) this.canceledSeen.delete(key);
  }

  private publishAlertChanges(changes: AlertChange[], nowMs: number): Alert[] {
    for (const { kind, alert } of changes) this.publish(`alert.${kind}`, nowMs, alert.modes, alert.routes, alert);
    return changes.map((c) => c.alert);
  }

  private publish(type: EventType, atMs: number, modes: Mode[], routes: string[], data: unknown): void {
    const event: DomainEvent = { type, at_ms: atMs, modes, routes, data };
    this.options.bus.publish(event);
  }

  private bump(): void {
    this.versionCounter++;
  }

  private refreshCaches(): void {
    if (this.cacheVersion === this.versionCounter) return;
    this.cacheVersion = this.versionCounter;
    const byMode = new Map<Mode, VehiclePosition[]>(MODES.map((m) => [m, []]));
    const arrivals: Arrival[] = [];
    for (const slot of this.slots.values()) {
      for (const v of slot.vehicles) if (v.mode) byMode.get(v.mode)!.push(v);
      for (const a of slot.arrivals) arrivals.push(a);
    }
    this.vehiclesByMode = byMode;
    this.arrivalsCache = arrivals;
    this.alertsCache = this.book.list();
    this.feedsCache = [...this.slots.values()].map((s) => ({ ...s.health }));
  }
}

function newSlot(feed: FeedConfig): FeedSlot {
  return {
    feed,
    health: {
      feed_id: feed.id, kind: feed.kind, freshness: 'expired', header_timestamp_ms: null, last_poll_ms: null,
      last_success_ms: null, last_status: null, last_error: null, entities: 0, polls: 0, failures: 0, rejected: 0,
      matching: null,
    },
    vehicles: [],
    vehicleById: new Map(),
    arrivals: [],
    tripArrivals: new Map(),
    changedMs: null,
    seenWorking: false,
    modes: [],
    routes: [],
  };
}

function modesOf(rows: NormalizedPoll): Mode[] {
  const seen = new Set<Mode>();
  for (const v of rows.vehicles) if (v.mode) seen.add(v.mode);
  for (const t of rows.trips) if (t.mode) seen.add(t.mode);
  for (const a of rows.alerts) for (const m of a.modes) seen.add(m);
  return MODES.filter((m) => seen.has(m));
}

function routesOf(rows: NormalizedPoll): string[] {
  const seen = new Set<string>();
  for (const v of rows.vehicles) if (v.route_id) seen.add(v.route_id);
  for (const t of rows.trips) if (t.route_id) seen.add(t.route_id);
  for (const a of rows.alerts) for (const r of a.routes) seen.add(r);
  return [...seen].sort();
}
