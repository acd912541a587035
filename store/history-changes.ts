import type { Arrival, TripObservation, VehiclePosition } from '../core/types.ts';

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
  /** the poll's rows of this trip in this feed, as a sorted list of their contents */
  signature: string;
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
}

interface StopSeen {
  written: Arrival;
  /** the newest prediction when it differs too little to be written; written once it is the last */
  held: Arrival | null;
}

interface TripStops {
  lastMs: number;
  serviceDate: string | null;
  stops: Map<string, StopSeen>;
}

interface VehicleSeen {
  stored: VehiclePosition;
  lastMs: number;
}

interface FeedMemory {
  trips: Map<string, TripRun>;
  stops: Map<string, TripStops>;
  vehicles: Map<string, VehicleSeen>;
}

type Ops = (() => void)[];

const tripKey = (o: TripObservation): string => `${o.service_date}\u0000${o.trip_id}`;
const tripContent = (o: TripObservation): string =>
  `${o.route_id}\u0001${o.mode}\u0001${o.relationship}\u0001${o.skipped_stops}\u0001${o.source}\u0001${o.in_schedule}`;
const instanceKey = (a: Arrival): string => `${a.service_date ?? ''}\u0000${a.trip_id}\u0000${a.trip_instance ?? ''}`;
const stopKey = (a: Arrival): string => `${a.stop_sequence ?? ''}\u0000${a.stop_id}`;

const stored = (rows: readonly TripObservation[], polls: number): StoredTripObservation[] =>
  rows.map((r) => ({ ...r, polls }));

function groupBy<R>(rows: readonly R[], feed: (r: R) => string, key: (r: R) => string): Map<string, Map<string, R[]>> {
  const out = new Map<string, Map<string, R[]>>();
  for (const r of rows) {
    let byKey = out.get(feed(r));
    if (!byKey) out.set(feed(r), (byKey = new Map()));
    const k = key(r);
    const list = byKey.get(k);
    if (list) list.push(r);
    else byKey.set(k, [r]);
  }
  return out;
}

