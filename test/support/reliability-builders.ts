// Builders for reliability tests: GTFS rows written straight into the 001 tables, and trip
// observations appended the way the history writer does.
import { dateValue, timestampTZValue } from '@duckdb/node-api';
import type { TripObservation } from '../../core/types.ts';
import { Db } from '../../store/db.ts';

export interface TripSpec {
  trip_id: string;
  route_id: string;
  service_id: string;
  /** first departure and last arrival, GTFS seconds (may exceed 86,400) */
  start_s: number;
  end_s: number;
}

export interface CalendarSpec {
  service_id: string;
  /** monday..sunday */
  days: [boolean, boolean, boolean, boolean, boolean, boolean, boolean];
  start_date: string;
  end_date: string;
}

export interface ScheduleSpec {
  schedule_id: string;
  timezone: string;
  routes: { route_id: string; route_type: number; mode: string | null }[];
  calendar?: CalendarSpec[];
  calendar_dates?: { service_id: string; date: string; exception_type: 1 | 2 }[];
  trips: TripSpec[];
}

export const EVERY_DAY: CalendarSpec['days'] = [true, true, true, true, true, true, true];
export const WEEKDAYS: CalendarSpec['days'] = [true, true, true, true, true, false, false];

export async function insertSchedule(db: Db, spec: ScheduleSpec): Promise<void> {
  const id = spec.schedule_id;
  await db.run(`INSERT INTO schedules VALUES ($id, 'test', now(), $tz, NULL, ['routes.txt'])`, {
    id,
    tz: spec.timezone,
  });
  await db.run(`INSERT INTO gtfs_agency VALUES ($id, 'A', 'Agency', 'https://example.test', $tz)`, {
    id,
    tz: spec.timezone,
  });
  for (const r of spec.routes) {
    await db.run(`INSERT INTO gtfs_routes VALUES ($id, $route, 'A', $route, NULL, $type, NULL, NULL, $mode)`, {
      id,
      route: r.route_id,
      type: r.route_type,
      mode: r.mode,
    });
  }
  for (const c of spec.calendar ?? []) {
    await db.run(
      `INSERT INTO gtfs_calendar VALUES ($id, $service, $d1, $d2, $d3, $d4, $d5, $d6, $d7,
        CAST($start AS DATE), CAST($end AS DATE))`,
      {
        id,
        service: c.service_id,
        start: c.start_date,
        end: c.end_date,
        d1: c.days[0],
        d2: c.days[1],
        d3: c.days[2],
        d4: c.days[3],
        d5: c.days[4],
        d6: c.days[5],
        d7: c.days[6],
      },
    );
  }
  for (const x of spec.calendar_dates ?? []) {
    await db.run(`INSERT INTO gtfs_calendar_dates VALUES ($id, $service, CAST($date AS DATE), $type)`, {
      id,
      service: x.service_id,
      date: x.date,
      type: x.exception_type,
    });
  }
  for (const t of spec.trips) {
    await db.run(
      `INSERT INTO gtfs_trips (schedule_id, trip_id, route_id, service_id, direction_id) VALUES ($id, $trip, ` +
        `$route, $service, 0)`,
      { id, trip: t.trip_id, route: t.route_id, service: t.service_id },
    );
    await db.run(
      `INSERT INTO gtfs_stop_times VALUES ($id, $trip, 1, 'S1', $start, $start), ($id, $trip, 2, 'S2', $end, $end)`,
      { id, trip: t.trip_id, start: t.start_s, end: t.end_s },
    );
  }
}

/**
 * Appends observations through the DuckDB appender, in trip_observations column order. A row
 * without schedule_id is the only schedule's, as a feed resolves against the one configured.
 */
export async function appendObservations(db: Db, rows: readonly TripObservation[]): Promise<void> {
  const schedules = await db.all<{ schedule_id: string }>('SELECT schedule_id FROM schedules');
  const only = schedules.length === 1 ? schedules[0]!.schedule_id : null;
  await db.append('trip_observations', (a) => {
    const text = (v: string | null): void => (v === null ? a.appendNull() : a.appendVarchar(v));
    for (const r of rows) {
      a.appendVarchar(r.feed_id);
      a.appendDate(dateValue(Math.round(Date.parse(`${r.service_date}T00:00:00Z`) / 86_400_000)));
      a.appendVarchar(r.trip_id);
      text(r.route_id);
      text(r.mode);
      a.appendVarchar(r.relationship);
      a.appendInteger(r.skipped_stops);
      a.appendVarchar(r.source);
      a.appendBoolean(r.in_schedule);
      a.appendTimestampTZ(timestampTZValue(BigInt(r.observed_ms) * 1000n));
      // one row per poll, as before change-only history (migration 016)
      a.appendInteger(1);
      text(r.feed_trip_id ?? null);
      text(r.schedule_id === undefined ? only : r.schedule_id);
      a.endRow();
    }
  });
}

/** One observation with test defaults: a scheduled bus trip seen in a trip update. */
export function obs(
  partial: Partial<TripObservation> & Pick<TripObservation, 'trip_id' | 'service_date'>,
): TripObservation {
  return {
    feed_id: 'test',
    route_id: null,
    mode: null,
    relationship: 'scheduled',
    skipped_stops: 0,
    source: 'trip_update',
    in_schedule: true,
    observed_ms: Date.parse(`${partial.service_date}T12:00:00Z`),
    ...partial,
  };
}

export async function openTestDb(): Promise<Db> {
  return Db.open(':memory:');
}
