// One trip's stop time updates → arrival rows, resolved against its scheduled stop times.
import type { ScheduledStopTime } from '../core/ports.ts';
import type { Arrival, DelayState } from '../core/types.ts';
import { STOP_RELATIONSHIP, has, int64, type StopTimeEventMsg, type StopTimeUpdateMsg } from './gtfs-rt-types.ts';
import type { NormalizeContext } from './normalize-context.ts';
import type { ResolvedTrip } from './resolve-trip.ts';

export interface TripArrivalsInput {
  trip: ResolvedTrip;
  updates: readonly StopTimeUpdateMsg[];
  /** TripUpdate.delay: applies to every stop when no stop carries its own update */
  tripDelay: number | null;
  vehicleId: string | null;
  /** Arrival.trip_instance: set only when the snapshot carries the trip id more than once */
  tripInstance: string | null;
}

type RowBase = Omit<
  Arrival,
  'stop_id' | 'station_id' | 'stop_sequence' | 'scheduled_ms' | 'predicted_ms' | 'delay_s' | 'delay_state'
>;

export function delayStateFor(delayS: number | null, ctx: NormalizeContext): DelayState {
  if (delayS === null) return 'unknown';
  if (delayS < ctx.delay.early_below_s) return 'early';
  if (delayS > ctx.delay.late_above_s) return 'late';
  return 'on_time';
}

function eventTimeMs(event: StopTimeEventMsg | undefined): number | null {
  if (!event || !has(event, 'time')) return null;
  const t = int64(event.time) ?? 0;
  return t > 0 ? t * 1000 : null;
}

function eventDelay(event: StopTimeEventMsg | undefined): number | null {
  return event && has(event, 'delay') ? (event.delay ?? null) : null;
}

/** The event that says when the vehicle reaches the stop: arrival when it carries data, else departure. */
function pickEvent(u: StopTimeUpdateMsg): { event: StopTimeEventMsg | undefined; isDeparture: boolean } {
  const a = u.arrival;
  if (a && (has(a, 'time') || has(a, 'delay'))) return { event: a, isDeparture: false };
  const d = u.departure;
  if (d && (has(d, 'time') || has(d, 'delay'))) return { event: d, isDeparture: true };
  return { event: undefined, isDeparture: false };
}

