// Trips in progress, followed from the normalized vehicle positions and trip updates of each poll,
// and their stop events, each written once when the stop is passed: the vehicle moved on, a later
// stop got a time, or the trip ended (its last stop reached, or unseen for `trip_timeout_s`).
// Pure: rows in, events out; the memory it holds is bounded by the trips on the road (a trip
// unseen that long is closed with what is known) and a few days of departures per station.
//
// Trips are keyed by group (the schedule, or the feed without one), service date, trip id and
// instance, so the vehicle positions and the trip updates of one agency, polled as two feeds,
// follow the same trips. Vehicle positions say where a vehicle is and decide when a stop is
// passed; without a vehicle on the trip, the trip update does (a stop it no longer lists while it
// lists a later one, or a time in the past).
import type { ScheduleIndex, WrittenTrip } from '../../core/ports.ts';
import type { Arrival, StopEvent, StopEventAnomaly, StopEventCounts, VehiclePosition } from '../../core/types.ts';
import { DepartureLog, ScheduledHeadways } from './headways.ts';
import { TripInstances } from './instances.ts';
import { PredictionSamples } from './predictions.ts';
import { locateStop, newTripState, tripKey, type NewTrip, type TripState, type WrittenMark } from './trip-state.ts';
import { hasEvidence, stopEventOf, type WriteContext } from './write-event.ts';

export interface TrackerOptions {
  /** a trip no feed reported for this long is closed with what is known (history.trip_timeout_s) */
  trip_timeout_s: number;
  /** trips whose stop events are stored already, through a stop (a restart, an archive replayed again) */
  written?: readonly WrittenTrip[];
}

export interface TrackerInput {
  feed_id: string;
  /** the schedule id, or `feed:<id>` without one: trips of feeds in one group are the same trips */
  group: string;
  schedule_id: string | null;
  schedule: ScheduleIndex | undefined;
  observed_ms: number;
  vehicles: readonly VehiclePosition[];
  arrivals: readonly Arrival[];
}

export interface TrackerOutput {
  events: StopEvent[];
  counts: StopEventCounts;
}

/** What is stored of each trip of one service day, by trip key. */
type DayMarks = Map<string, WrittenMark>;
const MARK_DAYS = 3;

export class StopEventTracker {
  private readonly timeoutMs: number;
  /** group → trip key → state */
  private readonly groups = new Map<string, Map<string, TripState>>();
  /** group, date and trip id → its instances (a vehicle names no instance) */
  private readonly instances = new TripInstances();
  private readonly marks = new Map<string, DayMarks>();
  private readonly departures = new DepartureLog();
  private readonly scheduledHeadways = new ScheduledHeadways();

  constructor(options: TrackerOptions) {
    this.timeoutMs = options.trip_timeout_s * 1000;
    for (const w of options.written ?? []) {
      if (w.stop_sequence !== null) this.mark(w, w.stop_sequence, null);
      for (const stopId of w.stop_ids) this.mark(w, null, stopId);
    }
  }

  /** Trips followed now (a gauge: the memory held). */
  get tripsInProgress(): number {
    let n = 0;
    for (const trips of this.groups.values()) n += trips.size;
    return n;
  }

  /** One poll's rows: vehicles first (they decide where a vehicle is), then trip updates, then closes. */
  observe(input: TrackerInput): TrackerOutput {
    const out = this.output(input);
    for (const v of input.vehicles) this.observeVehicle(v, input, out);
    const rows = input.arrivals;
    for (let start = 0; start < rows.length; ) {
      let end = start + 1;
      const a = rows[start]!;
      while (
        end < rows.length &&
        rows[end]!.trip_id === a.trip_id &&
        rows[end]!.trip_instance === a.trip_instance &&
        rows[end]!.service_date === a.service_date
      )
        end++;
      this.observeTrip(rows, start, end, input, out);
      start = end;
    }
    const trips = this.groups.get(input.group);
    if (trips) {
      for (const state of trips.values()) {
        if (input.observed_ms - state.last_seen_ms > this.timeoutMs) this.close(state, input, out, true);
      }
    }
    return out.result;
  }

