// The route and station directory, read from the imported schedules into memory at start and
// again on reload() (after a schedule import) or on a timer, so requests never query DuckDB.
import { componentLogger, type Logger } from '../../core/logger.ts';
import { ServedIds } from '../../core/served-ids.ts';
import { MODES, type Mode } from '../../core/types.ts';
import type { Db } from '../../store/db.ts';

export interface DirectoryRoute {
  schedule: string;
  /** the route's agency (agency.txt), or the schedule's when the route names none */
  agency_name: string | null;
  /** as served (core/served-ids.ts) */
  route_id: string;
  mode: Mode;
  short_name: string | null;
  long_name: string | null;
  color: string | null;
  text_color: string | null;
  route_type: number;
}

export interface DirectoryStation {
  station_id: string;
  name: string | null;
}

export interface DirectorySnapshot {
  routes: DirectoryRoute[];
  stopNames: Map<string, string | null>;
  lineStations: Map<string, DirectoryStation[]>;
}

export interface RouteDirectory {
  readonly version: number;
  readonly schedules: readonly string[];
  routes(mode: Mode): readonly DirectoryRoute[];
  route(mode: Mode, routeId: string): DirectoryRoute | undefined;
  stationName(stationId: string): string | null;
  /** a stop or station of an imported schedule */
  hasStop(stopId: string): boolean;
  lineStations(line: string): readonly DirectoryStation[];
}

const NATURAL = new Intl.Collator('en', { numeric: true });

export class Directory implements RouteDirectory {
  version = 0;
  schedules: string[] = [];
  private byMode = new Map<Mode, DirectoryRoute[]>();
  private byKey = new Map<string, DirectoryRoute>();
  private stopNames = new Map<string, string | null>();
  private stationsByLine = new Map<string, DirectoryStation[]>();

  constructor(snapshot?: DirectorySnapshot) {
    if (snapshot) this.replace(snapshot);
  }

  replace(snapshot: DirectorySnapshot): void {
    const byMode = new Map<Mode, DirectoryRoute[]>(MODES.map((m) => [m, []]));
    const byKey = new Map<string, DirectoryRoute>();
    // numeric-aware order (1, 39, 66, 111), then by schedule so the first schedule wins below
    const routes = [...snapshot.routes].sort(
      (a, b) => NATURAL.compare(a.route_id, b.route_id) || NATURAL.compare(a.schedule, b.schedule),
    );
    for (const route of routes) {
      const key = `${route.mode}\u0000${route.route_id}`;
      // the same route id in two schedules: the first schedule (by id) names it
      if (byKey.has(key)) continue;
      byKey.set(key, route);
      byMode.get(route.mode)!.push(route);
    }
    this.byMode = byMode;
    this.byKey = byKey;
    this.stopNames = snapshot.stopNames;
    this.stationsByLine = snapshot.lineStations;
    this.schedules = [...new Set(snapshot.routes.map((r) => r.schedule))].sort();
    this.version++;
  }

  routes(mode: Mode): readonly DirectoryRoute[] {
    return this.byMode.get(mode) ?? [];
  }

  route(mode: Mode, routeId: string): DirectoryRoute | undefined {
    return this.byKey.get(`${mode}\u0000${routeId}`);
  }

  stationName(stationId: string): string | null {
    return this.stopNames.get(stationId) ?? null;
  }

  hasStop(stopId: string): boolean {
    return this.stopNames.has(stopId);
  }

  lineStations(line: string): readonly DirectoryStation[] {
    return this.stationsByLine.get(line) ?? [];
  }
}

interface RouteRow {
  schedule_id: string;
  route_id: string;
  agency_name: string | null;
  mode: string;
  route_short_name: string | null;
  route_long_name: string | null;
  route_color: string | null;
  route_text_color: string | null;
  route_type: number;
}

/**
 * The directory with ids as served: with schedules that share ids (`ids.scoped`), each schedule's
 * stops and line stations apart; otherwise the first schedule (by id) names a shared stop.
 */
