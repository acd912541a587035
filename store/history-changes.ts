import type { Arrival, TripObservation, VehiclePosition } from '../core/types.ts';
import { TripIndex } from './trip-index.ts';

// Change-only history: which of a poll's rows are worth a row in the history tables. A feed
// repeats itself: between two polls most predictions, trips and vehicles are what they were.
// This keeps, per feed, what was stored last for each trip, stop and vehicle on the road, and
// holds back the newest unchanged rows that a later reader needs (the last prediction before a
// stop was passed, the last poll a trip was seen in its state) until they become the last ones.
// The rules, and what a row means under them, are in store/SCHEMA.md ("Change-only history").

export interface ChangeRules {
  /** a prediction is stored again once it moved at least this far from the one stored last */
  predictionChangeMs: number;
  /** a trip or vehicle unseen this long in its feed's time is closed: what is held is written, its memory dropped */
  tripTimeoutMs: number;
  /** the longest a run of unchanged trip observations goes without a row (what a crash can lose of it) */
  checkpointMs: number;
}

/** A trip observation as stored: the polls whose identical rows it stands for. */
export interface StoredTripObservation extends TripObservation {
  polls: number;
}

/** The rows of a poll (or of a flush) to store, and the memory change that goes with them. */
export interface Selection {
  vehicles: VehiclePosition[];
  arrivals: Arrival[];
  trips: StoredTripObservation[];
  /** applies the selection to the memory: call it once its rows are committed, never otherwise */
  commit(): void;
}

/** What a flush writes: every held row, or those of service days up to `through` (YYYY-MM-DD). */
export interface HeldFilter {
  through?: string;
}

interface TripRun {
  /** its key in FeedMemory.trips, and the trip id it is indexed by there with serviceDate */
  key: string;
  tripId: string;
  /** the run's content: its one row per poll, or (several rows a poll) their sorted contents */
  sample: TripObservation | null;
  signature: string | null;
  /** their relationships, sorted, once each */
  relationships: string;
  /** another feed's rows of the trip changed since this run's last row: its next poll is kept */
  nudged: boolean;
  serviceDate: string;
  lastMs: number;
  /** observed time of the last rows written */
  writtenMs: number;
  /** the newest poll's rows, not written yet, standing for `heldPolls` polls */
  held: readonly TripObservation[] | null;
  heldPolls: number;
  /** the selection that saw it last (not part of what a commit applies: ids are never reused) */
  seenBy: number;
}

interface StopSeen {
  written: Arrival;
  /** the newest prediction when it differs too little to be written; written once it is the last */
  held: Arrival | null;
  seenBy: number;
}

/** A stop of a trip: its stop_sequence when the feed gives one, else its stop id. */
type StopKey = number | string;

interface TripStops {
  lastMs: number;
  serviceDate: string | null;
  stops: Map<StopKey, StopSeen>;
  seenBy: number;
}

interface VehicleSeen {
  stored: VehiclePosition;
  lastMs: number;
  seenBy: number;
}

interface FeedMemory {
  /** by service date and trip id (tripKey), in the order first seen: what sweeps and flushes walk */
  trips: Map<string, TripRun>;
  /** the same runs, looked up per row without a key string */
  tripIndex: TripIndex<TripRun>;
  /** by service date, trip id and trip instance */
  stops: Map<string, TripStops>;
  vehicles: Map<string, VehicleSeen>;
}

/**
 * What a selection will change in memory once committed. Stops and vehicles, tens of thousands a
 * poll, are recorded in arrays rather than a closure each.
 */
class Changes {
  readonly ops: (() => void)[] = [];
  readonly stops: StopSeen[] = [];
  readonly stopRows: Arrival[] = [];
  readonly stopWritten: boolean[] = [];
  readonly vehicles: VehicleSeen[] = [];
  readonly vehicleRows: VehiclePosition[] = [];
  readonly vehicleStored: boolean[] = [];
  readonly runs: TripRun[] = [];
  readonly runRows: (readonly TripObservation[])[] = [];
  readonly runAt: number[] = [];
  readonly runWritten: boolean[] = [];