  /**
   * Closes every trip of every group as if unseen past the timeout: the end of a replayed archive.
   * The counts are by the feed that first reported each trip.
   */
  closeAll(
    observedMs: number,
    scheduleOf: (group: string) => ScheduleIndex | undefined,
  ): { events: StopEvent[]; byFeed: Map<string, StopEventCounts> } {
    const events: StopEvent[] = [];
    const byFeed = new Map<string, StopEventCounts>();
    for (const [group, trips] of this.groups) {
      const schedule = scheduleOf(group);
      for (const state of [...trips.values()]) {
        const out = this.output({ schedule });
        this.close(state, { observed_ms: observedMs }, out, false);
        events.push(...out.result.events);
        const counts = byFeed.get(state.feed_id) ?? { written: 0, anomalies: {} };
        counts.written += out.result.counts.written;
        for (const [kind, n] of Object.entries(out.result.counts.anomalies) as [StopEventAnomaly, number][])
          counts.anomalies[kind] = (counts.anomalies[kind] ?? 0) + n;
        byFeed.set(state.feed_id, counts);
      }
    }
    return { events, byFeed };
  }

  private output(input: Pick<TrackerInput, 'schedule'>): Output {
    const result: TrackerOutput = { events: [], counts: { written: 0, anomalies: {} } };
    const anomaly = (kind: StopEventAnomaly): void => {
      result.counts.anomalies[kind] = (result.counts.anomalies[kind] ?? 0) + 1;
    };
    const ctx: WriteContext = {
      schedule: input.schedule,
      departures: this.departures,
      scheduledHeadways: this.scheduledHeadways,
      anomaly,
    };
    return { result, ctx, anomaly, stationOf: this.stationOf(input.schedule) };
  }

  private observeVehicle(v: VehiclePosition, input: TrackerInput, out: Output): void {
    if (!v.trip_id || !v.service_date) return;
    const state = this.vehicleTrip(v, input, out);
    if (!state) return;
    state.last_seen_ms = input.observed_ms;
    if (state.vp_vehicle !== v.vehicle_id) {
      if (state.vp_vehicle !== null && input.observed_ms - state.vp_vehicle_seen_ms <= this.timeoutMs) {
        // two vehicles on one trip: the one followed keeps it, the other's reports are not used
        state.extra_vehicles ??= new Set();
        if (!state.extra_vehicles.has(v.vehicle_id)) {
          state.extra_vehicles.add(v.vehicle_id);
          out.anomaly('vehicles_on_one_trip');
        }
        return;
      }
      state.vp_vehicle = v.vehicle_id;
    }
    state.vp_vehicle_seen_ms = input.observed_ms;
    if (state.next >= state.slots.length && state.fixed) return; // its last stop is written: at the terminal
    if (v.stop_id === null && (v.stop_sequence ?? null) === null) return;
    // a report no newer than one used says nothing new (feeds repeat the last one)
    if (v.timestamp_ms <= state.vp_report_ms) return;
    state.vp_report_ms = v.timestamp_ms;
    const i = locateStop(state, v.stop_sequence ?? null, v.stop_id, out.stationOf, true);
    if (i === undefined) {
      out.anomaly('stop_not_on_trip');
      return;
    }
    state.vp_seen_ms = input.observed_ms;
    const t = v.timestamp_ms;
    const stopped = v.current_status === 'stopped_at';
    if (i < state.next) {
      // at or before a stop it has left: written stops stay as they are
      out.anomaly('vehicle_backwards');
      return;
    }
    const slot = state.slots[i]!;
    if (stopped) {
      slot.vp_arrival_ms ??= t;
      this.passTo(state, state.fixed && i === state.slots.length - 1 ? state.slots.length : i, input, out);
    } else {
      // on its way to stop i: it left i − 1, at the latest now
      if (i > 0 && i - 1 >= state.next) state.slots[i - 1]!.vp_departure_ms ??= t;
      this.passTo(state, i, input, out);
    }
  }