export function buildTripArrivals(input: TripArrivalsInput, ctx: NormalizeContext): Arrival[] {
  const { trip } = input;
  const canceled = trip.relationship === 'canceled' || trip.relationship === 'deleted';
  const base: RowBase = {
    feed_id: ctx.feed_id,
    schedule_id: ctx.schedule_id,
    trip_id: trip.trip_id,
    feed_trip_id: trip.feed_trip_id,
    trip_instance: input.tripInstance,
    route_id: trip.route_id,
    mode: trip.mode,
    direction_id: trip.direction_id,
    service_date: trip.service_date,
    trip_relationship: trip.relationship,
    in_schedule: trip.in_schedule,
    vehicle_id: input.vehicleId,
    observed_ms: ctx.observed_ms,
  };
  const rows: Arrival[] = [];
  const schedule = ctx.schedule;
  const push: Push = (stopId, seq, scheduledMs, predictedMs, delayS, state, arrivalMs = null, departureMs = null) => {
    rows.push(
      arrivalRow(
        base,
        schedule?.stop(stopId)?.station_id ?? stopId,
        stopId,
        seq,
        scheduledMs,
        predictedMs,
        delayS,
        state,
        arrivalMs,
        departureMs,
      ),
    );
  };

  const stopTimes = trip.stopTimes;
  const origin = trip.origin_ms;
  if (origin === null || stopTimes.length === 0) {
    unscheduledRows(input, canceled, ctx, push);
    return rows;
  }
  const scheduledAt = (st: ScheduledStopTime, departure: boolean): number | null => {
    const s = departure ? (st.departure_s ?? st.arrival_s) : (st.arrival_s ?? st.departure_s);
    return s == null ? null : origin + s * 1000;
  };

  if (canceled && input.updates.length === 0) {
    for (const st of stopTimes) push(st.stop_id, st.stop_sequence, scheduledAt(st, false), null, null, 'canceled');
    return rows;
  }

  // place each update on its scheduled stop: by stop_sequence, else the next stop with that id
  const bySequence = sequenceIndex(stopTimes);
  const matched: (StopTimeUpdateMsg | undefined)[] = new Array(stopTimes.length);
  let matchedCount = 0;
  let firstIndex = stopTimes.length;
  const strays: StopTimeUpdateMsg[] = [];
  let cursor = 0;
  for (const u of input.updates) {
    let index: number | undefined;
    if (has(u, 'stop_sequence')) index = bySequence.get(u.stop_sequence!);
    else if (u.stop_id) {
      for (let i = cursor; i < stopTimes.length && index === undefined; i++)
        if (stopTimes[i]!.stop_id === u.stop_id) index = i;
    }
    if (index === undefined) {
      strays.push(u);
      continue;
    }
    if (matched[index] !== undefined) {
      ctx.rejects.add('duplicate_stop_time');
      continue;
    }
    matched[index] = u;
    matchedCount++;
    if (index < firstIndex) firstIndex = index;
    cursor = index + 1;
  }

  // GTFS-RT propagation: a stop's delay carries to later stops without their own update, across
  // SKIPPED stops, and stops at NO_DATA; stops before the first update get no prediction.
  const firstMatched = matchedCount ? firstIndex : input.tripDelay !== null ? 0 : stopTimes.length;
  let carried: number | null = matchedCount ? null : input.tripDelay;
  for (let i = firstMatched; i < stopTimes.length; i++) {
    const st = stopTimes[i]!;
    const u = matched[i];
    const stopId = u?.stop_id || st.stop_id;
    if (!u) {
      if (carried === null) continue;
      const scheduled = scheduledAt(st, false);
      const leaves = scheduledAt(st, true);
      push(
        stopId,
        st.stop_sequence,
        scheduled,
        scheduled === null ? null : scheduled + carried * 1000,
        carried,
        canceled ? 'canceled' : delayStateFor(carried, ctx),
        scheduled === null || canceled ? null : scheduled + carried * 1000,
        leaves === null || canceled ? null : leaves + carried * 1000,
      );
      continue;
    }
    const relationship = u.schedule_relationship ?? STOP_RELATIONSHIP.SCHEDULED;
    if (relationship === STOP_RELATIONSHIP.SKIPPED || canceled) {
      push(stopId, st.stop_sequence, scheduledAt(st, false), null, null, canceled ? 'canceled' : 'skipped');
      continue;
    }
    if (relationship === STOP_RELATIONSHIP.NO_DATA) {
      carried = null;
      push(stopId, st.stop_sequence, scheduledAt(st, false), null, null, 'unknown');
      continue;
    }
    const { event, isDeparture } = pickEvent(u);
    const scheduled = scheduledAt(st, isDeparture);
    const time = eventTimeMs(event);
    let delay = eventDelay(event);
    if (delay === null && time !== null && scheduled !== null) delay = Math.round((time - scheduled) / 1000);
    if (delay === null) delay = carried;
    else carried = delay;
    const predicted = time ?? (scheduled !== null && delay !== null ? scheduled + delay * 1000 : null);
    push(
      stopId,
      st.stop_sequence,
      scheduled,
      predicted,
      delay,
      delayStateFor(delay, ctx),
      sideTime(u.arrival, scheduledAt(st, false), delay),
      sideTime(u.departure, scheduledAt(st, true), delay),
    );
  }
  for (const u of strays) strayRow(u, canceled, ctx, push);
  return rows;
}

/**
 * One side of a stop (arrival or departure): its own time, else its scheduled time moved by its delay or the stop's.
 */
