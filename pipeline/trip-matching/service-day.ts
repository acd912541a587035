// Which service day a realtime trip belongs to. GTFS puts a trip that leaves at 00:30 after a
// Monday evening on Monday's service as 24:30:00; many feeds publish it with start_date =
// Tuesday, the calendar day. Read literally, its stop times land a day late (delays of about
// −86,400 s), or it is not found at all when Tuesday's service has no such trip.
import type { ScheduledTrip } from '../../core/ports.ts';
import { candidateServiceDates, previousDate, serviceDayOriginMs } from '../../core/dates.ts';
import type { MatchQuery, ServiceDay } from './query.ts';

const DAY_S = 86_400;

/**
 * The service day of a trip the feed names by id: start_date, or the day before when the trip
 * starts past 24:00 and the feed gave the calendar date; without start_date the day whose run
 * of the trip is nearest to now. Null when the trip runs on none of them.
 */
export function serviceDayOf(q: MatchQuery, trip: ScheduledTrip): ServiceDay | null {
  const { schedule } = q;
  const span = schedule.tripSpan(trip.trip_id);
  if (q.start_date === null) return nearestRun(q, trip, span?.start_s ?? 0, span?.end_s ?? span?.start_s ?? 0);
  const date = q.start_date;
  const runs = schedule.runsOn(trip.service_id, date);
  // a DUPLICATED trip's start_time is its own, not the original's: it says nothing about the day
  if (!span || span.start_s < DAY_S || q.relationship === 'duplicated')
    return runs ? { service_date: date, previous_day: false } : null;
  const previous = previousDate(date);
  if (!schedule.runsOn(trip.service_id, previous)) return runs ? { service_date: date, previous_day: false } : null;
  if (!runs) return { service_date: previous, previous_day: true };
  // it runs on both days: the start time says which clock the feed used, else the nearer run wins
  if (q.start_s === span.start_s) return { service_date: date, previous_day: false };
  if (q.start_s !== null && q.start_s + DAY_S === span.start_s) return { service_date: previous, previous_day: true };
  const onDate = distance(q.now_ms, serviceDayOriginMs(date, q.timezone), span.start_s, span.end_s);
  const onPrevious = distance(q.now_ms, serviceDayOriginMs(previous, q.timezone), span.start_s, span.end_s);
  return onPrevious < onDate
    ? { service_date: previous, previous_day: true }
    : { service_date: date, previous_day: false };
}

/** Without start_date: of yesterday, today and tomorrow in the agency zone, the run nearest to now. */
function nearestRun(q: MatchQuery, trip: ScheduledTrip, startS: number, endS: number): ServiceDay | null {
  let best: string | null = null;
  let bestDistance = Infinity;
  for (const date of candidateServiceDates(q.now_ms, q.timezone)) {
    if (!q.schedule.runsOn(trip.service_id, date)) continue;
    const d = distance(q.now_ms, serviceDayOriginMs(date, q.timezone), startS, endS);
    if (d < bestDistance) {
      best = date;
      bestDistance = d;
    }
  }
  return best === null ? null : { service_date: best, previous_day: false };
}

function distance(now: number, originMs: number, startS: number, endS: number): number {
  const start = originMs + startS * 1000;
  const end = originMs + endS * 1000;
  return now < start ? start - now : now > end ? now - end : 0;
}

export interface ProbeDay extends ServiceDay {
  /** the start time as the schedule of that day writes it */
  start_s: number;
}

/**
 * The days a trip found by its start time may belong to: the start date at that time, and the
 * day before at that time + 24 h. Without start_date, the day on which that start is nearest now.
 */
export function probeDays(q: MatchQuery, startS: number): [ProbeDay, ProbeDay] {
  let date = q.start_date;
  if (date === null) {
    let bestDistance = Infinity;
    for (const candidate of candidateServiceDates(q.now_ms, q.timezone)) {
      const d = Math.abs(serviceDayOriginMs(candidate, q.timezone) + startS * 1000 - q.now_ms);
      if (d < bestDistance) {
        date = candidate;
        bestDistance = d;
      }
    }
  }
  return [
    { service_date: date!, previous_day: false, start_s: startS },
    { service_date: previousDate(date!), previous_day: q.start_date !== null, start_s: startS + DAY_S },
  ];
}