  apply(): void {
    for (let i = 0; i < this.runs.length; i++) {
      const run = this.runs[i]!;
      const at = this.runAt[i]!;
      run.lastMs = at;
      if (this.runWritten[i]) {
        run.held = null;
        run.heldPolls = 0;
        run.writtenMs = at;
        run.nudged = false;
      } else {
        run.held = this.runRows[i]!;
        run.heldPolls++;
      }
    }
    for (let i = 0; i < this.stops.length; i++) {
      const stop = this.stops[i]!;
      if (this.stopWritten[i]) {
        stop.written = this.stopRows[i]!;
        stop.held = null;
      } else stop.held = this.stopRows[i]!;
    }
    for (let i = 0; i < this.vehicles.length; i++) {
      const seen = this.vehicles[i]!;
      const v = this.vehicleRows[i]!;
      if (this.vehicleStored[i]) seen.stored = v;
      seen.lastMs = v.observed_ms;
    }
    for (const op of this.ops) op();
  }
}

type Out = Omit<Selection, 'commit'>;

/** A feed's trip rows of one poll: each trip's rows together, trips in the order they first come. */
interface TripGroups {
  index: TripIndex<TripObservation[]>;
  groups: TripObservation[][];
}

const tripKey = (o: TripObservation): string => `${o.service_date}\u0000${o.trip_id}`;
const sameTrip = (a: TripObservation, b: TripObservation): boolean =>
  a.route_id === b.route_id &&
  a.mode === b.mode &&
  a.relationship === b.relationship &&
  a.skipped_stops === b.skipped_stops &&
  a.source === b.source &&
  a.in_schedule === b.in_schedule;
const tripContent = (o: TripObservation): string =>
  `${o.route_id}\u0001${o.mode}\u0001${o.relationship}\u0001${o.skipped_stops}\u0001${o.source}\u0001${o.in_schedule}`;
const instanceKey = (a: Arrival): string => `${a.service_date ?? ''}\u0000${a.trip_id}\u0000${a.trip_instance ?? ''}`;
const stopKey = (a: Arrival): StopKey => a.stop_sequence ?? a.stop_id;
const sameInstance = (a: Arrival, b: Arrival): boolean =>
  a.feed_id === b.feed_id &&
  a.service_date === b.service_date &&
  a.trip_id === b.trip_id &&
  a.trip_instance === b.trip_instance;

const stored = (rows: readonly TripObservation[], polls: number): StoredTripObservation[] =>
  rows.map((r) => ({ ...r, polls }));

let selections = 0;

export class ChangeOnlyHistory {
  private readonly feeds = new Map<string, FeedMemory>();

  constructor(private readonly rules: ChangeRules) {}

  /** What memory holds: trips, stops and vehicles on the road (bounded by them, not by polls). */
  size(): { trips: number; stops: number; vehicles: number; held: number } {
    let trips = 0;
    let stops = 0;
    let vehicles = 0;
    let held = 0;
    for (const f of this.feeds.values()) {
      trips += f.trips.size;
      vehicles += f.vehicles.size;
      for (const run of f.trips.values()) held += run.held?.length ?? 0;
      for (const t of f.stops.values()) {
        stops += t.stops.size;
        for (const s of t.stops.values()) if (s.held) held++;
      }
    }
    return { trips, stops, vehicles, held };
  }

