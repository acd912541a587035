// The TripDescriptor rules, for trip updates and vehicles alike: its ids against the schedule,
// its start time and date, and what it leaves out.
import type { TripDescriptorMsg } from '../gtfs-rt-types.ts';
import { TRIP_ADDED, TRIP_NEW, type CheckContext } from './context.ts';
import type { FindingSink } from './findings.ts';

const own = Object.prototype.hasOwnProperty;
const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

// a snapshot's trips mostly share one or two dates: the last one checked is remembered
let lastDate = '';
let lastDateValid = false;

/** YYYYMMDD naming a real day (February 29th in leap years only). */
export function validStartDate(text: string): boolean {
  if (text === lastDate) return lastDateValid;
  lastDate = text;
  lastDateValid = isDate(text);
  return lastDateValid;
}

function isDate(text: string): boolean {
  if (text.length !== 8) return false;
  for (let i = 0; i < 8; i++) {
    const c = text.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  const year = Number(text.slice(0, 4));
  const month = Number(text.slice(4, 6));
  const day = Number(text.slice(6, 8));
  if (month < 1 || month > 12 || day < 1 || day > DAYS_IN_MONTH[month - 1]!) return false;
  return month !== 2 || day < 29 || (year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0));
}

const digit = (c: number): boolean => c >= 48 && c <= 57;
/** 0 to 5: the tens of minutes and seconds */
const sixty = (c: number): boolean => c >= 48 && c <= 53;

/**
 * H:MM:SS or HH:MM:SS, hours up to 29 (service past midnight), as the validator reads GTFS times:
 * /^[0-2]?[0-9]:[0-5][0-9]:[0-5][0-9]$/ read character by character, a tenth of the regular
 * expression's cost on a string fresh from the decoder (it runs on every trip that has one).
 */
export function validStartTime(text: string): boolean {
  const at = text.length - 8; // 0: HH:MM:SS, -1: H:MM:SS
  if (at !== 0 && at !== -1) return false;
  if (at === 0) {
    const c = text.charCodeAt(0);
    if (c < 48 || c > 50) return false;
  }
  return (
    digit(text.charCodeAt(at + 1)) &&
    text.charCodeAt(at + 2) === 58 &&
    sixty(text.charCodeAt(at + 3)) &&
    digit(text.charCodeAt(at + 4)) &&
    text.charCodeAt(at + 5) === 58 &&
    sixty(text.charCodeAt(at + 6)) &&
    digit(text.charCodeAt(at + 7))
  );
}

export function checkTrip(td: TripDescriptorMsg, entity: string | null, ctx: CheckContext, sink: FindingSink): void {
  const tripId = td.trip_id;
  const routeId = td.route_id;
  const relationship = td.schedule_relationship;
  const added = relationship === TRIP_ADDED || relationship === TRIP_NEW;
  // unset strings read '' (the prototype's default); an empty one is as good as none
  if (!tripId) sink.add('W006', entity, () => 'trip without trip_id');
  const startTime = td.start_time;
  if (startTime && !validStartTime(startTime)) {
    sink.add('E020', entity, (x) => `start_time ${JSON.stringify(x)} is not HH:MM:SS`, startTime);
  }
  const startDate = td.start_date;
  if (startDate && !validStartDate(startDate)) {
    sink.add('E021', entity, (x) => `start_date ${JSON.stringify(x)} is not a YYYYMMDD date`, startDate);
  }
  const schedule = ctx.lookups;
  if (!schedule) return;
  const scheduled = tripId ? schedule.trip(tripId) : undefined;
  // the usual case, a trip of the route it names: the route is the schedule's, no second lookup
  const routeKnown = !routeId || scheduled?.route_id === routeId || schedule.route(routeId) !== undefined;
  if (!routeKnown) sink.add('E004', entity, (x) => `route_id ${JSON.stringify(x)} is not in the schedule`, routeId);
  if (!tripId) return;
  if (!scheduled) {
    if (!added) sink.add('E003', entity, (x) => `trip_id ${JSON.stringify(x)} is not in the schedule`, tripId);
    return;
  }
  if (added)
    sink.add('E016', entity, (x) => `trip_id ${JSON.stringify(x)} is marked ADDED but is in the schedule`, tripId);
  if (own.call(td, 'direction_id') && td.direction_id !== scheduled.direction_id) {
    sink.add(
      'E024',
      entity,
      (d, s, t) => `direction_id ${d} differs from the schedule's ${s ?? '(none)'} for trip ${t}`,
      td.direction_id,
      scheduled.direction_id,
      tripId,
    );
  }
  if (routeId && routeKnown && scheduled.route_id !== routeId) {
    sink.add(
      'E035',
      entity,
      (t, s, r) => `trip ${t} belongs to route ${s}, not ${r}`,
      tripId,
      scheduled.route_id,
      routeId,
    );
  }
}