export async function readDirectory(db: Db, ids: ServedIds = ServedIds.NONE): Promise<DirectorySnapshot> {
  // the route's own agency, else the schedule's first (a feed with one agency may name none)
  const rows = await db.all<RouteRow>(`
    SELECT r.schedule_id, r.route_id, coalesce(
        (SELECT min(a.agency_name) FROM gtfs_agency a WHERE a.schedule_id = r.schedule_id AND a.agency_id =
          r.agency_id),
        (SELECT min(a.agency_name) FROM gtfs_agency a WHERE a.schedule_id = r.schedule_id)) AS agency_name,
      r.mode, r.route_short_name, r.route_long_name, r.route_color, r.route_text_color, r.route_type
    FROM gtfs_routes r WHERE r.mode IN ('rail', 'bus', 'streetcar')
    ORDER BY r.mode, r.route_id, r.schedule_id`);
  const stops = await db.all<{ schedule_id: string; stop_id: string; stop_name: string | null }>(
    ids.scoped
      ? 'SELECT schedule_id, stop_id, stop_name FROM gtfs_stops ORDER BY stop_id, schedule_id'
      : 'SELECT DISTINCT ON (stop_id) schedule_id, stop_id, stop_name FROM gtfs_stops ORDER BY stop_id, schedule_id',
  );
  const stations = await db.all<{ schedule_id: string; route_id: string; station_id: string }>(`
    SELECT ${ids.scoped ? 't.schedule_id' : 'min(t.schedule_id) AS schedule_id'}, t.route_id,
      coalesce(nullif(s.parent_station, ''), st.stop_id) AS station_id, min(st.stop_sequence) AS seq
    FROM gtfs_routes r
    JOIN gtfs_trips t ON t.schedule_id = r.schedule_id AND t.route_id = r.route_id
    JOIN gtfs_stop_times st ON st.schedule_id = t.schedule_id AND st.trip_id = t.trip_id
    LEFT JOIN gtfs_stops s ON s.schedule_id = st.schedule_id AND s.stop_id = st.stop_id
    WHERE r.mode = 'rail'
    ${ids.scoped ? 'GROUP BY 1, 2, 3 ORDER BY 1, 2, 4, 3' : 'GROUP BY 2, 3 ORDER BY 2, 4, 3'}`);
  const stopNames = new Map<string, string | null>();
  for (const s of stops) {
    const served = ids.serve(s.schedule_id, 'stop', s.stop_id);
    if (!stopNames.has(served)) stopNames.set(served, s.stop_name);
  }
  const lineStations = new Map<string, DirectoryStation[]>();
  for (const row of stations) {
    const line = ids.serve(row.schedule_id, 'route', row.route_id);
    const station = ids.serve(row.schedule_id, 'stop', row.station_id);
    const list = lineStations.get(line) ?? [];
    list.push({ station_id: station, name: stopNames.get(station) ?? null });
    lineStations.set(line, list);
  }
  return {
    routes: rows.map((r) => ({
      schedule: r.schedule_id,
      agency_name: r.agency_name,
      route_id: ids.serve(r.schedule_id, 'route', r.route_id),
      mode: r.mode as Mode,
      short_name: r.route_short_name,
      long_name: r.route_long_name,
      color: r.route_color,
      text_color: r.route_text_color,
      route_type: Number(r.route_type),
    })),
    stopNames,
    lineStations,
  };
}

/** The served ids in force (store/id-scope.ts IdScopes): read again with the directory. */
export interface ServedIdsSource {
  readonly current: ServedIds;
  reload?(): Promise<unknown>;
}

/** A Directory kept in step with the store: loaded now, reloaded on demand and on a timer. */
export class StoreDirectory extends Directory {
  private timer: NodeJS.Timeout | null = null;

  private readonly log: Logger;

  constructor(
    private readonly db: Db,
    log?: Logger,
    private readonly ids?: ServedIdsSource,
  ) {
    super();
    this.log = componentLogger(log, 'directory');
  }

  private reloading: Promise<void> | null = null;
  private queued: Promise<void> | null = null;

  /**
   * One reload at a time; a call during one gets one more right after it (what changed meanwhile
   * is read), which later callers share. The served ids are read again first.
   */
  reload(): Promise<void> {
    if (this.reloading) {
      this.queued ??= this.reloading
        .catch(() => undefined)
        .then(() => {
          this.queued = null;
          return this.reload();
        });
      return this.queued;
    }
    this.reloading = (async () => {
      await this.ids?.reload?.();
      return readDirectory(this.db, this.ids?.current);
    })()
      .then((snapshot) => this.replace(snapshot))
      .finally(() => {
        this.reloading = null;
      });
    return this.reloading;
  }

  start(intervalMs: number): this {
    if (!this.timer) {
      this.timer = setInterval(() => {
        this.reload().catch((err) => this.log.error({ err }, 'directory reload failed; keeping the previous one'));
      }, intervalMs);
      this.timer.unref();
    }
    return this;
  }

  /** Stops the timer and waits for a reload in progress, so the database can close after. */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.reloading?.catch(() => undefined);
  }
}