  /** The rows of one poll (one fresh snapshot) worth storing, plus held rows that became the last. */
  select(batch: {
    vehicles: readonly VehiclePosition[];
    arrivals: readonly Arrival[];
    trips: readonly TripObservation[];
  }): Selection {
    const id = ++selections;
    const out: Out = { vehicles: [], arrivals: [], trips: [] };
    const changes = new Changes();
    const clocks = new Map<string, number>();
    const tick = (feedId: string, ms: number): void => {
      if (ms > (clocks.get(feedId) ?? Number.NEGATIVE_INFINITY)) clocks.set(feedId, ms);
    };
    // a trip's rows of a poll are one content: grouped first (a trip id may come twice, apart),
    // per feed, in the order each trip first comes
    const trips = new Map<string, TripGroups>();
    let feedTrips: TripGroups | undefined;
    let lastFeed: string | null = null;
    for (const o of batch.trips) {
      if (o.feed_id !== lastFeed) {
        lastFeed = o.feed_id;
        feedTrips = trips.get(o.feed_id);
        if (!feedTrips) {
          feedTrips = { index: new TripIndex(), groups: [] };
          trips.set(o.feed_id, feedTrips);
        }
      }
      const rows = feedTrips!.index.get(o.service_date, o.trip_id);
      if (rows) rows.push(o);
      else {
        const group = [o];
        feedTrips!.index.set(o.service_date, o.trip_id, group);
        feedTrips!.groups.push(group);
      }
    }
    for (const feedId of trips.keys()) this.memory(feedId);
    for (const [feedId, { groups }] of trips) {
      let clock = Number.NEGATIVE_INFINITY;
      for (const rows of groups) {
        let at = rows[0]!.observed_ms;
        for (const r of rows) if (r.observed_ms > at) at = r.observed_ms;
        if (at > clock) clock = at;
        this.selectTrip(id, feedId, rows, at, out.trips, changes);
      }
      tick(feedId, clock);
    }
    // a trip update's stops come together: one group per run of rows of the same trip instance
    const instances = new Set<string>();
    for (let start = 0; start < batch.arrivals.length; ) {
      const first = batch.arrivals[start]!;
      let end = start + 1;
      let at = first.observed_ms;
      while (end < batch.arrivals.length && sameInstance(batch.arrivals[end]!, first)) {
        if (batch.arrivals[end]!.observed_ms > at) at = batch.arrivals[end]!.observed_ms;
        end++;
      }
      const key = instanceKey(first);
      tick(first.feed_id, at);
      const feedKey = `${first.feed_id}\u0000${key}`;
      if (instances.has(feedKey)) {
        // the same trip instance again further on in the poll: stored as it comes
        for (let i = start; i < end; i++) out.arrivals.push(batch.arrivals[i]!);
      } else {
        instances.add(feedKey);
        this.selectStops(id, first.feed_id, key, batch.arrivals, start, end, at, out.arrivals, changes);
      }
      start = end;
    }
    this.selectVehicles(id, batch.vehicles, out.vehicles, changes, tick);
    for (const [feedId, clockMs] of clocks) this.sweep(id, feedId, clockMs, out, changes);
    return { ...out, commit: () => changes.apply() };
  }

  /** Every held row (of service days through `filter.through`, when given), to write now. */
  held(filter: HeldFilter = {}): Selection {
    const out: Out = { vehicles: [], arrivals: [], trips: [] };
    const changes = new Changes();
    const wanted = (day: string | null): boolean =>
      filter.through === undefined || (day !== null && day <= filter.through);
    for (const f of this.feeds.values()) {
      for (const run of f.trips.values()) {
        if (run.held && wanted(run.serviceDate)) this.writeHeldRun(run, out.trips, changes);
      }
      for (const trip of f.stops.values()) {
        if (!wanted(trip.serviceDate)) continue;
        for (const stop of trip.stops.values()) {
          if (!stop.held) continue;
          out.arrivals.push(stop.held);
          changes.stops.push(stop);
          changes.stopRows.push(stop.held);
          changes.stopWritten.push(true);
        }
      }
    }
    return { ...out, commit: () => changes.apply() };
  }

  private memory(feedId: string): FeedMemory {
    let m = this.feeds.get(feedId);
    if (!m) {
      m = { trips: new Map(), tripIndex: new TripIndex(), stops: new Map(), vehicles: new Map() };
      this.feeds.set(feedId, m);
    }
    return m;
  }

  /**
   * A trip's rows in one poll of a feed. Its rows are kept when they differ from the poll before
   * (then the held last poll of the run they end is written too), else held: so every content
   * keeps its first and last time seen, and the counts of polls add up. Across feeds seeing the
   * same trip (a trip update feed and a vehicle feed), the order of what they said is kept: after
   * a change in one, the next poll of the others is kept; while they disagree on the
   * relationship, every poll is (which came last decides a restoration).
   */
  private selectTrip(
    id: number,
    feedId: string,
    rows: readonly TripObservation[],
    at: number,
    out: StoredTripObservation[],
    changes: Changes,
  ): void {
    const memory = this.memory(feedId);
    const { service_date: date, trip_id: tripId } = rows[0]!;
    const run = memory.tripIndex.get(date, tripId);
    if (run && at < run.lastMs) {
      // a snapshot older than one stored already: its rows as they are, the run left alone
      out.push(...stored(rows, 1));
      return;
    }
    const single = rows.length === 1 ? rows[0]! : null;
    const signature = single ? null : rows.map(tripContent).sort().join('\u0002');
    const relationships = single ? single.relationship : [...new Set(rows.map((r) => r.relationship))].sort().join(',');
    if (run) run.seenBy = id;
    const same =
      run !== undefined && (single ? run.sample !== null && sameTrip(run.sample, single) : run.signature === signature);
    if (same) {
      const write =
        run.nudged ||
        at - run.writtenMs >= this.rules.checkpointMs ||
        this.disputed(feedId, date, tripId, relationships);
      if (write) out.push(...stored(rows, run.heldPolls + 1));
      changes.runs.push(run);
      changes.runRows.push(rows);
      changes.runAt.push(at);
      changes.runWritten.push(write);
      return;
    }
    if (run?.held) out.push(...stored(run.held, run.heldPolls));
    out.push(...stored(rows, 1));
    // the key string is built for a trip first seen only (a run that changed keeps its own)
    const key = run?.key ?? tripKey(rows[0]!);
    const next: TripRun = {
      key,
      tripId,
      sample: single,
      signature,
      relationships,
      nudged: false,
      serviceDate: rows[0]!.service_date,
      lastMs: at,
      writtenMs: at,
      held: null,
      heldPolls: 0,
      seenBy: id,
    };
    changes.ops.push(() => {
      memory.trips.set(key, next);
      memory.tripIndex.set(date, tripId, next);
    });
    // the same trip in another feed keeps its next poll: that it still said what it said after
    // this change is what orders the two (a trip update running after a cancellation restores)
    for (const [otherId, other] of this.feeds) {
      const theirs = otherId === feedId ? undefined : other.tripIndex.get(date, tripId);
      if (theirs)
        changes.ops.push(() => {
          theirs.nudged = true;
        });
    }
  }