  /** The trip a vehicle reports: the instance it drives when the trip update names several. */
  private vehicleTrip(v: VehiclePosition, input: TrackerInput, out: Output): TripState | undefined {
    const instances = this.instances.of(input.group, v.service_date!, v.trip_id!);
    if (instances) {
      if (instances.length === 1) return instances[0];
      for (const s of instances) {
        if (
          s.vp_vehicle === v.vehicle_id ||
          s.tu_vehicle === v.vehicle_id ||
          s.trip_instance === `vehicle:${v.vehicle_id}`
        )
          return s;
      }
      out.anomaly('vehicles_on_one_trip');
      return undefined;
    }
    return this.create(
      {
        group: input.group,
        schedule_id: input.schedule_id,
        service_date: v.service_date!,
        trip_id: v.trip_id!,
        trip_instance: null,
        feed_id: input.feed_id,
        route_id: v.route_id,
        mode: v.mode,
        direction_id: null,
        relationship: 'scheduled',
        in_schedule: input.schedule?.trip(v.trip_id!) !== undefined,
        observed_ms: input.observed_ms,
      },
      input.schedule,
    );
  }

  /** One trip's arrival rows of a trip update (rows[start..end)). */
  private observeTrip(rows: readonly Arrival[], start: number, end: number, input: TrackerInput, out: Output): void {
    const a = rows[start]!;
    if (a.service_date === null) return;
    const key = tripKey({
      group: input.group,
      service_date: a.service_date,
      trip_id: a.trip_id,
      trip_instance: a.trip_instance,
    });
    const trips = this.tripsOf(input.group);
    const state =
      trips.get(key) ??
      this.create(
        {
          group: input.group,
          schedule_id: input.schedule_id,
          service_date: a.service_date,
          trip_id: a.trip_id,
          trip_instance: a.trip_instance,
          feed_id: input.feed_id,
          route_id: a.route_id,
          mode: a.mode,
          direction_id: a.direction_id,
          relationship: a.trip_relationship,
          in_schedule: a.in_schedule,
          observed_ms: input.observed_ms,
          scheduled_hint:
            a.scheduled_ms === null
              ? null
              : { stop_sequence: a.stop_sequence, stop_id: a.stop_id, scheduled_ms: a.scheduled_ms },
        },
        input.schedule,
      );
    const observed = input.observed_ms;
    state.last_seen_ms = observed;
    state.relationship = a.trip_relationship;
    state.in_schedule = a.in_schedule;
    state.tu_vehicle = a.vehicle_id ?? state.tu_vehicle;
    state.canceled = a.trip_relationship === 'canceled' || a.trip_relationship === 'deleted';
    if (state.canceled) return;
    const stationOf = out.stationOf;
    let firstListed = -1;
    let reached = -1;
    for (let r = start; r < end; r++) {
      const row = rows[r]!;
      const i = locateStop(state, row.stop_sequence, row.stop_id, stationOf, true);
      if (i === undefined) {
        out.anomaly('stop_not_on_trip');
        continue;
      }
      if (i < state.next) continue; // written: a feed may keep listing stops it passed
      const slot = state.slots[i]!;
      if (row.stop_id !== slot.stop_id) slot.stop_id = row.stop_id; // a platform change
      if (firstListed < 0 || i < firstListed) firstListed = i;
      slot.skipped = row.delay_state === 'skipped';
      const arrival = row.predicted_arrival_ms !== undefined ? row.predicted_arrival_ms : row.predicted_ms;
      const departure = row.predicted_departure_ms ?? null;
      if (arrival !== null) {
        slot.tu_arrival_ms = arrival;
        slot.tu_arrival_seen_ms = observed;
        slot.samples ??= new PredictionSamples();
        slot.samples.add(observed, arrival);
        if (arrival <= observed && i > reached) reached = i;
      }
      if (departure !== null) {
        slot.tu_departure_ms = departure;
        slot.tu_departure_seen_ms = observed;
      }
    }
    // a vehicle on the trip says where it is; the trip update only says what it expects. Without
    // one, a stop is passed when the update no longer lists it (most feeds drop a stop once left)
    // or a later stop's time is in the past. Its own time in the past is not enough: a train held
    // at a stop keeps a prediction that went stale. The last stop waits for the trip to leave the
    // feed (closed after history.trip_timeout_s).
    if (state.vp_seen_ms !== null && observed - state.vp_seen_ms <= this.timeoutMs) return;
    let passed = firstListed >= 0 ? firstListed : state.next;
    if (reached > passed) passed = reached;
    this.passTo(state, passed, input, out);
  }

