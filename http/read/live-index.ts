// Sorted and indexed views of the LiveView, each computed once per version of the slices it reads
// (core/ports.ts LIVE_SLICES) and shared by every request until one of them changes. Every row
// here carries its ids as served (core/served-ids.ts): filters, summaries and bodies read them so.
import type { FeedHealth, LiveSlice, LiveView } from '../../core/ports.ts';
import { ServedIds } from '../../core/served-ids.ts';
import { servedAlert, servedArrival, servedVehicle } from '../../core/served-rows.ts';
import { MODES, type Alert, type Arrival, type Mode, type VehiclePosition } from '../../core/types.ts';
import { compareKeys, type CursorValue } from '../cursor.ts';

/** Newest first; the id breaks ties. first_seen never changes, so pages stay stable. */
export function alertKey(a: Alert): CursorValue[] {
  return [Number.isFinite(a.first_seen_ms) ? -a.first_seen_ms : 0, a.id];
}

/** Grouped by line and trip, stops in order: immutable identity, so pages stay stable. */
export function arrivalKey(a: Arrival): CursorValue[] {
  return [a.route_id ?? '', a.trip_id, a.trip_instance ?? '', a.stop_sequence ?? -1, a.stop_id, a.feed_id];
}

export function vehicleKey(v: VehiclePosition): CursorValue[] {
  return [v.route_id ?? '', v.vehicle_id, v.feed_id];
}

function sortedBy<T>(items: readonly T[], keyOf: (item: T) => CursorValue[]): T[] {
  return items
    .map((item) => ({ item, key: keyOf(item) }))
    .sort((a, b) => compareKeys(a.key, b.key))
    .map((d) => d.item);
}

export class LiveIndex {
  /** derived views by name, each with the version (a sum of slice versions) it was built at */
  private readonly memos = new Map<string, { version: number; value: unknown }>();
  /** modes each feed has served, kept across versions so a feed that went down keeps its place */
  private readonly feedModes = new Map<string, Set<Mode>>();
  private alertsToken: { at: number; token: string } | null = null;

  constructor(
    readonly live: LiveView,
    /** the served ids in force; a new mapping moves every slice */
    private readonly ids: () => ServedIds = () => ServedIds.NONE,
  ) {}

  /** moves whenever anything in the live state moves */
  get version(): number {
    return this.live.version + this.ids().generation;
  }

  /**
   * The slice's version; a view without slices moves them all with its one version. A new
   * mapping of served ids moves every slice (its generation only grows, as versions do).
   */
  sliceVersion(slice: LiveSlice): number {
    return (this.live.sliceVersion ? this.live.sliceVersion(slice) : this.live.version) + this.ids().generation;
  }

  /**
   * One number that moves when any of the slices moves: versions only grow, so their sum does
   * too, and it changes exactly when one of them changed. Cache key of a body reading them.
   */
  versionOf(slices: readonly LiveSlice[]): number {
    let sum = 0;
    for (const slice of slices) sum += this.sliceVersion(slice);
    return sum;
  }

  /**
   * Cache key of a body built from the alerts and the health of the feeds holding them (their
   * freshness, `freshness.sources`): a poll of a feed without alerts leaves it alone.
   */
  alertsVersion(): string {
    const at = this.live.version + this.ids().generation;
    if (this.alertsToken?.at === at) return this.alertsToken.token;
    let health = 0;
    for (const feedId of this.alertFeeds())
      health += this.live.feedVersion ? this.live.feedVersion(feedId) : this.sliceVersion('feeds');
    // a feed added or removed moves `freshness`: the same health sum over another set of feeds is another key
    const token = `${this.sliceVersion('alerts')}.${health}.${this.sliceVersion('freshness')}`;
    this.alertsToken = { at, token };
    return token;
  }

  private memo<T>(name: string, version: number, build: () => T): T {
    let entry = this.memos.get(name);
    if (!entry || entry.version !== version) {
      entry = { version, value: build() };
      this.memos.set(name, entry);
    }
    return entry.value as T;
  }

  alerts(): readonly Alert[] {
    return this.memo('alerts', this.sliceVersion('alerts'), () => sortedBy(this.servedAlerts(), alertKey));
  }

  private servedAlerts(): readonly Alert[] {
    const ids = this.ids();
    return this.memo('servedAlerts', this.sliceVersion('alerts'), () =>
      ids.scoped ? this.live.alerts().map((a) => servedAlert(ids, a)) : this.live.alerts(),
    );
  }

  /** Every arrival, of every mode, as served. */
  private arrivals(): readonly Arrival[] {
    const ids = this.ids();
    return this.memo('servedArrivals', this.sliceVersion('arrivals'), () =>
      ids.scoped ? this.live.arrivals().map((a) => servedArrival(ids, a)) : this.live.arrivals(),
    );
  }

  private servedVehicles(mode: Mode): readonly VehiclePosition[] {
    const ids = this.ids();
    const slice: LiveSlice = `vehicles:${mode}`;
    return this.memo(`served:${slice}`, this.sliceVersion(slice), () =>
      ids.scoped ? this.live.vehicles(mode).map((v) => servedVehicle(ids, v)) : this.live.vehicles(mode),
    );
  }