  /** Does another feed, seeing the same trip, give it other relationships than `relationships`? */
  private disputed(feedId: string, date: string, tripId: string, relationships: string): boolean {
    if (this.feeds.size < 2) return false;
    for (const [otherId, other] of this.feeds) {
      if (otherId === feedId) continue;
      const theirs = other.tripIndex.get(date, tripId);
      if (theirs && theirs.relationships !== relationships) return true;
    }
    return false;
  }

  private writeHeldRun(run: TripRun, out: StoredTripObservation[], changes: Changes): void {
    out.push(...stored(run.held!, run.heldPolls));
    changes.ops.push(() => Object.assign(run, { held: null, heldPolls: 0, writtenMs: run.lastMs }));
  }

  /**
   * One trip instance's predictions in one poll (rows[start..end)). A stop's prediction is kept
   * when it is the first, moved at least predictionChangeMs from the one kept last, or changed
   * delay state, relationship, schedule, vehicle or route; otherwise held. A stop that left the
   * trip update (passed) writes its held prediction: the last one before it was passed.
   */
  private selectStops(
    id: number,
    feedId: string,
    key: string,
    rows: readonly Arrival[],
    start: number,
    end: number,
    at: number,
    out: Arrival[],
    changes: Changes,
  ): void {
    const memory = this.memory(feedId);
    const trip = memory.stops.get(key);
    if (trip && at < trip.lastMs) {
      for (let i = start; i < end; i++) out.push(rows[i]!);
      return;
    }
    if (!trip) {
      const stops = new Map<StopKey, StopSeen>();
      for (let i = start; i < end; i++) {
        const a = rows[i]!;
        out.push(a);
        const k = stopKey(a);
        // the same stop twice in one poll (no stop_sequence on a loop): the first is remembered
        if (!stops.has(k)) stops.set(k, { written: a, held: null, seenBy: id });
      }
      const next: TripStops = { lastMs: at, serviceDate: rows[start]!.service_date, stops, seenBy: id };
      changes.ops.push(() => memory.stops.set(key, next));
      return;
    }
    trip.seenBy = id;
    let added: [StopKey, StopSeen][] | null = null;
    for (let i = start; i < end; i++) {
      const a = rows[i]!;
      const k = stopKey(a);
      const seen = trip.stops.get(k);
      if (!seen) {
        out.push(a);
        added ??= [];
        added.push([k, { written: a, held: null, seenBy: id }]);
        continue;
      }
      if (seen.seenBy === id) {
        out.push(a);
        continue;
      }
      seen.seenBy = id;
      const changed = this.predictionChanged(seen.written, a);
      if (changed) out.push(a);
      changes.stops.push(seen);
      changes.stopRows.push(a);
      changes.stopWritten.push(changed);
    }
    let passed: StopKey[] | null = null;
    for (const [k, seen] of trip.stops) {
      if (seen.seenBy === id) continue;
      if (seen.held) out.push(seen.held);
      passed ??= [];
      passed.push(k);
    }
    changes.ops.push(() => {
      trip.lastMs = at;
      if (added) for (const [k, seen] of added) if (!trip.stops.has(k)) trip.stops.set(k, seen);
      if (passed) for (const k of passed) trip.stops.delete(k);
    });
  }