  /** Writes the stops before `k` not written yet, in order. */
  private passTo(state: TripState, k: number, input: Pick<TrackerInput, 'observed_ms'>, out: Output): void {
    const end = Math.min(k, state.slots.length);
    for (; state.next < end; state.next++) {
      const event = stopEventOf(state, state.next, input.observed_ms, out.ctx);
      if (event) this.emit(state, event, out);
    }
  }

  private emit(state: TripState, event: StopEvent, out: Output): void {
    out.result.events.push(event);
    out.result.counts.written++;
    this.mark(state, event.stop_sequence, event.stop_sequence === null ? event.stop_id : null);
  }

  /**
   * A trip no feed reports any more: a canceled one gets its remaining stops as canceled rows, any
   * other its stops up to the last one something is known of. `vanished`: closed by the timeout
   * (not the end of an archive), counted when the trip had started and not reached its last stop.
   */
  private close(state: TripState, input: Pick<TrackerInput, 'observed_ms'>, out: Output, vanished: boolean): void {
    const slots = state.slots;
    if (state.canceled) {
      for (; state.next < slots.length; state.next++) {
        this.emit(state, stopEventOf(state, state.next, input.observed_ms, out.ctx, true)!, out);
      }
    } else {
      let lastKnown = slots.length - 1;
      while (lastKnown >= state.next && !hasEvidence(slots[lastKnown]!)) lastKnown--;
      const started = state.next > 0 || lastKnown >= 0;
      // only a trip with the schedule's stops has a known last stop to fall short of
      if (vanished && state.fixed && started && lastKnown < slots.length - 1) out.anomaly('trip_vanished');
      this.passTo(state, lastKnown + 1, input, out);
    }
    this.groups.get(state.group)?.delete(state.key);
    this.instances.remove(state);
  }

  private create(t: NewTrip, schedule: ScheduleIndex | undefined): TripState {
    const key = tripKey(t);
    const state = newTripState(t, schedule, this.marks.get(t.service_date)?.get(key) ?? null);
    this.tripsOf(t.group).set(key, state);
    this.instances.add(state);
    return state;
  }

  private tripsOf(group: string): Map<string, TripState> {
    let trips = this.groups.get(group);
    if (!trips) {
      trips = new Map();
      this.groups.set(group, trips);
    }
    return trips;
  }

  private stationOf(schedule: ScheduleIndex | undefined): (stopId: string) => string {
    return (stopId) => schedule?.stop(stopId)?.station_id ?? stopId;
  }

  /**
   * Remembers that a trip is stored through a stop (or has an unnumbered stop stored); keeps MARK_DAYS service days.
   */
  private mark(
    t: Omit<WrittenTrip, 'stop_sequence' | 'stop_ids'>,
    sequence: number | null,
    stopId: string | null,
  ): void {
    let day = this.marks.get(t.service_date);
    if (!day) {
      day = new Map();
      this.marks.set(t.service_date, day);
      const dates = [...this.marks.keys()].sort();
      for (const d of dates.slice(0, Math.max(0, dates.length - MARK_DAYS))) this.marks.delete(d);
    }
    const key = tripKey(t);
    let mark = day.get(key);
    if (!mark) {
      mark = { sequence: null, stops: null };
      day.set(key, mark);
    }
    if (sequence !== null && (mark.sequence === null || mark.sequence < sequence)) mark.sequence = sequence;
    if (stopId !== null) {
      mark.stops ??= new Set();
      mark.stops.add(stopId);
    }
  }
}

interface Output {
  result: TrackerOutput;
  ctx: WriteContext;
  anomaly: (kind: StopEventAnomaly) => void;
  /** the station of a stop in the poll's schedule (the stop itself without one) */
  stationOf: (stopId: string) => string;
}
