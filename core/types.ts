// Domain types shared by pipeline, store and http. Times are epoch milliseconds in memory;
// the store keeps TIMESTAMPTZ and the API renders ISO 8601.

export const MODES = ['rail', 'bus', 'streetcar'] as const;
export type Mode = (typeof MODES)[number];

export const FRESHNESS = ['fresh', 'stale', 'expired'] as const;
export type Freshness = (typeof FRESHNESS)[number];

export const DELAY_STATES = ['on_time', 'late', 'early', 'canceled', 'skipped', 'unknown'] as const;
export type DelayState = (typeof DELAY_STATES)[number];

export const ALERT_STATUSES = ['upcoming', 'active', 'resolved'] as const;
export type AlertStatus = (typeof ALERT_STATUSES)[number];

/** How a trip in a TripUpdate relates to the static schedule (GTFS-RT TripDescriptor). */
export const TRIP_RELATIONSHIPS = [
  'scheduled', 'added', 'unscheduled', 'canceled', 'replacement', 'duplicated', 'deleted', 'new',
] as const;
export type TripRelationship = (typeof TRIP_RELATIONSHIPS)[number];

export interface VehiclePosition {
  feed_id: string;
  vehicle_id: string;
  /** null when the feed gives no route and the trip is not in the schedule */
  route_id: string | null;
  trip_id: string | null;
  mode: Mode | null;
  lat: number;
  lon: number;
  bearing: number | null;
  speed_mps: number | null;
  stop_id: string | null;
  current_status: string | null;
  /** when the vehicle reported the position */
  timestamp_ms: number;
  /** when our poll observed it */
  observed_ms: number;
}

export interface Arrival {
  feed_id: string;
  trip_id: string;
  /** for rail this is the line id; null when neither the feed nor the schedule names it */
  route_id: string | null;
  mode: Mode | null;
  /** parent station id when the stop has one, else the stop id */
  station_id: string;
  stop_id: string;
  stop_sequence: number | null;
  direction_id: number | null;
  service_date: string | null;
  scheduled_ms: number | null;
  predicted_ms: number | null;
  delay_s: number | null;
  delay_state: DelayState;
  trip_relationship: TripRelationship;
  /** false for ADDED trips and trip ids not found in the static schedule */
  in_schedule: boolean;
  vehicle_id: string | null;
  observed_ms: number;
}

/** A trip seen in one poll: the facts reliability is computed from. */
export interface TripObservation {
  feed_id: string;
  service_date: string;
  trip_id: string;
  route_id: string | null;
  mode: Mode | null;
  relationship: TripRelationship;
  skipped_stops: number;
  source: 'trip_update' | 'vehicle_position';
  in_schedule: boolean;
  observed_ms: number;
}

export interface ActivePeriod { start_ms: number | null; end_ms: number | null }

export interface Alert {
  /** `${feed_id}:${entity_id}`: stable across polls */
  id: string;
  feed_id: string;
  entity_id: string;
  modes: Mode[];
  status: AlertStatus;
  /** GTFS-RT effect in lower case, e.g. no_service, detour */
  impact: string;
  cause: string;
  severity: string | null;
  header: Record<string, string>;
  description: Record<string, string>;
  url: Record<string, string>;
  active_periods: ActivePeriod[];
  routes: string[];
  stations: string[];
  trips: string[];
  version: number;
  first_seen_ms: number;
  updated_ms: number;
  resolved_ms: number | null;
}

export const POLL_STATUSES = [
  'ok', 'unchanged', 'http_error', 'timeout', 'network_error', 'too_large', 'decode_error',
] as const;
export type PollStatus = (typeof POLL_STATUSES)[number];

/** Why a feed row (or a whole body) was rejected. A closed set so counts stay comparable. */
export const REJECT_REASONS = [
  'not_protobuf', 'base64_body', 'truncated_body', 'http_error', 'timeout', 'too_large',
  'network_error', 'header_timestamp_ms', 'timestamp_future', 'timestamp_too_old',
  'lat_lon_out_of_range', 'missing_entity_id', 'duplicate_trip', 'duplicate_entity',
  'missing_trip', 'missing_vehicle', 'invalid_alerts_json', 'no_position',
  'missing_stop', 'duplicate_stop_time',
] as const;
export type RejectReason = (typeof REJECT_REASONS)[number];

export interface FeedPoll {
  feed_id: string;
  polled_ms: number;
  status: PollStatus;
  http_status: number | null;
  bytes: number;
  duration_ms: number;
  header_timestamp_ms: number | null;
  entities: number;
  vehicles: number;
  trip_updates: number;
  alerts: number;
  stored: number;
  rejected: Partial<Record<RejectReason, number>>;
  error: string | null;
}

/** History export datasets and file formats (exports/README.md). */
export const EXPORT_DATASETS = ['reliability', 'realtime', 'alerts'] as const;
export type ExportDataset = (typeof EXPORT_DATASETS)[number];
export const EXPORT_FORMATS = ['parquet', 'ndjson.gz'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];
