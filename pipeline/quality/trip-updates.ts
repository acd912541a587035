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
import { isPosixSeconds, TRIP_CANCELED, TRIP_DELETED, type CheckContext } from './context.ts';
import type { FindingSink } from './findings.ts';
import { checkTimestamp } from './timestamps.ts';
import { checkTrip } from './trips.ts';
import { instantText } from '../../core/dates.ts';

const { SKIPPED, NO_DATA } = STOP_RELATIONSHIP;
const own = Object.prototype.hasOwnProperty;

/** An event's time; null without one (0 may be unset: asked only then). */
function eventTime(e: StopTimeEventMsg | null | undefined): number | null {
  if (e == null) return null;
  const t = int64(e.time) ?? 0;
  return t !== 0 || own.call(e, 'time') ? t : null;
}
const emptyEvent = (e: StopTimeEventMsg | null | undefined): boolean =>
  e != null && !own.call(e, 'time') && !own.call(e, 'delay');
const stopOf = (u: StopTimeUpdateMsg): string =>
  has(u, 'stop_sequence') ? `stop_sequence ${u.stop_sequence}` : `stop_id ${JSON.stringify(u.stop_id ?? '')}`;

export function checkTripUpdate(entity: FeedEntityMsg, ctx: CheckContext, sink: FindingSink): void {
  const tu = entity.trip_update!;
  const td = tu.trip;
  const id = entity.id || td?.trip_id || null;
  let unmarked = td == null || !own.call(td, 'schedule_relationship');
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
  const lookups = ctx.lookups;
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
  let prevSeq = -1;
  let prevStop = '';

  // the reasons below take their values as arguments: nothing of this loop is captured (allocated)
  for (let k = 0; k < updates.length; k++) {
    const u = updates[k]!;
    const given = u.stop_sequence ?? 0;
    const hasSeq = given !== 0 || own.call(u, 'stop_sequence');
    const stopId = u.stop_id || '';
    const relationship = u.schedule_relationship ?? 0;
    if (!own.call(u, 'schedule_relationship')) unmarked = true;
    if (!hasSeq && !stopId) sink.add('E040', id, (n) => `update ${n} has neither stop_id nor stop_sequence`, k + 1);
    if (k > 0) {
      if (hasSeq && prevSeq === given) sink.add('E036', id, (n) => `stop_sequence ${n} twice in a row`, given);
      if (stopId && prevStop === stopId) {
        sink.add('E037', id, (x) => `stop_id ${JSON.stringify(x)} twice in a row`, stopId);
      }
    }
    prevSeq = hasSeq ? given : -1;
    prevStop = stopId;
    if (stopId && lookups && !lookups.stop(stopId)) {
      sink.add('E011', id, (x) => `stop_id ${JSON.stringify(x)} is not in the schedule`, stopId);
    }

    // order: by stop_sequence, else by where the schedule has the stop_id after the stop before
    let seq = -1;
    if (hasSeq) seq = given;
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
      sink.add(
        'E042',
        id,
        (x, a) => `${stopOf(x)} is NO_DATA but carries ${a ? 'an arrival' : 'a departure'}`,
        u,
        hasArrival,
      );
    }
    if (!hasArrival && !hasDeparture && relationship !== SKIPPED && relationship !== NO_DATA) {
      sink.add('E043', id, (x) => `${stopOf(x)} has neither arrival nor departure`, u);
    }
    if (relationship !== SKIPPED && (emptyEvent(arrival) || emptyEvent(departure))) {
      sink.add(
        'E044',
        id,
        (x) => `${stopOf(x)} has ${emptyEvent(x.arrival) ? 'an arrival' : 'a departure'} without time or delay`,
        u,
      );
    }
    const at = eventTime(arrival);
    const dt = eventTime(departure);
    if ((at !== null && !isPosixSeconds(at)) || (dt !== null && !isPosixSeconds(dt))) {
      sink.add(
        'E001',
        id,
        (x, t) => `${stopOf(x)} time ${t} is not POSIX seconds`,
        u,
        at !== null && !isPosixSeconds(at) ? at : dt,
      );
    }
    const before = prevArr === null ? prevDep : prevDep === null ? prevArr : Math.max(prevArr, prevDep);
    if (before !== null && ((at !== null && at <= before) || (dt !== null && dt <= before))) {
      sink.add(
        'E022',
        id,
        (x, t, b) => `${stopOf(x)} at ${instantText(t * 1000)} is not after the stop before (${instantText(b * 1000)})`,
        u,
        (at ?? dt)!,
        before,
      );
    }
    if (at !== null && dt !== null && dt < at) {
      sink.add(
        'E025',
        id,
        (x, d, a) => `${stopOf(x)} departs at ${instantText(d * 1000)}, before it arrives (${instantText(a * 1000)})`,
        u,
        dt,
        at,
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
