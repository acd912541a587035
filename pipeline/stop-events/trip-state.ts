// One trip instance in progress: its stops in order, what the feeds said about each until it is
// written, and how far it has been written. Stops are written in order, so `next` is the one
// boundary between the past (never rewritten) and what may still change.
import { serviceDayOriginMs } from '../../core/dates.ts';
import type { ScheduleIndex } from '../../core/ports.ts';
import type { Mode, TripRelationship } from '../../core/types.ts';
import type { PredictionSamples } from './predictions.ts';

export interface StopSlot {
  stop_id: string;
  station_id: string;
  stop_sequence: number | null;
  scheduled_arrival_ms: number | null;
  scheduled_departure_ms: number | null;
  /** the scheduled departure in GTFS seconds of the service day (scheduled headways) */
  scheduled_departure_s: number | null;
  /** first report of the vehicle stopped at the stop */
  vp_arrival_ms: number | null;
  /** first report of the vehicle on its way to the next stop */
  vp_departure_ms: number | null;
  /** the trip update's latest arrival and departure, and when each was seen */
  tu_arrival_ms: number | null;
  tu_arrival_seen_ms: number;
  tu_departure_ms: number | null;
  tu_departure_seen_ms: number;
  /** the trip update's latest word: the stop is SKIPPED */
  skipped: boolean;
  samples: PredictionSamples | null;
}

export interface TripIdentity {
  group: string;
  schedule_id: string | null;
  service_date: string;
  trip_id: string;
  trip_instance: string | null;
}

export interface TripState extends TripIdentity {
  key: string;
  /** the first feed that reported the trip */
  feed_id: string;
  route_id: string | null;
  mode: Mode | null;
  direction_id: number | null;
  relationship: TripRelationship;
  in_schedule: boolean;
  /** the stops come from the schedule (fixed) or are added as the feeds name them */
  fixed: boolean;
  slots: StopSlot[];
  /** stop_sequence → slot, for fixed stops */
  bySequence: Map<number, number> | null;
  /** first stop not written yet */
  next: number;
  /** stops stored before (a restart, an archive replayed again): through this sequence, and these unnumbered stops */
  written: WrittenMark | null;
  last_seen_ms: number;
  /** last poll in which a vehicle position placed the trip on one of its stops */
  vp_seen_ms: number | null;
  /** newest vehicle report used: an older or repeated one changes nothing */
  vp_report_ms: number;
  /** the vehicle following the trip (vehicle positions), and the trip update's vehicle */
  vp_vehicle: string | null;
  /** last poll that reported the followed vehicle on the trip */
  vp_vehicle_seen_ms: number;
  tu_vehicle: string | null;
  /** other vehicles that reported the trip while it was followed, counted once each */
  extra_vehicles: Set<string> | null;
  canceled: boolean;
  /** departure of the last stop written with times, for travel times */
  last_departure_ms: number | null;
  last_scheduled_departure_ms: number | null;
}

/** What of a trip is stored already: the highest stop_sequence, and the stops stored without one. */
export interface WrittenMark {
  sequence: number | null;
  stops: Set<string> | null;
}

export const tripKey = (t: Omit<TripIdentity, 'schedule_id'>): string =>
  `${t.group}\n${t.service_date}\n${t.trip_id}\n${t.trip_instance ?? ''}`;

export function emptySlot(
  stopId: string,
  stationId: string,
  sequence: number | null,
  scheduledArrival: number | null = null,
  scheduledDeparture: number | null = null,
  scheduledDepartureS: number | null = null,
): StopSlot {
  return {
    stop_id: stopId,
    station_id: stationId,
    stop_sequence: sequence,
    scheduled_arrival_ms: scheduledArrival,
    scheduled_departure_ms: scheduledDeparture,
    scheduled_departure_s: scheduledDepartureS,
    vp_arrival_ms: null,
    vp_departure_ms: null,
    tu_arrival_ms: null,
    tu_arrival_seen_ms: 0,
    tu_departure_ms: null,
    tu_departure_seen_ms: 0,
    skipped: false,
    samples: null,
  };
}

export interface NewTrip extends TripIdentity {
  feed_id: string;
  route_id: string | null;
  mode: Mode | null;
  direction_id: number | null;
  relationship: TripRelationship;
  in_schedule: boolean;
  observed_ms: number;
  /** a scheduled time the feed gave for one stop, to place a DUPLICATED trip's copy of the times */
  scheduled_hint?: { stop_sequence: number | null; stop_id: string; scheduled_ms: number } | null;
}

