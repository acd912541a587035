import type { DuckDBConnection } from '@duckdb/node-api';
import { nyctKey, nyctStaticTrip } from '../core/nyct-trip-id.ts';
import type {
  NyctScheduledTrip,
  NyctTimedTrip,
  ScheduledRoute,
  ScheduledStop,
  ScheduledStopTime,
  ScheduledTrip,
  ScheduleIndex,
  TripSpan,
} from '../core/ports.ts';
import { MODES, type Mode } from '../core/types.ts';
import { epochDay, weekdayOfEpochDay } from '../core/dates.ts';
import type { Db } from './db.ts';
import { loadTripShapes } from './schedule-shapes.ts';

// The static schedule held in memory for the normalizer: Maps for trips, routes and stops,
// and stop times packed into typed arrays (a large feed has millions), turned into objects
// only for the trips asked about.

export interface LoadedScheduleIndex extends ScheduleIndex {
  readonly scheduleId: string;
  trips(): readonly ScheduledTrip[];
  stops(): readonly ScheduledStop[];
}

export interface ScheduleInfo {
  schedule_id: string;
  source: string;
  imported_ms: number;
  timezone: string | null;
  feed_version: string | null;
  files: string[];
  routes: number;
  trips: number;
  stops: number;
  stop_times: number;
}

const NO_TIME = -0x80000000;
const STOP_TIMES_CACHE = 5_000;

export class ScheduleNotFoundError extends Error {
  constructor(scheduleId: string) {
    super(`schedule ${JSON.stringify(scheduleId)} has not been imported`);
    this.name = 'ScheduleNotFoundError';
  }
}

/** Every imported schedule with its row counts, newest import first. */
export async function listSchedules(db: Db): Promise<ScheduleInfo[]> {
  const count = (table: string): string =>
    `(SELECT count(*) FROM ${table} x WHERE x.schedule_id = s.schedule_id)::INTEGER`;
  const rows = await db.all<{
    schedule_id: string;
    source: string;
    imported_ms: number;
    agency_timezone: string | null;
    feed_version: string | null;
    files: string[];
    routes: number;
    trips: number;
    stops: number;
    stop_times: number;
  }>(`SELECT schedule_id, source, epoch_ms(imported_at)::DOUBLE AS imported_ms, agency_timezone, feed_version, files,
        ${count('gtfs_routes')} AS routes, ${count('gtfs_trips')} AS trips,
        ${count('gtfs_stops')} AS stops, ${count('gtfs_stop_times')} AS stop_times
      FROM schedules s ORDER BY imported_at DESC, schedule_id`);
  return rows.map(({ agency_timezone, ...r }) => ({ ...r, timezone: agency_timezone, files: [...r.files] }));
}

/** Loads one schedule into memory. Throws ScheduleNotFoundError when it was never imported. */
export async function loadScheduleIndex(db: Db, scheduleId: string): Promise<LoadedScheduleIndex> {
  // its own connection, so a large schedule loads without holding up history writes
  const conn = await db.connect();
  try {
    return await load(conn, scheduleId);
  } finally {
    conn.closeSync();
  }
}

/**
 * Loads one schedule on `conn`: inside an import's transaction this reads the rows about to be
 * committed, so the new index is ready when the commit lands and can be swapped in at once.
 */
export function loadScheduleIndexOn(conn: DuckDBConnection, scheduleId: string): Promise<LoadedScheduleIndex> {
  return load(conn, scheduleId);
}

async function* rows(conn: DuckDBConnection, sql: string, scheduleId: string): AsyncGenerator<unknown[]> {
  const result = await conn.stream(sql, [scheduleId]);
  for await (const batch of result.yieldRowsJs()) yield* batch;
}

const str = (v: unknown): string => String(v);
const strOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

