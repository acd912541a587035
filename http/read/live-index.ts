// Sorted and indexed views of the LiveView, computed once per LiveView.version and shared by
// every request until the next change.
import type { FeedHealth, LiveView } from '../../core/ports.ts';
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

interface Derived {
  alerts?: Alert[];
  railArrivals?: Arrival[];
  vehicles: Map<Mode, VehiclePosition[]>;
  feeds?: Map<string, FeedHealth>;
  tripDelays?: Map<string, number>;
  routesSeen?: Map<Mode, Set<string>>;
  stationsSeen?: Set<string>;
  sourcesSeen?: Set<string>;
}

export class LiveIndex {
  private derivedVersion = Number.NaN;
  private derived: Derived = { vehicles: new Map() };
  /** modes each feed has served, kept across versions so a feed that went down keeps its place */
  private readonly feedModes = new Map<string, Set<Mode>>();

  constructor(readonly live: LiveView) {}

  get version(): number {
    return this.live.version;
  }

  private current(): Derived {
    if (this.live.version !== this.derivedVersion) {
      this.derivedVersion = this.live.version;
      this.derived = { vehicles: new Map() };
    }
    return this.derived;
  }

  alerts(): readonly Alert[] {
    const d = this.current();
    return (d.alerts ??= sortedBy(this.live.alerts(), alertKey));
  }

  railArrivals(): readonly Arrival[] {
    const d = this.current();
    if (!d.railArrivals) {
      const rail = this.live.arrivals().filter((a) => a.mode === 'rail');
      for (const a of rail) this.noteFeedMode(a.feed_id, 'rail');
      d.railArrivals = sortedBy(rail, arrivalKey);
    }
    return d.railArrivals;
  }

  vehicles(mode: Mode): readonly VehiclePosition[] {
    const d = this.current();
    let list = d.vehicles.get(mode);
    if (!list) {
      const raw = this.live.vehicles(mode);
      for (const v of raw) this.noteFeedMode(v.feed_id, mode);
      list = sortedBy(raw, vehicleKey);
      d.vehicles.set(mode, list);
    }
    return list;
  }

  feeds(): ReadonlyMap<string, FeedHealth> {
    const d = this.current();
    return (d.feeds ??= new Map(this.live.feeds().map((f) => [f.feed_id, f])));
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
    const d = this.current();
    if (!d.tripDelays) {
      const best = new Map<string, { seq: number; delay: number }>();
      const keep = (k: string, seq: number, delay: number): void => {
        const prev = best.get(k);
        if (!prev || seq < prev.seq) best.set(k, { seq, delay });
      };
      for (const a of this.live.arrivals()) {
        if (a.delay_s === null || !Number.isFinite(a.delay_s)) continue;
        const k = `${a.feed_id}\u0000${a.trip_id}`;
        const seq = a.stop_sequence ?? Number.MAX_SAFE_INTEGER;
        keep(k, seq, a.delay_s);
        if (a.vehicle_id !== null) keep(`${k}\u0000${a.vehicle_id}`, seq, a.delay_s);
      }
      d.tripDelays = new Map([...best].map(([k, v]) => [k, v.delay]));
    }
    return d.tripDelays;
  }

  /** Route (or line) ids present in the live data of a mode: vehicles, arrivals, alerts. */
  routesSeen(mode: Mode): ReadonlySet<string> {
    const d = this.current();
    d.routesSeen ??= new Map();
    let seen = d.routesSeen.get(mode);
    if (!seen) {
      seen = new Set<string>();
      for (const v of this.live.vehicles(mode)) if (v.route_id) seen.add(v.route_id);
      for (const a of this.live.arrivals()) if (a.mode === mode && a.route_id) seen.add(a.route_id);
      // an alert of several modes does not say which of its routes is which mode's (Red and 39)
      for (const al of this.live.alerts()) if (al.modes.length === 1 && al.modes[0] === mode) for (const r of al.routes) seen.add(r);
      d.routesSeen.set(mode, seen);
    }
    return seen;
  }

  /** Station and stop ids in the live data: alerts' stations, arrivals' stations and stops. */
  stationsSeen(): ReadonlySet<string> {
    const d = this.current();
    if (!d.stationsSeen) {
      const seen = new Set<string>();
      for (const al of this.live.alerts()) for (const s of al.stations) seen.add(s);
      for (const a of this.live.arrivals()) {
        seen.add(a.station_id);
        seen.add(a.stop_id);
      }
      d.stationsSeen = seen;
    }
    return d.stationsSeen;
  }

  /** Feed ids: every configured feed, and the feeds of alerts still held. */
  sourcesSeen(): ReadonlySet<string> {
    const d = this.current();
    if (!d.sourcesSeen) {
      const seen = new Set(this.feeds().keys());
      for (const al of this.live.alerts()) seen.add(al.feed_id);
      d.sourcesSeen = seen;
    }
    return d.sourcesSeen;
  }

  private noteFeedMode(feedId: string, mode: Mode): void {
    let modes = this.feedModes.get(feedId);
    if (!modes) this.feedModes.set(feedId, (modes = new Set()));
    modes.add(mode);
  }
}