function sideTime(
  event: StopTimeEventMsg | undefined,
  scheduled: number | null,
  stopDelay: number | null,
): number | null {
  const time = eventTimeMs(event);
  if (time !== null) return time;
  const delay = eventDelay(event) ?? stopDelay;
  return scheduled !== null && delay !== null ? scheduled + delay * 1000 : null;
}

/** Each trip's stop_sequence → index in its stop times, built once per (cached) stop times list. */
const sequenceIndexes = new WeakMap<readonly ScheduledStopTime[], Map<number, number>>();

function sequenceIndex(stopTimes: readonly ScheduledStopTime[]): Map<number, number> {
  let index = sequenceIndexes.get(stopTimes);
  if (!index) {
    index = new Map();
    for (let i = 0; i < stopTimes.length; i++) index.set(stopTimes[i]!.stop_sequence, i);
    sequenceIndexes.set(stopTimes, index);
  }
  return index;
}

/** One row; a literal with every field in one order keeps one hidden class for all rows. */
function arrivalRow(
  base: RowBase,
  stationId: string,
  stopId: string,
  seq: number | null,
  scheduledMs: number | null,
  predictedMs: number | null,
  delayS: number | null,
  state: DelayState,
  arrivalMs: number | null,
  departureMs: number | null,
): Arrival {
  return {
    feed_id: base.feed_id,
    schedule_id: base.schedule_id,
    trip_id: base.trip_id,
    feed_trip_id: base.feed_trip_id,
    trip_instance: base.trip_instance,
    route_id: base.route_id,
    mode: base.mode,
    station_id: stationId,
    stop_id: stopId,
    stop_sequence: seq,
    direction_id: base.direction_id,
    service_date: base.service_date,
    scheduled_ms: scheduledMs,
    predicted_ms: predictedMs,
    delay_s: delayS,
    delay_state: state,
    trip_relationship: base.trip_relationship,
    in_schedule: base.in_schedule,
    vehicle_id: base.vehicle_id,
    observed_ms: base.observed_ms,
    predicted_arrival_ms: arrivalMs,
    predicted_departure_ms: departureMs,
  };
}

type Push = (
  stopId: string,
  seq: number | null,
  scheduledMs: number | null,
  predictedMs: number | null,
  delayS: number | null,
  state: DelayState,
  arrivalMs?: number | null,
  departureMs?: number | null,
) => void;

/** Trips without scheduled stop times: each update stands alone, times as the feed gives them. */
function unscheduledRows(input: TripArrivalsInput, canceled: boolean, ctx: NormalizeContext, push: Push): void {
  // without a schedule a sequence number cannot be checked, so a stop repeats only when both
  // its sequence and its id do (BART numbers two different first stops 1)
  const seen = new Set<string>();
  for (const u of input.updates) {
    if (has(u, 'stop_sequence')) {
      const key = `${u.stop_sequence}|${u.stop_id ?? ''}`;
      if (seen.has(key)) {
        ctx.rejects.add('duplicate_stop_time');
        continue;
      }
      seen.add(key);
    }
    strayRow(u, canceled, ctx, push);
  }
}

function strayRow(u: StopTimeUpdateMsg, canceled: boolean, ctx: NormalizeContext, push: Push): void {
  if (!u.stop_id) {
    ctx.rejects.add('missing_stop');
    return;
  }
  const seq = has(u, 'stop_sequence') ? u.stop_sequence! : null;
  const relationship = u.schedule_relationship ?? STOP_RELATIONSHIP.SCHEDULED;
  const { event } = pickEvent(u);
  const scheduledRaw = event && has(event, 'scheduled_time') ? int64(event.scheduled_time) : null;
  const scheduled = scheduledRaw ? scheduledRaw * 1000 : null;
  if (canceled || relationship === STOP_RELATIONSHIP.SKIPPED) {
    push(u.stop_id, seq, scheduled, null, null, canceled ? 'canceled' : 'skipped');
    return;
  }
  if (relationship === STOP_RELATIONSHIP.NO_DATA) {
    push(u.stop_id, seq, scheduled, null, null, 'unknown');
    return;
  }
  const time = eventTimeMs(event);
  let delay = eventDelay(event);
  if (delay === null && time !== null && scheduled !== null) delay = Math.round((time - scheduled) / 1000);
  // a bare delay with no scheduled time to apply it to predicts nothing
  const predicted = time ?? (scheduled !== null && delay !== null ? scheduled + delay * 1000 : null);
  push(
    u.stop_id,
    seq,
    scheduled,
    predicted,
    delay,
    delayStateFor(delay, ctx),
    eventTimeMs(u.arrival),
    eventTimeMs(u.departure),
  );
}

