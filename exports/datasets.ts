// The export datasets as data: which table each file reads, its typed columns, and which rows
// belong to one service day. Definitions for analysts: ./README.md.
import { EXPORT_DATASETS, EXPORT_FORMATS, type ExportDataset, type ExportFormat } from '../core/types.ts';
import { quoteIdent } from '../store/sql.ts';
import type { ServiceDayWindow } from '../core/dates.ts';

export { EXPORT_DATASETS, EXPORT_FORMATS, type ExportDataset, type ExportFormat };

/** An output column: `sql` is its typed expression; `ndjson` overrides it where JSON needs help. */
export interface ExportColumn {
  name: string;
  sql?: string;
  /** expression for gzipped NDJSON when the typed one would not render as ISO 8601 (nested timestamps) */
  ndjson?: string;
}

/** When a service day's rows are complete and may be exported. */
export type DayReadiness =
  /** every row carries an instant: the day is complete once its window has ended */
  | 'window_over'
  /** reliability: only once the reliability job has finalized the day */
  | 'finalized';

export interface DatasetPart {
  dataset: ExportDataset;
  /** the file's part name: the table it holds */
  part: string;
  table: string;
  columns: readonly ExportColumn[];
  /** the rows of one service day, as a SQL predicate over `table` */
  where(day: ServiceDayWindow): string;
  orderBy?: string;
}

export interface DatasetDefinition {
  name: ExportDataset;
  description: string;
  readiness: DayReadiness;
  parts: readonly DatasetPart[];
}

const ISO_UTC = '%Y-%m-%dT%H:%M:%S.%fZ';
/** timestamps inside lists and structs, rendered as the top-level ones are (session zone is UTC) */
const isoText = (expr: string): string => `strftime(${expr}, '${ISO_UTC}')`;
/** TIMESTAMPFORMAT for `COPY … (FORMAT json)`: microseconds, so NDJSON loses nothing Parquet keeps */
export const NDJSON_TIMESTAMP_FORMAT = ISO_UTC;

const cols = (...names: string[]): ExportColumn[] => names.map((name) => ({ name }));

const instantLiteral = (d: Date): string => `TIMESTAMPTZ '${d.toISOString()}'`;
const dateLiteral = (date: string): string => `DATE '${date}'`;
const inWindow = (column: string, day: ServiceDayWindow): string =>
  `${column} >= ${instantLiteral(day.start)} AND ${column} < ${instantLiteral(day.end)}`;