  /** Feed ids of the alerts held. */
  private alertFeeds(): ReadonlySet<string> {
    return this.memo(
      'alertFeeds',
      this.sliceVersion('alerts'),
      () => new Set(this.servedAlerts().map((a) => a.feed_id)),
    );
  }

  railArrivals(): readonly Arrival[] {
    return this.memo('railArrivals', this.sliceVersion('arrivals'), () => {
      const rail = this.arrivals().filter((a) => a.mode === 'rail');
      for (const a of rail) this.noteFeedMode(a.feed_id, 'rail');
      return sortedBy(rail, arrivalKey);
    });
  }

  vehicles(mode: Mode): readonly VehiclePosition[] {
    const slice: LiveSlice = `vehicles:${mode}`;
    return this.memo(slice, this.sliceVersion(slice), () => {
      const raw = this.servedVehicles(mode);
      for (const v of raw) this.noteFeedMode(v.feed_id, mode);
      return sortedBy(raw, vehicleKey);
    });
  }

  feeds(): ReadonlyMap<string, FeedHealth> {
    return this.memo('feeds', this.sliceVersion('feeds'), () => new Map(this.live.feeds().map((f) => [f.feed_id, f])));
  }

  /** Feeds serving a mode (seen in its data now or before), plus feeds that never served any. */
  sources(mode: Mode): FeedHealth[] {
    // index every mode first, so which feeds are listed never depends on request order
    this.railArrivals();
    for (const m of MODES) if (m !== 'rail') this.vehicles(m);
    return [...this.feeds().values()]
      .filter((f) => f.kind === 'gtfs-rt' && (this.feedModes.get(f.feed_id)?.has(mode) ?? true))
      .sort((a, b) => (a.feed_id < b.feed_id ? -1 : a.feed_id > b.feed_id ? 1 : 0));
  }

  /**
   * Delay of each trip at its earliest remaining stop, keyed `feed\0trip`, and `feed\0trip\0vehicle`
   * where the arrivals name the vehicle: a trip id carried for two trains has one delay per train.
   */
  tripDelays(): ReadonlyMap<string, number> {
    return this.memo('tripDelays', this.sliceVersion('arrivals'), () => {
      const best = new Map<string, { seq: number; delay: number }>();
      const keep = (k: string, seq: number, delay: number): void => {
        const prev = best.get(k);
        if (!prev || seq < prev.seq) best.set(k, { seq, delay });
      };
      for (const a of this.arrivals()) {
        if (a.delay_s === null || !Number.isFinite(a.delay_s)) continue;
        const k = `${a.feed_id}\u0000${a.trip_id}`;
        const seq = a.stop_sequence ?? Number.MAX_SAFE_INTEGER;
        keep(k, seq, a.delay_s);
        if (a.vehicle_id !== null) keep(`${k}\u0000${a.vehicle_id}`, seq, a.delay_s);
      }
      return new Map([...best].map(([k, v]) => [k, v.delay]));
    });
  }

  /** Route (or line) ids present in the live data of a mode: vehicles, arrivals, alerts. */
  routesSeen(mode: Mode): ReadonlySet<string> {
    return this.memo(`routesSeen:${mode}`, this.versionOf([`vehicles:${mode}`, 'arrivals', 'alerts']), () => {
      const seen = new Set<string>();
      for (const v of this.servedVehicles(mode)) if (v.route_id) seen.add(v.route_id);
      for (const a of this.arrivals()) if (a.mode === mode && a.route_id) seen.add(a.route_id);
      // an alert of several modes does not say which of its routes is which mode's (Red and 39)
      for (const al of this.servedAlerts())
        if (al.modes.length === 1 && al.modes[0] === mode) for (const r of al.routes) seen.add(r);
      return seen;
    });
  }

  /** Station and stop ids in the live data: alerts' stations, arrivals' stations and stops. */
  stationsSeen(): ReadonlySet<string> {
    return this.memo('stationsSeen', this.versionOf(['alerts', 'arrivals']), () => {
      const seen = new Set<string>();
      for (const al of this.servedAlerts()) for (const s of al.stations) seen.add(s);
      for (const a of this.arrivals()) {
        seen.add(a.station_id);
        seen.add(a.stop_id);
      }
      return seen;
    });
  }

  /** Feed ids: every configured feed, and the feeds of alerts still held. */
  sourcesSeen(): ReadonlySet<string> {
    return this.memo('sourcesSeen', this.versionOf(['freshness', 'alerts']), () => {
      const seen = new Set(this.feeds().keys());
      for (const al of this.servedAlerts()) seen.add(al.feed_id);
      return seen;
    });
  }

  private noteFeedMode(feedId: string, mode: Mode): void {
    let modes = this.feedModes.get(feedId);
    if (!modes) {
      modes = new Set();
      this.feedModes.set(feedId, modes);
    }
    modes.add(mode);
  }
}