/** A stop of a trip as arrival.updated events name it: sequence and stop id (a platform change is another stop). */
export interface ArrivalStop {
  stop_id: string;
  stop_sequence: number | null;
}

/** What changed in one trip between two polls: new or changed rows, and stops no longer predicted. */
export interface TripArrivalChanges {
  changed: Arrival[];
  removed: ArrivalStop[];
}

function stopKey(a: ArrivalStop): string {
  return `${a.stop_sequence ?? ''}|${a.stop_id}`;
}

/** Whether two rows of one trip and stop say the same thing; observed_ms (when we looked) aside. */
export function sameArrival(a: Arrival, b: Arrival): boolean {
  return (
    a.stop_id === b.stop_id &&
    a.stop_sequence === b.stop_sequence &&
    a.predicted_ms === b.predicted_ms &&
    a.scheduled_ms === b.scheduled_ms &&
    a.delay_s === b.delay_s &&
    a.delay_state === b.delay_state &&
    a.station_id === b.station_id &&
    a.trip_relationship === b.trip_relationship &&
    a.vehicle_id === b.vehicle_id &&
    a.route_id === b.route_id &&
    a.direction_id === b.direction_id &&
    a.mode === b.mode &&
    a.in_schedule === b.in_schedule
  );
}

/**
 * The rows of `next` that are new or differ from `previous` (same trip, one poll apart), and the
 * stops of `previous` that `next` no longer has; null when nothing changed. The usual case, a
 * trip whose rows come in the same order, is compared without building an index.
 */
export function diffTripArrivals(
  previous: readonly Arrival[] | undefined,
  next: readonly Arrival[],
): TripArrivalChanges | null {
  if (!previous || previous.length === 0) return next.length ? { changed: [...next], removed: [] } : null;
  if (previous.length === next.length) {
    // the usual update: the same stops in the same order, some predictions moved. Compared
    // position by position while the stops match and their sequences rise (so each stop comes
    // once, and by position is by stop), without a key per stop
    let changed: Arrival[] | null = null;
    let i = 0;
    for (; i < next.length; i++) {
      const old = previous[i]!;
      const a = next[i]!;
      const sequence = old.stop_sequence;
      if (sequence === null || sequence !== a.stop_sequence || old.stop_id !== a.stop_id) break;
      if (i > 0 && sequence <= previous[i - 1]!.stop_sequence!) break;
      if (sameArrival(old, a)) continue;
      changed ??= [];
      changed.push(a);
    }
    if (i === next.length) return changed ? { changed, removed: [] } : null;
    // not aligned: unchanged all the same when every row is as before, position by position
    if (!changed) {
      while (i < next.length && sameArrival(previous[i]!, next[i]!)) i++;
      if (i === next.length) return null;
    }
  }
  const before = new Map<string, Arrival>();
  for (const a of previous) before.set(stopKey(a), a);
  const changed: Arrival[] = [];
  for (const a of next) {
    const key = stopKey(a);
    const old = before.get(key);
    before.delete(key);
    if (!old || !sameArrival(old, a)) changed.push(a);
  }
  const removed: ArrivalStop[] = [];
  for (const a of before.values()) removed.push({ stop_id: a.stop_id, stop_sequence: a.stop_sequence });
  return changed.length || removed.length ? { changed, removed } : null;
}
