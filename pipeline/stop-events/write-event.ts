// A passed stop → its stop event: which report gives each actual time, the guards that keep a
// misbehaving feed from writing negative dwell or travel times, and the derived seconds.
// The rule (store/SCHEMA.md, stop_events):
//   arrival   = the first vehicle report stopped at the stop (vp), else the trip update's last
//               arrival before the stop was passed (tu);
//   departure = the first vehicle report on the way to the next stop (vp), else the trip
//               update's last departure (tu);
//   a trip update time counts only when it was seen at most TU_LEAD_MS before it (or after it);
//   the first stop is measured by its departure, the last by its arrival; a side not known is
//   the other side's time (`imputed`), and its dwell is unknown.
import type { ScheduleIndex } from '../../core/ports.ts';
import type { StopEvent, StopEventAnomaly, StopTimeSource } from '../../core/types.ts';
import type { DepartureLog, ScheduledHeadways } from './headways.ts';
import type { StopSlot, TripState } from './trip-state.ts';

/** A trip update's time is an actual time only when seen at most this long before it (MBTA LAMP's rule). */
export const TU_LEAD_MS = 120_000;

export interface WriteContext {
  schedule: ScheduleIndex | undefined;
  departures: DepartureLog;
  scheduledHeadways: ScheduledHeadways;
  anomaly(kind: StopEventAnomaly): void;
}

const tuTime = (ms: number | null, seenMs: number): number | null =>
  ms !== null && ms - seenMs <= TU_LEAD_MS ? ms : null;

/** Whether a passed stop has anything worth a row: a time from either feed, or a skip. */
export function hasEvidence(slot: StopSlot): boolean {
  return (
    slot.vp_arrival_ms !== null ||
    slot.vp_departure_ms !== null ||
    tuTime(slot.tu_arrival_ms, slot.tu_arrival_seen_ms) !== null ||
    tuTime(slot.tu_departure_ms, slot.tu_departure_seen_ms) !== null ||
    slot.skipped
  );
}

const seconds = (ms: number): number => Math.round(ms / 1000);
const diffS = (a: number | null, b: number | null): number | null => (a === null || b === null ? null : seconds(a - b));

