import { ROUTE_TYPE_MODES } from '../core/route-type.ts';
import type { GtfsFile } from './gtfs-source.ts';
import { quoteIdent } from './sql.ts';

// How each GTFS text file maps onto its table in 001_init.sql, as SQL over the CSV's text
// columns. Everything is read as text first and cast here, so one odd value in a real feed
// becomes a counted, skipped row instead of a failed import.

/** core/route-type.ts's mapping in SQL, generated from its table so the two cannot drift. */
export function modeSql(column: string): string {
  const arms = ROUTE_TYPE_MODES.map((r) => `WHEN ${column} BETWEEN ${r.from} AND ${r.to} THEN '${r.mode}'`);
  return `CASE ${arms.join(' ')} ELSE NULL END`;
}

/** Builds SQL for one CSV's columns, NULL for columns the file lacks. */
export class SourceColumns {
  private readonly byName = new Map<string, string>();

  constructor(header: readonly string[]) {
    for (const name of header) {
      const key = name.trim().toLowerCase();
      if (!this.byName.has(key)) this.byName.set(key, quoteIdent(name));
    }
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  text(name: string): string {
    const col = this.byName.get(name);
    return col ? `NULLIF(trim(${col}), '')` : 'CAST(NULL AS VARCHAR)';
  }

  int(name: string): string {
    return `TRY_CAST(${this.text(name)} AS INTEGER)`;
  }

  double(name: string): string {
    return `TRY_CAST(${this.text(name)} AS DOUBLE)`;
  }

  /** GTFS dates are YYYYMMDD */
  date(name: string): string {
    return `CAST(try_strptime(${this.text(name)}, '%Y%m%d') AS DATE)`;
  }

  bool(name: string): string {
    return `coalesce(${this.text(name)} = '1', false)`;
  }

  /** H:MM:SS or HH:MM:SS, hours past 24 allowed → seconds; anything else → NULL */
  seconds(name: string): string {
    const t = this.text(name);
    return (
      `CASE WHEN regexp_full_match(${t}, '\\d{1,3}:[0-5]\\d:[0-5]\\d') THEN ` +
      `CAST(split_part(${t}, ':', 1) AS INTEGER) * 3600 + CAST(split_part(${t}, ':', 2) AS INTEGER) * 60 ` +
      `+ CAST(split_part(${t}, ':', 3) AS INTEGER) END`
    );
  }
}

export interface TableSpec {
  file: GtfsFile;
  table: string;
  /** source columns without which the file cannot be loaded */
  requiredColumns: readonly string[];
  /**
   * target column → SQL over source columns, in the table's column order (after schedule_id).
   * Names starting with `_` are staged for audits only, not inserted.
   */
  columns: (c: SourceColumns) => Record<string, string>;
  /** target columns that must be present for a row to be kept */
  notNull: readonly string[];
  /** target column → SQL over the staged target columns, computed on insert */
  derived?: Record<string, string>;
  /** conditions over staged columns counted into warnings: name → [sql, message] */
  audits?: Record<string, [sql: string, message: string]>;
}

export const TABLE_SPECS: readonly TableSpec[] = [
  {
    file: 'agency',
    table: 'gtfs_agency',
    requiredColumns: ['agency_timezone'],
    columns: (c) => ({
      agency_id: c.text('agency_id'),
      agency_name: c.text('agency_name'),
      agency_url: c.text('agency_url'),
      agency_timezone: c.text('agency_timezone'),
    }),
    notNull: [],
  },
  {
    file: 'routes',
    table: 'gtfs_routes',
    requiredColumns: ['route_id', 'route_type'],
    columns: (c) => ({
      route_id: c.text('route_id'),
      agency_id: c.text('agency_id'),
      route_short_name: c.text('route_short_name'),
      route_long_name: c.text('route_long_name'),
      route_type: c.int('route_type'),
      route_color: c.text('route_color'),
      route_text_color: c.text('route_text_color'),
    }),
    notNull: ['route_id', 'route_type'],
    derived: { mode: modeSql('route_type') },
  },
  {
    file: 'stops',
    table: 'gtfs_stops',
    requiredColumns: ['stop_id'],
    columns: (c) => ({
      stop_id: c.text('stop_id'),
      stop_code: c.text('stop_code'),
      stop_name: c.text('stop_name'),
      stop_lat: c.double('stop_lat'),
      stop_lon: c.double('stop_lon'),
      location_type: c.int('location_type'),
      parent_station: c.text('parent_station'),
    }),
    notNull: ['stop_id'],
  },
  {
    file: 'trips',
    table: 'gtfs_trips',
    requiredColumns: ['trip_id', 'route_id', 'service_id'],
    columns: (c) => ({
      trip_id: c.text('trip_id'),
      route_id: c.text('route_id'),
      service_id: c.text('service_id'),
      direction_id: c.int('direction_id'),
      trip_headsign: c.text('trip_headsign'),
      shape_id: c.text('shape_id'),
      // not GTFS: NYCT re-publishers' column for the agency's own trip id (trip matching, `nyct`)
      mta_trip_id: c.text('mta_trip_id'),
    }),
    notNull: ['trip_id', 'route_id', 'service_id'],
  },
  {
    file: 'stop_times',
    table: 'gtfs_stop_times',
    requiredColumns: ['trip_id', 'stop_id', 'stop_sequence'],
    columns: (c) => ({
      trip_id: c.text('trip_id'),
      stop_sequence: c.int('stop_sequence'),
      stop_id: c.text('stop_id'),
      arrival_s: c.seconds('arrival_time'),
      departure_s: c.seconds('departure_time'),
      _arrival_text: c.text('arrival_time'),
      _departure_text: c.text('departure_time'),
    }),
    notNull: ['trip_id', 'stop_sequence', 'stop_id'],
    audits: {
      bad_time: [
        '(_arrival_text IS NOT NULL AND arrival_s IS NULL) OR (_departure_text IS NOT NULL AND departure_s IS NULL)',
        'rows with an arrival_time or departure_time that is not H:MM:SS (kept, time stored as NULL)',
      ],
    },
  },
  {
    file: 'calendar',
    table: 'gtfs_calendar',
    requiredColumns: ['service_id', 'start_date', 'end_date'],
    columns: (c) => ({
      service_id: c.text('service_id'),
      monday: c.bool('monday'),
      tuesday: c.bool('tuesday'),
      wednesday: c.bool('wednesday'),
      thursday: c.bool('thursday'),
      friday: c.bool('friday'),
      saturday: c.bool('saturday'),
      sunday: c.bool('sunday'),
      start_date: c.date('start_date'),
      end_date: c.date('end_date'),
    }),
    notNull: ['service_id', 'start_date', 'end_date'],
  },
  {
    file: 'calendar_dates',
    table: 'gtfs_calendar_dates',
    requiredColumns: ['service_id', 'date', 'exception_type'],
    columns: (c) => ({
      service_id: c.text('service_id'),
      date: c.date('date'),
      exception_type: c.int('exception_type'),
    }),
    notNull: ['service_id', 'date', 'exception_type'],
  },
  {
    file: 'frequencies',
    table: 'gtfs_frequencies',
    requiredColumns: ['trip_id', 'start_time', 'end_time', 'headway_secs'],
    columns: (c) => ({
      trip_id: c.text('trip_id'),
      start_s: c.seconds('start_time'),
      end_s: c.seconds('end_time'),
      headway_secs: c.int('headway_secs'),
      exact_times: c.int('exact_times'),
    }),
    notNull: ['trip_id', 'start_s', 'end_s', 'headway_secs'],
  },
  {
    file: 'shapes',
    table: 'gtfs_shapes',
    requiredColumns: ['shape_id', 'shape_pt_sequence', 'shape_pt_lat', 'shape_pt_lon'],
    columns: (c) => ({
      shape_id: c.text('shape_id'),
      shape_pt_sequence: c.int('shape_pt_sequence'),
      shape_pt_lat: c.double('shape_pt_lat'),
      shape_pt_lon: c.double('shape_pt_lon'),
    }),
    notNull: ['shape_id', 'shape_pt_sequence', 'shape_pt_lat', 'shape_pt_lon'],
  },
];

/** Files whose trouble fails the import; the rest are skipped with a warning. */
export const ESSENTIAL_FILES: ReadonlySet<GtfsFile> = new Set([
  'agency',
  'routes',
  'stops',
  'trips',
  'stop_times',
  'calendar',
  'calendar_dates',
]);