async function load(conn: DuckDBConnection, scheduleId: string): Promise<LoadedScheduleIndex> {
  const head = (
    await conn.runAndReadAll('SELECT agency_timezone FROM schedules WHERE schedule_id = $1', [scheduleId])
  ).getRowsJS();
  if (!head[0]) throw new ScheduleNotFoundError(scheduleId);
  const timezone = strOrNull(head[0][0]) ?? 'UTC';

  const routes = new Map<string, ScheduledRoute>();
  for await (const [id, type, mode, short, long, color] of rows(
    conn,
    `SELECT route_id, route_type, mode, route_short_name, route_long_name, route_color
     FROM gtfs_routes WHERE schedule_id = $1`,
    scheduleId,
  )) {
    routes.set(
      str(id),
      Object.freeze({
        schedule_id: scheduleId,
        route_id: str(id),
        route_type: Number(type),
        mode: strOrNull(mode) as Mode | null,
        short_name: strOrNull(short),
        long_name: strOrNull(long),
        color: strOrNull(color),
      }),
    );
  }

  const trips = new Map<string, ScheduledTrip>();
  // only NYCT-style schedules fill it, so it is kept apart from the trips, for the matcher's index
  const mtaTripIds = new Map<string, string>();
  for await (const [id, route, service, direction, headsign, mta] of rows(
    conn,
    `SELECT trip_id, route_id, service_id, direction_id, trip_headsign, mta_trip_id FROM gtfs_trips WHERE schedule_id = $1`,
    scheduleId,
  )) {
    trips.set(
      str(id),
      Object.freeze({
        schedule_id: scheduleId,
        trip_id: str(id),
        route_id: str(route),
        service_id: str(service),
        direction_id: numOrNull(direction),
        headsign: strOrNull(headsign),
      }),
    );
    if (mta !== null && mta !== undefined) mtaTripIds.set(str(id), str(mta));
  }

  const stops = new Map<string, ScheduledStop>();
  for await (const [id, name, lat, lon, parent] of rows(
    conn,
    `SELECT stop_id, stop_name, stop_lat, stop_lon, parent_station FROM gtfs_stops WHERE schedule_id = $1`,
    scheduleId,
  )) {
    stops.set(
      str(id),
      Object.freeze({
        stop_id: str(id),
        name: strOrNull(name),
        lat: numOrNull(lat),
        lon: numOrNull(lon),
        station_id: strOrNull(parent) ?? str(id),
      }),
    );
  }

  const stopTimes = await loadStopTimes(conn, scheduleId);
  const calendar = await loadCalendar(conn, scheduleId);
  const tripShape = await loadTripShapes(conn, scheduleId);
  const routeList = Object.freeze([...routes.values()]);
  const tripList = Object.freeze([...trips.values()]);
  const stopList = Object.freeze([...stops.values()]);
  const lookups = new TripLookups(
    tripList,
    (id) => stopTimes.span(id),
    (id) => mtaTripIds.get(id) ?? null,
  );
  // station → modes, for alerts that name only a stop: built on the first such alert
  let stationModes: Map<string, readonly Mode[]> | undefined;
  const modesAt = (stationId: string): readonly Mode[] => {
    if (!stationModes) {
      const sets = new Map<string, Set<Mode>>();
      for (const trip of tripList) {
        const mode = routes.get(trip.route_id)?.mode;
        if (!mode) continue;
        stopTimes.eachStop(trip.trip_id, (stopId) => {
          const station = stops.get(stopId)?.station_id ?? stopId;
          let set = sets.get(station);
          if (!set) sets.set(station, (set = new Set()));
          set.add(mode);
        });
      }
      stationModes = new Map([...sets].map(([id, set]) => [id, Object.freeze(MODES.filter((m) => set.has(m)))]));
    }
    return stationModes.get(stationId) ?? NONE;
  };

  return {
    scheduleId,
    timezone,
    trip: (id) => trips.get(id),
    route: (id) => routes.get(id),
    stop: (id) => stops.get(id),
    stationModes: modesAt,
    stopTimes: (id) => stopTimes.get(id),
    runsOn: (serviceId, date) => calendar.runsOn(serviceId, date),
    routes: () => routeList,
    trips: () => tripList,
    stops: () => stopList,
    tripSpan: (id) => stopTimes.span(id),
    tripsStartingAt: (route, direction, startS) => lookups.startingAt(route, direction, startS),
    tripsOfRoute: (route) => lookups.ofRoute(route),
    nyctTrips: (key) => lookups.nyct(key),
    nyctRouteTrips: (route, direction) => lookups.nyctRoute(route, direction),
    tripShape,
  };
}

const NONE: readonly never[] = Object.freeze([]);

/**
 * The matcher's secondary indexes, each built on its first use: a feed whose trip ids all match
 * never pays for them, and one that needs them pays once per schedule load, then O(1) per trip.
 */