const newest = (rows: readonly { observed_ms: number }[]): number =>
  rows.reduce((m, r) => (r.observed_ms > m ? r.observed_ms : m), Number.NEGATIVE_INFINITY);

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
    const out: Omit<Selection, 'commit'> = { vehicles: [], arrivals: [], trips: [] };
    const ops: Ops = [];
    const clocks = new Map<string, number>();
    const tick = (feedId: string, ms: number): void => {
      if (ms > (clocks.get(feedId) ?? Number.NEGATIVE_INFINITY)) clocks.set(feedId, ms);
    };
    const touched = new Set<unknown>();
    const trips = groupBy(batch.trips, (r) => r.feed_id, tripKey);
    for (const feedId of trips.keys()) this.memory(feedId);
    for (const [feedId, groups] of trips) {
      for (const [key, rows] of groups) {
        const at = newest(rows);
        tick(feedId, at);
        this.selectTrip(feedId, key, rows, at, out.trips, ops, touched);
      }
    }
    for (const [feedId, groups] of groupBy(batch.arrivals, (r) => r.feed_id, instanceKey)) {
      for (const [key, rows] of groups) {
        const at = newest(rows);
        tick(feedId, at);
        this.selectStops(feedId, key, rows, at, out.arrivals, ops, touched);
      }
    }
    this.selectVehicles(batch.vehicles, out.vehicles, ops, touched, tick);
    for (const [feedId, clockMs] of clocks) this.sweep(feedId, clockMs, touched, out, ops);
    return { ...out, commit: () => ops.forEach((op) => op()) };
  }

  /** Every held row (of service days through `filter.through`, when given), to write now. */
  held(filter: HeldFilter = {}): Selection {
    const out: Omit<Selection, 'commit'> = { vehicles: [], arrivals: [], trips: [] };
    const ops: Ops = [];
    const wanted = (day: string | null): boolean =>
      filter.through === undefined || (day !== null && day <= filter.through);
    for (const f of this.feeds.values()) {
      for (const run of f.trips.values()) {
        if (run.held && wanted(run.serviceDate)) this.writeHeldRun(run, out.trips, ops);
      }
      for (const trip of f.stops.values()) {
        if (!wanted(trip.serviceDate)) continue;
        for (const stop of trip.stops.values()) {
          const held = stop.held;
          if (!held) continue;
          out.arrivals.push(held);
          ops.push(() => {
            stop.written = held;
            stop.held = null;
          });
        }
      }
    }
    return { ...out, commit: () => ops.forEach((op) => op()) };
  }

  private memory(feedId: string): FeedMemory {
    let m = this.feeds.get(feedId);
    if (!m) this.feeds.set(feedId, (m = { trips: new Map(), stops: new Map(), vehicles: new Map() }));
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
    feedId: string,
    key: string,
    rows: readonly TripObservation[],
    at: number,
    out: StoredTripObservation[],
    ops: Ops,
    touched: Set<unknown>,
  ): void {
    const memory = this.memory(feedId);
    const run = memory.trips.get(key);
    if (run && at < run.lastMs) {
      // a snapshot older than one stored already: its rows as they are, the run left alone
      out.push(...stored(rows, 1));
      return;
    }
    const signature = rows.length === 1 ? tripContent(rows[0]!) : rows.map(tripContent).sort().join('\u0002');
    const relationships =
      rows.length === 1 ? rows[0]!.relationship : [...new Set(rows.map((r) => r.relationship))].sort().join(',');
    if (run) touched.add(run);
    if (run && run.signature === signature) {
      if (run.nudged || at - run.writtenMs >= this.rules.checkpointMs || this.disputed(feedId, key, relationships)) {
        out.push(...stored(rows, run.heldPolls + 1));
        ops.push(() => Object.assign(run, { held: null, heldPolls: 0, lastMs: at, writtenMs: at, nudged: false }));
      } else {
        const heldPolls = run.heldPolls + 1;
        ops.push(() => Object.assign(run, { held: rows, heldPolls, lastMs: at }));
      }
      return;
    }
    if (run?.held) out.push(...stored(run.held, run.heldPolls));
    out.push(...stored(rows, 1));
    const serviceDate = rows[0]!.service_date;
    ops.push(() =>
      memory.trips.set(key, {
        signature,
        relationships,
        serviceDate,
        lastMs: at,
        writtenMs: at,
        held: null,
        heldPolls: 0,
        nudged: false,
      }),
    );
    // the same trip in another feed keeps its next poll: that it still said what it said after
    // this change is what orders the two (a trip update running after a cancellation restores)
    for (const [otherId, other] of this.feeds) {
      const theirs = otherId === feedId ? undefined : other.trips.get(key);
      if (theirs)
        ops.push(() => {
          theirs.nudged = true;
        });
    }
  }

  /** Does another feed, seeing the same trip, give it other relationships than `relationships`? */
  private disputed(feedId: string, key: string, relationships: string): boolean {
    if (this.feeds.size < 2) return false;
    for (const [otherId, other] of this.feeds) {
      if (otherId === feedId) continue;
      const theirs = other.trips.get(key);
      if (theirs && theirs.relationships !== relationships) return true;
    }
    return false;
  }

  private writeHeldRun(run: TripRun, out: StoredTripObservation[], ops: Ops): void {
    out.push(...stored(run.held!, run.heldPolls));
    ops.push(() => Object.assign(run, { held: null, heldPolls: 0, writtenMs: run.lastMs }));
  }

  /**
   * One trip instance's predictions in one poll. A stop's prediction is kept when it is the first,
   * moved at least predictionChangeMs from the one kept last, or changed delay state,
   * relationship, schedule, vehicle or route; otherwise held. A stop that left the trip update
   * (passed) writes its held prediction: the last one before it was passed.
   */
  private selectStops(
    feedId: string,
    key: string,
    rows: readonly Arrival[],
    at: number,
    out: Arrival[],
    ops: Ops,
    touched: Set<unknown>,
  ): void {
    const memory = this.memory(feedId);
    const trip = memory.stops.get(key);
    if (trip && at < trip.lastMs) {
      out.push(...rows);
      return;
    }
    if (trip) touched.add(trip);
    const next = new Map<string, StopSeen>();
    for (const a of rows) {
      const k = stopKey(a);
      if (next.has(k)) {
        // the same stop twice in one poll (no stop_sequence on a loop): stored as it comes
        out.push(a);
        continue;
      }
      const seen = trip?.stops.get(k);
      if (seen && !this.predictionChanged(seen.written, a)) {
        next.set(k, { written: seen.written, held: a });
      } else {
        out.push(a);
        next.set(k, { written: a, held: null });
      }
    }
    if (trip) {
      for (const [k, seen] of trip.stops) if (seen.held && !next.has(k)) out.push(seen.held);
    }
    const serviceDate = rows[0]!.service_date;
    ops.push(() => memory.stops.set(key, { lastMs: at, serviceDate, stops: next }));
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
    vehicles: readonly VehiclePosition[],
    out: VehiclePosition[],
    ops: Ops,
    touched: Set<unknown>,
    tick: (feedId: string, ms: number) => void,
  ): void {
    const inPoll = new Set<string>();
    for (const v of vehicles) {
      tick(v.feed_id, v.observed_ms);
      const memory = this.memory(v.feed_id);
      const k = `${v.feed_id}\u0000${v.vehicle_id}`;
      const seen = memory.vehicles.get(v.vehicle_id);
      if (inPoll.has(k) || (seen && v.observed_ms < seen.lastMs)) {
        // one vehicle id twice in a poll, or an older snapshot: stored as it comes
        out.push(v);
        continue;
      }
      inPoll.add(k);
      if (seen) touched.add(seen);
      if (seen && !vehicleChanged(seen.stored, v)) {
        ops.push(() => {
          seen.lastMs = v.observed_ms;
        });
      } else {
        out.push(v);
        ops.push(() => memory.vehicles.set(v.vehicle_id, { stored: v, lastMs: v.observed_ms }));
      }
    }
  }

  /** Trips, stops and vehicles of a feed unseen for tripTimeoutMs: held rows written, memory dropped. */
  private sweep(
    feedId: string,
    clockMs: number,
    touched: Set<unknown>,
    out: Omit<Selection, 'commit'>,
    ops: Ops,
  ): void {
    const memory = this.feeds.get(feedId);
    if (!memory) return;
    const before = clockMs - this.rules.tripTimeoutMs;
    for (const [key, run] of memory.trips) {
      if (touched.has(run) || run.lastMs >= before) continue;
      if (run.held) out.trips.push(...stored(run.held, run.heldPolls));
      ops.push(() => {
        if (memory.trips.get(key) === run) memory.trips.delete(key);
      });
    }
    for (const [key, trip] of memory.stops) {
      if (touched.has(trip) || trip.lastMs >= before) continue;
      for (const seen of trip.stops.values()) if (seen.held) out.arrivals.push(seen.held);
      ops.push(() => {
        if (memory.stops.get(key) === trip) memory.stops.delete(key);
      });
    }
    for (const [key, seen] of memory.vehicles) {
      if (touched.has(seen) || seen.lastMs >= before) continue;
      ops.push(() => {
        if (memory.vehicles.get(key) === seen) memory.vehicles.delete(key);
      });
    }
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