export const DATASETS: Readonly<Record<ExportDataset, DatasetDefinition>> = {
  reliability: {
    name: 'reliability',
    description:
      'one row per trip and finalized service day: scheduled trips and trips seen but not scheduled, ' +
      'with their outcome',
    readiness: 'finalized',
    parts: [
      {
        dataset: 'reliability',
        part: 'trip_outcomes',
        table: 'trip_outcomes',
        columns: cols(
          'service_date',
          'mode',
          'route_id',
          'trip_id',
          'schedule_id',
          'in_schedule',
          'outcome',
          'restored',
          'duplicated',
          'skipped_stops',
          'observations',
          'first_seen_at',
          'last_seen_at',
          'scheduled_start_at',
        ),
        where: (day) => `service_date = ${dateLiteral(day.date)}`,
      },
    ],
  },
  realtime: {
    name: 'realtime',
    description: 'arrival predictions and vehicle positions as they changed; two files per day and format',
    readiness: 'window_over',
    parts: [
      {
        dataset: 'realtime',
        part: 'arrivals',
        table: 'arrivals',
        columns: cols(
          'feed_id',
          'schedule_id',
          'trip_id',
          'route_id',
          'mode',
          'station_id',
          'stop_id',
          'stop_sequence',
          'direction_id',
          'service_date',
          'scheduled_at',
          'predicted_at',
          'delay_s',
          'delay_state',
          'trip_relationship',
          'in_schedule',
          'vehicle_id',
          'observed_at',
          'trip_instance',
        ),
        // the trip's service date (from the feed's start_date, else its header time); rows stored
        // before every arrival carried one fall back to when they were observed
        where: (day) =>
          `(service_date = ${dateLiteral(day.date)} OR (service_date IS NULL AND ${inWindow('observed_at', day)}))`,
      },
      {
        dataset: 'realtime',
        part: 'vehicle_positions',
        table: 'vehicle_positions',
        columns: cols(
          'feed_id',
          'schedule_id',
          'vehicle_id',
          'route_id',
          'trip_id',
          'mode',
          'lat',
          'lon',
          'bearing',
          'speed_mps',
          'stop_id',
          'current_status',
          'position_at',
          'observed_at',
          'position_source',
        ),
        // the feed's own time (the vehicle's timestamp, else the snapshot header's), never the
        // poll's: an archive stored with allow_old_snapshots is polled years after its day
        where: (day) => inWindow('position_at', day),
      },
    ],
  },
  alerts: {
    name: 'alerts',
    description: 'every version of every alert recorded during the service day',
    readiness: 'window_over',
    parts: [
      {
        dataset: 'alerts',
        part: 'alert_versions',
        table: 'alert_versions',
        columns: [
          ...cols(
            'alert_id',
            'feed_id',
            'schedule_id',
            'entity_id',
            'version',
            'status',
            'modes',
            'impact',
            'cause',
            'severity',
            'header',
            'description',
            'url',
          ),
          {
            name: 'active_periods',
            ndjson:
              `list_transform(active_periods, p -> {'start_at': ${isoText('p.start_at')}, 'end_at': ` +
              `${isoText('p.end_at')}})`,
          },
          ...cols('routes', 'stations', 'trips', 'first_seen_at', 'updated_at', 'resolved_at'),
        ],
        // the version's own time: when a poll made it (a replayed snapshot's header time)
        where: (day) => inWindow('updated_at', day),
        orderBy: 'updated_at, alert_id, version',
      },
    ],
  },
  stop_events: {
    name: 'stop_events',
    description:
      'one row per trip instance per stop it served on the service day: scheduled and actual arrival and departure, ' +
      'where each came from, delay, dwell, travel and headway seconds, prediction errors; canceled and ' +
      'skipped stops without actual times',
    // trips past midnight and trips closed by history.trip_timeout_s write after the day's window
    readiness: 'finalized',
    parts: [
      {
        dataset: 'stop_events',
        part: 'stop_events',
        table: 'stop_events',
        columns: cols(
          'feed_id',
          'schedule_id',
          'service_date',
          'trip_id',
          'trip_instance',
          'route_id',
          'mode',
          'direction_id',
          'stop_id',
          'station_id',
          'stop_sequence',
          'vehicle_id',
          'scheduled_arrival_at',
          'scheduled_departure_at',
          'actual_arrival_at',
          'actual_departure_at',
          'source',
          'arrival_source',
          'departure_source',
          'arrival_delay_s',
          'departure_delay_s',
          'dwell_s',
          'travel_s',
          'scheduled_travel_s',
          'headway_s',
          'scheduled_headway_s',
          'relationship',
          'in_schedule',
          'first_stop',
          'last_stop',
          'prediction_errors',
          'written_at',
        ),
        where: (day) => `service_date = ${dateLiteral(day.date)}`,
        orderBy: 'feed_id, route_id, direction_id, trip_id, trip_instance, stop_sequence',
      },
    ],
  },
};

/** The SELECT for one part and day; NDJSON gets its rendering overrides, Parquet the typed columns. */
export function partSelect(part: DatasetPart, day: ServiceDayWindow, format: ExportFormat | 'typed'): string {
  const list = part.columns.map((c) => {
    const expr = (format === 'ndjson.gz' ? c.ndjson : undefined) ?? c.sql ?? quoteIdent(c.name);
    return expr === quoteIdent(c.name) ? expr : `${expr} AS ${quoteIdent(c.name)}`;
  });
  const order = part.orderBy ? ` ORDER BY ${part.orderBy}` : '';
  return `SELECT ${list.join(', ')} FROM ${quoteIdent(part.table)} WHERE ${part.where(day)}${order}`;
}

export const FILE_EXTENSIONS: Readonly<Record<ExportFormat, string>> = {
  parquet: '.parquet',
  'ndjson.gz': '.ndjson.gz',
};

/** `realtime-2024-05-01-arrivals.parquet`; single-part datasets leave the part out. */
export function exportFileName(part: DatasetPart, date: string, format: ExportFormat): string {
  const multi = DATASETS[part.dataset].parts.length > 1;
  return `${part.dataset}-${date}${multi ? `-${part.part}` : ''}${FILE_EXTENSIONS[format]}`;
}

/** Path of the file relative to exports.dir: one folder per dataset. */
export function exportRelativePath(part: DatasetPart, date: string, format: ExportFormat): string {
  return `${part.dataset}/${exportFileName(part, date, format)}`;
}

export function findPart(dataset: ExportDataset, partName: string): DatasetPart | undefined {
  return DATASETS[dataset].parts.find((p) => p.part === partName);
}

export function isExportDataset(value: unknown): value is ExportDataset {
  return typeof value === 'string' && (EXPORT_DATASETS as readonly string[]).includes(value);
}

export function isExportFormat(value: unknown): value is ExportFormat {
  return typeof value === 'string' && (EXPORT_FORMATS as readonly string[]).includes(value);
}