class TripLookups {
  private byStart: Map<string, ScheduledTrip[]> | undefined;
  private byNyct: Map<string, NyctScheduledTrip[]> | undefined;
  private byNyctRoute: Map<string, NyctTimedTrip[]> | undefined;
  private byRoute: Map<string, ScheduledTrip[]> | undefined;

  constructor(
    private readonly trips: readonly ScheduledTrip[],
    private readonly span: (tripId: string) => TripSpan | undefined,
    private readonly mtaTripId: (tripId: string) => string | null,
  ) {}

  startingAt(routeId: string, directionId: number | null, startS: number): readonly ScheduledTrip[] {
    if (!this.byStart) {
      const index = new Map<string, ScheduledTrip[]>();
      for (const trip of this.trips) {
        const span = this.span(trip.trip_id);
        if (!span) continue;
        push(index, `${trip.route_id}|*|${span.start_s}`, trip);
        if (trip.direction_id !== null) push(index, `${trip.route_id}|${trip.direction_id}|${span.start_s}`, trip);
      }
      this.byStart = index;
    }
    return this.byStart.get(`${routeId}|${directionId ?? '*'}|${startS}`) ?? NONE;
  }

  ofRoute(routeId: string): readonly ScheduledTrip[] {
    if (!this.byRoute) {
      const index = new Map<string, ScheduledTrip[]>();
      for (const trip of this.trips) push(index, trip.route_id, trip);
      this.byRoute = index;
    }
    return this.byRoute.get(routeId) ?? NONE;
  }

  nyct(key: string): readonly NyctScheduledTrip[] {
    if (!this.byNyct) this.indexNyct();
    return this.byNyct!.get(key) ?? NONE;
  }

  nyctRoute(routeId: string, direction: 'N' | 'S'): readonly NyctTimedTrip[] {
    if (!this.byNyctRoute) this.indexNyct();
    return this.byNyctRoute!.get(`${routeId}|${direction}`) ?? NONE;
  }

  // both NYCT indexes in one pass: a feed that needs the loose match has needed the exact one first
  private indexNyct(): void {
    const exact = new Map<string, NyctScheduledTrip[]>();
    const byRoute = new Map<string, NyctTimedTrip[]>();
    for (const trip of this.trips) {
      const span = this.span(trip.trip_id);
      const at = nyctStaticTrip(trip.trip_id, this.mtaTripId(trip.trip_id), trip.route_id, span?.start_s ?? null);
      if (!at) continue;
      push(exact, nyctKey(at.origin, at.route, at.direction), Object.freeze({ trip, path: at.path }));
      if (span)
        push(byRoute, `${at.route}|${at.direction}`, Object.freeze({ trip, path: at.path, start_s: span.start_s }));
    }
    for (const list of byRoute.values()) list.sort((a, b) => a.start_s - b.start_s);
    this.byNyct = exact;
    this.byNyctRoute = byRoute;
  }
}

function push<T>(index: Map<string, T[]>, key: string, value: T): void {
  const list = index.get(key);
  if (list) list.push(value);
  else index.set(key, [value]);
}

interface PackedStopTimes {
  get(tripId: string): readonly ScheduledStopTime[];
  /** the trip's stop ids in order, without building stop time objects */
  eachStop(tripId: string, fn: (stopId: string) => void): void;
  span(tripId: string): TripSpan | undefined;
}