  private predictionChanged(before: Arrival, now: Arrival): boolean {
    if (now.delay_state !== before.delay_state || now.trip_relationship !== before.trip_relationship) return true;
    if (now.predicted_ms === null || before.predicted_ms === null) {
      if (now.predicted_ms !== before.predicted_ms) return true;
    } else if (Math.abs(now.predicted_ms - before.predicted_ms) >= this.rules.predictionChangeMs) {
      return true;
    }
    return (
      now.scheduled_ms !== before.scheduled_ms ||
      now.vehicle_id !== before.vehicle_id ||
      now.in_schedule !== before.in_schedule ||
      now.route_id !== before.route_id ||
      now.direction_id !== before.direction_id
    );
  }

  /** A vehicle is stored when its own timestamp, position, trip, stop or status changed. */
  private selectVehicles(
    id: number,
    vehicles: readonly VehiclePosition[],
    out: VehiclePosition[],
    changes: Changes,
    tick: (feedId: string, ms: number) => void,
  ): void {
    // vehicles first seen in this poll, to tell a repeated id apart
    let fresh: Set<string> | null = null;
    let memory: FeedMemory | null = null;
    let feedId: string | null = null;
    let clock = Number.NEGATIVE_INFINITY;
    for (const v of vehicles) {
      if (v.feed_id !== feedId) {
        if (feedId !== null) tick(feedId, clock);
        feedId = v.feed_id;
        memory = this.memory(feedId);
        clock = Number.NEGATIVE_INFINITY;
      }
      if (v.observed_ms > clock) clock = v.observed_ms;
      const feed = memory!;
      const seen = feed.vehicles.get(v.vehicle_id);
      if (!seen) {
        out.push(v);
        const k = `${v.feed_id}\u0000${v.vehicle_id}`;
        fresh ??= new Set();
        if (fresh.has(k)) continue;
        fresh.add(k);
        const next: VehicleSeen = { stored: v, lastMs: v.observed_ms, seenBy: id };
        changes.ops.push(() => {
          if (!feed.vehicles.has(v.vehicle_id)) feed.vehicles.set(v.vehicle_id, next);
        });
        continue;
      }
      if (seen.seenBy === id || v.observed_ms < seen.lastMs) {
        // one vehicle id twice in a poll, or an older snapshot: stored as it comes
        out.push(v);
        continue;
      }
      seen.seenBy = id;
      const changed = vehicleChanged(seen.stored, v);
      if (changed) out.push(v);
      changes.vehicles.push(seen);
      changes.vehicleRows.push(v);
      changes.vehicleStored.push(changed);
    }
    if (feedId !== null) tick(feedId, clock);
  }

  /** Trips, stops and vehicles of a feed unseen for tripTimeoutMs: held rows written, memory dropped. */
  private sweep(id: number, feedId: string, clockMs: number, out: Out, changes: Changes): void {
    const memory = this.feeds.get(feedId);
    if (!memory) return;
    const before = clockMs - this.rules.tripTimeoutMs;
    // forEach rather than for…of over entries: no [key, value] pair allocated per trip and vehicle
    // on the road, every poll
    memory.trips.forEach((run, key) => {
      if (run.seenBy === id || run.lastMs >= before) return;
      if (run.held) out.trips.push(...stored(run.held, run.heldPolls));
      changes.ops.push(() => {
        if (memory.trips.get(key) !== run) return;
        memory.trips.delete(key);
        memory.tripIndex.delete(run.serviceDate, run.tripId);
      });
    });
    memory.stops.forEach((trip, key) => {
      if (trip.seenBy === id || trip.lastMs >= before) return;
      for (const seen of trip.stops.values()) if (seen.held) out.arrivals.push(seen.held);
      changes.ops.push(() => {
        if (memory.stops.get(key) === trip) memory.stops.delete(key);
      });
    });
    memory.vehicles.forEach((seen, key) => {
      if (seen.seenBy === id || seen.lastMs >= before) return;
      changes.ops.push(() => {
        if (memory.vehicles.get(key) === seen) memory.vehicles.delete(key);
      });
    });
  }
}

function vehicleChanged(before: VehiclePosition, now: VehiclePosition): boolean {
  return (
    now.timestamp_ms !== before.timestamp_ms ||
    now.lat !== before.lat ||
    now.lon !== before.lon ||
    now.trip_id !== before.trip_id ||
    now.stop_id !== before.stop_id ||
    now.current_status !== before.current_status
  );
}
