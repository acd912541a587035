// A small schedule with known reliability figures, for the API and CLI tests.
//
// Schedule `demo`, America/New_York. Every day (service ALL) from 2024-04-01 to 2024-05-31:
// bus 39 runs four trips, 39_a..39_d; bus 66 runs 66_a and 66_b on weekdays only (service WKDY);
// rail Red runs R_a; streetcar E runs E_a. Observed on 2024-04-20..2024-04-30 and finalized:
// 39_a delivered, 39_b delivered with a skipped stop, 39_c canceled, 39_d never seen; 66_a
// delivered, 66_b delivered on even dates only. Nothing rail or streetcar is observed. On
// 2024-05-01 (today at NOW, 12:13 EDT) 39_a has been seen so far.
import type { TripObservation } from '../../core/types.ts';
import type { Db } from '../../store/db.ts';
import { addDays, finalizeServiceDay, refreshScheduledTrips } from '../../store/reliability/index.ts';
import { appendObservations, EVERY_DAY, insertSchedule, obs, WEEKDAYS } from './reliability-builders.ts';

export const FIRST_DAY = '2024-04-20';
export const LAST_FINALIZED = '2024-04-30';
export const TODAY = '2024-05-01';
export const TIMEZONE = 'America/New_York';

export function datesBetween(from: string, to: string): string[] {
  const out: string[] = [];
  for (let d = from; d <= to; d = addDays(d, 1)) out.push(d);
  return out;
}

export async function insertReliabilitySchedule(db: Db): Promise<void> {
  const trip = (trip_id: string, route_id: string, service_id: string, hour: number) => ({
    trip_id,
    route_id,
    service_id,
    start_s: hour * 3600,
    end_s: hour * 3600 + 1800,
  });
  await insertSchedule(db, {
    schedule_id: 'demo',
    timezone: TIMEZONE,
    routes: [
      { route_id: '39', route_type: 3, mode: 'bus' },
      { route_id: '66', route_type: 3, mode: 'bus' },
      { route_id: 'Red', route_type: 1, mode: 'rail' },
      { route_id: 'E', route_type: 0, mode: 'streetcar' },
    ],
    calendar: [
      { service_id: 'ALL', days: EVERY_DAY, start_date: '2024-04-01', end_date: '2024-05-31' },
      { service_id: 'WKDY', days: WEEKDAYS, start_date: '2024-04-01', end_date: '2024-05-31' },
    ],
    trips: [
      trip('39_a', '39', 'ALL', 6),
      trip('39_b', '39', 'ALL', 8),
      trip('39_c', '39', 'ALL', 10),
      trip('39_d', '39', 'ALL', 12),
      trip('66_a', '66', 'WKDY', 7),
      trip('66_b', '66', 'WKDY', 9),
      trip('R_a', 'Red', 'ALL', 7),
      trip('E_a', 'E', 'ALL', 7),
    ],
  });
  await refreshScheduledTrips(db, 'demo', '2024-04-01', '2024-05-31');
}

function busObservations(date: string): TripObservation[] {
  const seen = (trip_id: string, route_id: string, extra: Partial<TripObservation> = {}) =>
    obs({ trip_id, route_id, mode: 'bus', service_date: date, ...extra });
  const rows = [
    seen('39_a', '39'),
    seen('39_b', '39', { skipped_stops: 1 }),
    seen('39_c', '39', { relationship: 'canceled' }),
  ];
  const weekday = new Date(`${date}T12:00:00Z`).getUTCDay() % 6 !== 0;
  if (weekday) {
    rows.push(seen('66_a', '66'));
    if (Number(date.slice(8)) % 2 === 0) rows.push(seen('66_b', '66'));
  }
  return rows;
}

/** Schedule, eleven finalized days of bus history and a live day (see the file comment). */
export async function seedReliability(db: Db): Promise<void> {
  await insertReliabilitySchedule(db);
  for (const date of datesBetween(FIRST_DAY, LAST_FINALIZED)) {
    await appendObservations(db, busObservations(date));
    await finalizeServiceDay(db, date, { now: new Date(`${addDays(date, 1)}T12:00:00Z`) });
  }
  await appendObservations(db, [
    obs({
      trip_id: '39_a',
      route_id: '39',
      mode: 'bus',
      service_date: TODAY,
      observed_ms: Date.parse(`${TODAY}T10:05:00Z`),
    }),
  ]);
}

/** One observed and finalized rail day, so rail has retained rows. */
export async function seedRailDay(db: Db, date: string): Promise<void> {
  await appendObservations(db, [obs({ trip_id: 'R_a', route_id: 'Red', mode: 'rail', service_date: date })]);
  await finalizeServiceDay(db, date);
}