async function loadStopTimes(conn: DuckDBConnection, scheduleId: string): Promise<PackedStopTimes> {
  const total = Number(
    (
      await conn.runAndReadAll('SELECT count(*) FROM gtfs_stop_times WHERE schedule_id = $1', [scheduleId])
    ).getRowsJS()[0]![0],
  );
  const sequence = new Int32Array(total);
  const arrival = new Int32Array(total);
  const departure = new Int32Array(total);
  const stopIds: string[] = new Array<string>(total);
  const interned = new Map<string, string>();
  const spans = new Map<string, [start: number, end: number]>();
  let i = 0;
  let currentTrip: string | null = null;
  let spanStart = 0;
  for await (const [trip, seq, stop, arr, dep] of rows(
    conn,
    `SELECT trip_id, stop_sequence, stop_id, arrival_s, departure_s FROM gtfs_stop_times
     WHERE schedule_id = $1 ORDER BY trip_id, stop_sequence`,
    scheduleId,
  )) {
    if (i >= total) break; // rows committed after the count are left for the next load
    const tripId = str(trip);
    if (tripId !== currentTrip) {
      if (currentTrip !== null) spans.set(currentTrip, [spanStart, i]);
      currentTrip = tripId;
      spanStart = i;
    }
    const stopId = str(stop);
    let shared = interned.get(stopId);
    if (shared === undefined) interned.set(stopId, (shared = stopId));
    sequence[i] = Number(seq);
    arrival[i] = arr === null ? NO_TIME : Number(arr);
    departure[i] = dep === null ? NO_TIME : Number(dep);
    stopIds[i] = shared;
    i++;
  }
  if (currentTrip !== null) spans.set(currentTrip, [spanStart, i]);

  const cache = new Map<string, readonly ScheduledStopTime[]>();
  const empty: readonly ScheduledStopTime[] = Object.freeze([]);
  return {
    eachStop(tripId, fn) {
      const span = spans.get(tripId);
      if (span) for (let k = span[0]; k < span[1]; k++) fn(stopIds[k]!);
    },
    span(tripId) {
      const span = spans.get(tripId);
      if (!span) return undefined;
      let start = NO_TIME;
      for (let k = span[0]; k < span[1] && start === NO_TIME; k++)
        start = departure[k] !== NO_TIME ? departure[k]! : arrival[k]!;
      let end = NO_TIME;
      for (let k = span[1] - 1; k >= span[0] && end === NO_TIME; k--)
        end = arrival[k] !== NO_TIME ? arrival[k]! : departure[k]!;
      return start === NO_TIME ? undefined : { start_s: start, end_s: end };
    },
    get(tripId) {
      const hit = cache.get(tripId);
      if (hit) return hit;
      const span = spans.get(tripId);
      if (!span) return empty;
      const list: ScheduledStopTime[] = [];
      for (let k = span[0]; k < span[1]; k++) {
        list.push(
          Object.freeze({
            stop_sequence: sequence[k]!,
            stop_id: stopIds[k]!,
            arrival_s: arrival[k] === NO_TIME ? null : arrival[k]!,
            departure_s: departure[k] === NO_TIME ? null : departure[k]!,
          }),
        );
      }
      const frozen = Object.freeze(list);
      if (cache.size >= STOP_TIMES_CACHE) cache.delete(cache.keys().next().value!);
      cache.set(tripId, frozen);
      return frozen;
    },
  };
}

interface ServiceCalendar {
  runsOn(serviceId: string, date: string): boolean;
}

async function loadCalendar(conn: DuckDBConnection, scheduleId: string): Promise<ServiceCalendar> {
  const day = (col: string): string => `CAST(date_diff('day', DATE '1970-01-01', ${col}) AS INTEGER)`;
  // weekday bit 0 = Sunday, matching Date.getUTCDay()
  const weekly = new Map<string, { days: number; start: number; end: number }[]>();
  for await (const [service, su, mo, tu, we, th, fr, sa, start, end] of rows(
    conn,
    `SELECT service_id, sunday, monday, tuesday, wednesday, thursday, friday, saturday,
       ${day('start_date')}, ${day('end_date')} FROM gtfs_calendar WHERE schedule_id = $1`,
    scheduleId,
  )) {
    const days = [su, mo, tu, we, th, fr, sa].reduce<number>(
      (bits, on, k) => (on === true ? bits | (1 << k) : bits),
      0,
    );
    const list = weekly.get(str(service)) ?? [];
    list.push({ days, start: Number(start), end: Number(end) });
    weekly.set(str(service), list);
  }
  const exceptions = new Map<string, Map<number, number>>();
  for await (const [service, date, type] of rows(
    conn,
    `SELECT service_id, ${day('date')}, exception_type FROM gtfs_calendar_dates WHERE schedule_id = $1`,
    scheduleId,
  )) {
    const byDay = exceptions.get(str(service)) ?? new Map<number, number>();
    byDay.set(Number(date), Number(type));
    exceptions.set(str(service), byDay);
  }
  return {
    runsOn(serviceId, date) {
      const d = epochDay(date);
      if (d === null) return false;
      const exception = exceptions.get(serviceId)?.get(d);
      if (exception === 1) return true;
      if (exception === 2) return false;
      const weekday = weekdayOfEpochDay(d);
      return (weekly.get(serviceId) ?? []).some((c) => d >= c.start && d <= c.end && (c.days & (1 << weekday)) !== 0);
    },
  };
}