/** A trip's state, its stops from the schedule when it has timed ones there, else empty (added as named). */
export function newTripState(t: NewTrip, schedule: ScheduleIndex | undefined, written: WrittenMark | null): TripState {
  const scheduled = schedule?.trip(t.trip_id);
  const stopTimes = scheduled ? schedule!.stopTimes(t.trip_id) : [];
  // every field spelled out, never spread from `t`: objects built by spreading then widening
  // get a map of their own whose stores take the slow path, and these are written every poll
  const state: TripState = {
    group: t.group,
    schedule_id: t.schedule_id,
    service_date: t.service_date,
    trip_id: t.trip_id,
    trip_instance: t.trip_instance,
    feed_id: t.feed_id,
    mode: t.mode,
    relationship: t.relationship,
    in_schedule: t.in_schedule,
    key: tripKey(t),
    route_id: t.route_id ?? scheduled?.route_id ?? null,
    direction_id: t.direction_id ?? scheduled?.direction_id ?? null,
    fixed: stopTimes.length > 0,
    slots: [],
    bySequence: null,
    next: 0,
    written,
    last_seen_ms: t.observed_ms,
    vp_seen_ms: null,
    vp_report_ms: Number.NEGATIVE_INFINITY,
    vp_vehicle: null,
    vp_vehicle_seen_ms: Number.NEGATIVE_INFINITY,
    tu_vehicle: null,
    extra_vehicles: null,
    canceled: false,
    last_departure_ms: null,
    last_scheduled_departure_ms: null,
  };
  if (!state.fixed) return state;
  const dayOrigin = serviceDayOriginMs(t.service_date, schedule!.timezone);
  let origin = dayOrigin;
  const hint = t.scheduled_hint;
  if (hint && t.relationship === 'duplicated') {
    // a DUPLICATED trip runs the original's stops from its own start: the feed's time places it
    const st = stopTimes.find((s) =>
      hint.stop_sequence !== null ? s.stop_sequence === hint.stop_sequence : s.stop_id === hint.stop_id,
    );
    const s = st ? (st.arrival_s ?? st.departure_s) : null;
    if (s !== null && s !== undefined) origin = hint.scheduled_ms - s * 1000;
  }
  state.bySequence = new Map();
  for (const st of stopTimes) {
    const arrival = st.arrival_s ?? st.departure_s;
    const departure = st.departure_s ?? st.arrival_s;
    state.bySequence.set(st.stop_sequence, state.slots.length);
    state.slots.push(
      emptySlot(
        st.stop_id,
        schedule!.stop(st.stop_id)?.station_id ?? st.stop_id,
        st.stop_sequence,
        arrival === null ? null : origin + arrival * 1000,
        departure === null ? null : origin + departure * 1000,
        departure === null ? null : departure + Math.round((origin - dayOrigin) / 1000),
      ),
    );
  }
  const through = written?.sequence ?? null;
  if (through !== null) {
    while (state.next < state.slots.length && state.slots[state.next]!.stop_sequence! <= through) state.next++;
  }
  return state;
}

/**
 * The slot of a stop the feed names, by stop_sequence (at that stop or its station), else by stop
 * id (the first at or after the boundary, else before it). A trip without fixed stops gains one (`add`): in sequence
 * order when
 * the feed numbers its stops, else after the last. undefined when the stop is not on the trip, or
 * would be added among stops already written.
 */
export function locateStop(
  state: TripState,
  sequence: number | null,
  stopId: string | null,
  stationOf: (stopId: string) => string,
  add: boolean,
): number | undefined {
  const slots = state.slots;
  if (sequence !== null && state.bySequence) {
    const i = state.bySequence.get(sequence);
    // the same sequence at another stop of the same station is a platform change, not another stop
    if (i !== undefined && (stopId === null || stationOf(stopId) === slots[i]!.station_id)) return i;
  }
  if (stopId !== null) {
    for (let i = state.next; i < slots.length; i++) if (slots[i]!.stop_id === stopId) return i;
    for (let i = Math.min(state.next, slots.length) - 1; i >= 0; i--) if (slots[i]!.stop_id === stopId) return i;
  }
  if (state.fixed || !add || stopId === null) return undefined;
  const written = state.written;
  if (sequence !== null ? sequence <= (written?.sequence ?? Number.NEGATIVE_INFINITY) : written?.stops?.has(stopId)) {
    return undefined;
  }
  let at = slots.length;
  if (sequence !== null) {
    while (at > 0 && (slots[at - 1]!.stop_sequence ?? Number.NEGATIVE_INFINITY) > sequence) at--;
  }
  if (at < state.next) return undefined;
  slots.splice(at, 0, emptySlot(stopId, stationOf(stopId), sequence));
  if (sequence !== null || at < slots.length - 1) {
    state.bySequence = new Map();
    slots.forEach((s, i) => {
      if (s.stop_sequence !== null) state.bySequence!.set(s.stop_sequence, i);
    });
  }
  return at;
}