/** The stop event of slot `i`, or null when nothing is known of it (then no row: nothing says it was served). */
export function stopEventOf(
  state: TripState,
  i: number,
  writtenMs: number,
  ctx: WriteContext,
  canceled = false,
): StopEvent | null {
  const slot = state.slots[i]!;
  const first = state.fixed && i === 0;
  const last = state.fixed && i === state.slots.length - 1;
  // a vehicle passing through a skipped stop is seen leaving it, never stopped at it
  if (canceled || (slot.skipped && slot.vp_arrival_ms === null)) {
    return row(state, slot, writtenMs, first, last, canceled ? 'canceled' : 'skipped');
  }

  // a trip starts when it leaves its first stop and ends when it reaches its last (layovers aside):
  // the other side of those two is the same time, whatever the feeds said of it
  let arrival = first ? null : slot.vp_arrival_ms;
  let arrivalSource: StopTimeSource | null = arrival === null ? null : 'vp';
  if (arrival === null && !first && (arrival = tuTime(slot.tu_arrival_ms, slot.tu_arrival_seen_ms)) !== null)
    arrivalSource = 'tu';
  let departure = last ? null : slot.vp_departure_ms;
  let departureSource: StopTimeSource | null = departure === null ? null : 'vp';
  if (departure === null && !last && (departure = tuTime(slot.tu_departure_ms, slot.tu_departure_seen_ms)) !== null)
    departureSource = 'tu';

  // a trip update time before what is already known of the trip is a prediction gone backwards:
  // it is not an actual time (a vehicle report stays, and its interval is left unknown below)
  const before = state.last_departure_ms;
  if (arrivalSource === 'tu' && before !== null && arrival! < before) {
    ctx.anomaly('prediction_backwards');
    arrival = arrivalSource = null;
  }
  if (
    departureSource === 'tu' &&
    ((arrival !== null && departure! < arrival) || (before !== null && departure! < before))
  ) {
    ctx.anomaly('prediction_backwards');
    departure = departureSource = null;
  }
  if (arrivalSource === 'tu' && departureSource === 'vp' && arrival! > departure!) {
    ctx.anomaly('prediction_backwards');
    arrival = arrivalSource = null;
  }
  if (arrival === null && departure !== null) [arrival, arrivalSource] = [departure, 'imputed'];
  if (departure === null && arrival !== null) [departure, departureSource] = [arrival, 'imputed'];
  if (arrival === null || departure === null) {
    return slot.skipped ? row(state, slot, writtenMs, first, last, 'skipped') : null;
  }

  const event = row(state, slot, writtenMs, first, last, state.relationship);
  event.actual_arrival_ms = arrival;
  event.actual_departure_ms = departure;
  event.arrival_source = arrivalSource;
  event.departure_source = departureSource;
  event.source =
    arrivalSource === 'imputed' || departureSource === 'imputed'
      ? 'imputed'
      : arrivalSource === 'vp' && departureSource === 'vp'
        ? 'vp'
        : 'tu';
  event.arrival_delay_s = diffS(arrival, slot.scheduled_arrival_ms);
  event.departure_delay_s = diffS(departure, slot.scheduled_departure_ms);
  if (arrivalSource !== 'imputed' && departureSource !== 'imputed') {
    event.dwell_s = nonNegative(seconds(departure - arrival), ctx);
  }
  if (before !== null) {
    event.travel_s = nonNegative(seconds(arrival - before), ctx);
    if (event.travel_s !== null)
      event.scheduled_travel_s = diffS(slot.scheduled_arrival_ms, state.last_scheduled_departure_ms);
  }
  state.last_departure_ms = departure;
  state.last_scheduled_departure_ms = slot.scheduled_departure_ms;

  if (state.route_id !== null) {
    const place = {
      group: state.group,
      service_date: state.service_date,
      route_id: state.route_id,
      direction_id: state.direction_id,
      station_id: slot.station_id,
    };
    event.headway_s = diffS(departure, ctx.departures.record(place, departure));
    if (slot.scheduled_departure_s !== null && state.in_schedule) {
      event.scheduled_headway_s = ctx.scheduledHeadways.headway(ctx.schedule, place, slot.scheduled_departure_s);
    }
  }
  // predictions are judged against a vehicle's report: a trip update's own last word would grade itself
  const measured = arrivalSource === 'vp' || (arrivalSource === 'imputed' && departureSource === 'vp');
  if (measured && slot.samples) event.prediction_errors = slot.samples.errors(arrival);
  return event;
}

function nonNegative(s: number, ctx: WriteContext): number | null {
  if (s >= 0) return s;
  ctx.anomaly('times_out_of_order');
  return null;
}

function row(
  state: TripState,
  slot: StopSlot,
  writtenMs: number,
  first: boolean,
  last: boolean,
  relationship: string,
): StopEvent {
  return {
    feed_id: state.feed_id,
    schedule_id: state.schedule_id,
    service_date: state.service_date,
    trip_id: state.trip_id,
    trip_instance: state.trip_instance,
    route_id: state.route_id,
    mode: state.mode,
    direction_id: state.direction_id,
    stop_id: slot.stop_id,
    station_id: slot.station_id,
    stop_sequence: slot.stop_sequence,
    vehicle_id: state.vp_vehicle ?? state.tu_vehicle,
    scheduled_arrival_ms: slot.scheduled_arrival_ms,
    scheduled_departure_ms: slot.scheduled_departure_ms,
    actual_arrival_ms: null,
    actual_departure_ms: null,
    source: null,
    arrival_source: null,
    departure_source: null,
    arrival_delay_s: null,
    departure_delay_s: null,
    dwell_s: null,
    travel_s: null,
    scheduled_travel_s: null,
    headway_s: null,
    scheduled_headway_s: null,
    relationship,
    in_schedule: state.in_schedule,
    first_stop: first,
    last_stop: last,
    prediction_errors: [],
    written_ms: writtenMs,
  };
}
