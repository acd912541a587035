// The TripDescriptor rules, for trip updates and vehicles alike: its ids against the schedule,
// its start time and date, and what it leaves out.
import { has, type TripDescriptorMsg } from '../gtfs-rt-types.ts';
import { TRIP_ADDED, TRIP_NEW, type CheckContext } from './context.ts';
import type { FindingSink } from './findings.ts';

const START_TIME = /^[0-2]?[0-9]:[0-5][0-9]:[0-5][0-9]$/;
const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** YYYYMMDD naming a real day (February 29th in leap years only). */
export function validStartDate(text: string): boolean {
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

/** H:MM:SS or HH:MM:SS, hours up to 29 (service past midnight), as the validator reads GTFS times. */
export const validStartTime = (text: string): boolean => START_TIME.test(text);

export function checkTrip(td: TripDescriptorMsg, entity: string | null, ctx: CheckContext, sink: FindingSink): void {
  const tripId = td.trip_id;
  const routeId = td.route_id;
  const relationship = td.schedule_relationship;
  const added = relationship === TRIP_ADDED || relationship === TRIP_NEW;
  if (!has(td, 'trip_id')) sink.add('W006', entity, () => 'trip without trip_id');
  if (has(td, 'start_time') && !validStartTime(td.start_time!)) {
    sink.add('E020', entity, () => `start_time ${JSON.stringify(td.start_time)} is not HH:MM:SS`);
  }
  if (has(td, 'start_date') && !validStartDate(td.start_date!)) {
    sink.add('E021', entity, () => `start_date ${JSON.stringify(td.start_date)} is not a YYYYMMDD date`);
  }
  const schedule = ctx.schedule;
  if (!schedule) return;
  const route = routeId ? schedule.route(routeId) : undefined;
  if (routeId && !route) sink.add('E004', entity, () => `route_id ${JSON.stringify(routeId)} is not in the schedule`);
  if (!tripId) return;
  const scheduled = schedule.trip(tripId);
  if (!scheduled) {
    if (!added) sink.add('E003', entity, () => `trip_id ${JSON.stringify(tripId)} is not in the schedule`);
    return;
  }
  if (added) sink.add('E016', entity, () => `trip_id ${JSON.stringify(tripId)} is marked ADDED but is in the schedule`);
  if (has(td, 'direction_id') && td.direction_id !== scheduled.direction_id) {
    sink.add(
      'E024',
      entity,
      () =>
        `direction_id ${td.direction_id} differs from the schedule's ${scheduled.direction_id ?? '(none)'} for trip ${tripId}`,
    );
  }
  if (routeId && route && scheduled.route_id !== routeId) {
    sink.add('E035', entity, () => `trip ${tripId} belongs to route ${scheduled.route_id}, not ${routeId}`);
  }
}
