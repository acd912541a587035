// The TripUpdate rules: the trip, the vehicle, the timestamp, and one pass over its stop time
// updates for their order, their stops and their times. Nothing is allocated per update.
import type { ScheduledStopTime } from '../../core/ports.ts';
import {
  STOP_RELATIONSHIP,
  has,
  int64,
  type FeedEntityMsg,
  type StopTimeEventMsg,
  type StopTimeUpdateMsg,
} from '../gtfs-rt-types.ts';
import { isoOf, isPosixSeconds, TRIP_CANCELED, TRIP_DELETED, type CheckContext } from './context.ts';
import type { FindingSink } from './findings.ts';
import { checkTimestamp } from './timestamps.ts';
import { checkTrip } from './trips.ts';

const { SKIPPED, NO_DATA } = STOP_RELATIONSHIP;

const eventTime = (e: StopTimeEventMsg | null | undefined): number | null =>
  e != null && has(e, 'time') ? (int64(e.time) ?? 0) : null;
const emptyEvent = (e: StopTimeEventMsg | null | undefined): boolean =>
  e != null && !has(e, 'time') && !has(e, 'delay');
const stopOf = (u: StopTimeUpdateMsg): string =>
  has(u, 'stop_sequence') ? `stop_sequence ${u.stop_sequence}` : `stop_id ${JSON.stringify(u.stop_id ?? '')}`;

export function checkTripUpdate(entity: FeedEntityMsg, ctx: CheckContext, sink: FindingSink): void {
  const tu = entity.trip_update!;
  const td = tu.trip;
  const id = entity.id || td?.trip_id || null;
  let unmarked = td == null || !has(td, 'schedule_relationship');
  if (td) checkTrip(td, id, ctx, sink);
  checkTimestamp(tu, id, 'trip update', ctx, sink);
  if (!tu.vehicle?.id) sink.add('W002', id, () => 'trip update without vehicle.id');

  const updates = tu.stop_time_update ?? [];
  if (updates.length === 0) {
    const relationship = td?.schedule_relationship;
    if (relationship !== TRIP_CANCELED && relationship !== TRIP_DELETED && !has(tu, 'delay'))
      sink.add('E041', id, () => 'trip update without stop_time_updates, not canceled, without a trip delay');
  }
  const schedule = ctx.schedule;
  const tripId = td?.trip_id;
  // the scheduled stops, only when an update names its stop by id alone (its place comes from them)
  let stopTimes: readonly ScheduledStopTime[] | null | undefined;
  let cursor = 0;
  // the order: the last known stop_sequence (given, or the scheduled one of its stop_id) and at which update
  let lastSeq = -1;
  let lastSeqAt = -2;
  let unsorted = false;
  let prevArr: number | null = null;
  let prevDep: number | null = null;

  for (let k = 0; k < updates.length; k++) {
    const u = updates[k]!;
    const hasSeq = has(u, 'stop_sequence');
    const stopId = u.stop_id || '';
    const relationship = u.schedule_relationship ?? 0;
    if (!has(u, 'schedule_relationship')) unmarked = true;
    if (!hasSeq && !stopId) sink.add('E040', id, () => `update ${k + 1} has neither stop_id nor stop_sequence`);
    if (k > 0) {
      const prev = updates[k - 1]!;
      if (hasSeq && has(prev, 'stop_sequence') && prev.stop_sequence === u.stop_sequence) {
        sink.add('E036', id, () => `stop_sequence ${u.stop_sequence} twice in a row`);
      }
      if (stopId && prev.stop_id === stopId) {
        sink.add('E037', id, () => `stop_id ${JSON.stringify(stopId)} twice in a row`);
      }
    }
    if (stopId && schedule && !schedule.stop(stopId)) {
      sink.add('E011', id, () => `stop_id ${JSON.stringify(stopId)} is not in the schedule`);
    }

    // order: by stop_sequence, else by where the schedule has the stop_id after the stop before
    let seq = -1;
    if (hasSeq) seq = u.stop_sequence!;
    else if (stopId && tripId && schedule) {
      if (stopTimes === undefined) {
        const list = schedule.stopTimes(tripId);
        stopTimes = list.length ? list : null;
        if (stopTimes) cursor = firstAfter(stopTimes, lastSeq);
      }
      if (stopTimes) {
        let at = indexOfStop(stopTimes, stopId, cursor, stopTimes.length);
        if (at < 0) at = indexOfStop(stopTimes, stopId, 0, cursor);
        if (at >= 0) {
          seq = stopTimes[at]!.stop_sequence;
          cursor = at + 1;
        }
      }
    }
    if (seq >= 0) {
      // a repeat of the update just before is E036 (or E037), not also an order problem
      if (seq < lastSeq || (seq === lastSeq && lastSeqAt !== k - 1)) unsorted = true;
      lastSeq = seq;
      lastSeqAt = k;
      if (hasSeq && stopTimes) cursor = firstAfter(stopTimes, seq);
    }

    const arrival = u.arrival;
    const departure = u.departure;
    const hasArrival = arrival != null;
    const hasDeparture = departure != null;
    if (relationship === NO_DATA && (hasArrival || hasDeparture)) {
      sink.add('E042', id, () => `${stopOf(u)} is NO_DATA but carries ${hasArrival ? 'an arrival' : 'a departure'}`);
    }
    if (!hasArrival && !hasDeparture && relationship !== SKIPPED && relationship !== NO_DATA) {
      sink.add('E043', id, () => `${stopOf(u)} has neither arrival nor departure`);
    }
    if (relationship !== SKIPPED && (emptyEvent(arrival) || emptyEvent(departure))) {
      sink.add(
        'E044',
        id,
        () => `${stopOf(u)} has ${emptyEvent(arrival) ? 'an arrival' : 'a departure'} without time or delay`,
      );
    }
    const at = eventTime(arrival);
    const dt = eventTime(departure);
    if ((at !== null && !isPosixSeconds(at)) || (dt !== null && !isPosixSeconds(dt))) {
      sink.add(
        'E001',
        id,
        () => `${stopOf(u)} time ${at !== null && !isPosixSeconds(at) ? at : dt} is not POSIX seconds`,
      );
    }
    const before = prevArr === null ? prevDep : prevDep === null ? prevArr : Math.max(prevArr, prevDep);
    const first = at ?? dt;
    if (before !== null && first !== null && ((at !== null && at <= before) || (dt !== null && dt <= before))) {
      sink.add(
        'E022',
        id,
        () => `${stopOf(u)} at ${isoOf(first * 1000)} is not after the stop before (${isoOf(before * 1000)})`,
      );
    }
    if (at !== null && dt !== null && dt < at) {
      sink.add(
        'E025',
        id,
        () => `${stopOf(u)} departs at ${isoOf(dt * 1000)}, before it arrives (${isoOf(at * 1000)})`,
      );
    }
    if (at !== null) prevArr = at;
    if (dt !== null) prevDep = dt;
  }
  if (unsorted) sink.add('E002', id, () => 'stop_time_updates are not in stop order');
  if (unmarked) sink.add('W009', id, () => 'schedule_relationship missing on the trip or one of its updates');
}

/** The first stop time after stop_sequence `seq` (stop times are ordered by it). */
function firstAfter(stopTimes: readonly ScheduledStopTime[], seq: number): number {
  let lo = 0;
  let hi = stopTimes.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (stopTimes[mid]!.stop_sequence <= seq) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function indexOfStop(stopTimes: readonly ScheduledStopTime[], stopId: string, from: number, to: number): number {
  for (let i = from; i < to; i++) if (stopTimes[i]!.stop_id === stopId) return i;
  return -1;
}
