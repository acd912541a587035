// Domain types shared by pipeline, store and http. Times are epoch milliseconds in memory;
// the store keeps TIMESTAMPTZ and the API renders ISO 8601.

export const MODES = ['rail', 'bus', 'streetcar'] as const;
export type Mode = (typeof MODES)[number];

export const FRESHNESS = ['fresh', 'stale', 'expired'] as const;
export type Freshness = (typeof FRESHNESS)[number];

export const DELAY_STATES = ['on_time', 'late', 'early', 'canceled', 'skipped', 'unknown'] as const;
export type DelayState = (typeof DELAY_STATES)[number];

/** Where a vehicle's lat/lon come from: its own GPS fix, or the stop the feed says it is at or heading to. */
export const POSITION_SOURCES = ['gps', 'stop'] as const;
export type PositionSource = (typeof POSITION_SOURCES)[number];

export const ALERT_STATUSES = ['upcoming', 'active', 'resolved'] as const;
export type AlertStatus = (typeof ALERT_STATUSES)[number];

/** How a trip in a TripUpdate relates to the static schedule (GTFS-RT TripDescriptor). */
export const TRIP_RELATIONSHIPS = [
  'scheduled',
  'added',
  'unscheduled',
  'canceled',
  'replacement',
  'duplicated',
  'deleted',
  'new',
] as const;
export type TripRelationship = (typeof TRIP_RELATIONSHIPS)[number];

export interface VehiclePosition {
  feed_id: string;
  /**
   * the schedule the row's ids belong to (its feed's, core/served-ids.ts); null for a feed without
   * one. Absent: the feed's schedule as configured.
   */
  schedule_id?: string | null;
  vehicle_id: string;
  /** null when the feed gives no route and the trip is not in the schedule */
  route_id: string | null;
  trip_id: string | null;
  /**
   * the feed's own trip id where trip matching gave the row another `trip_id` (a match by NYCT
   * origin, start time, or loosely: docs/guides/real-feeds.md, trip matching); null when the feed's id is
   * `trip_id` or the feed gave none. Absent is null.
   */
  feed_trip_id?: string | null;
  mode: Mode | null;
  lat: number;
  lon: number;
  /** 'stop' when the feed gave no coordinates and lat/lon are the schedule's for `stop_id` */
  position_source: PositionSource;
  bearing: number | null;
  speed_mps: number | null;
  stop_id: string | null;
  current_status: string | null;
  /** when the vehicle reported the position */
  timestamp_ms: number;
  /** when our poll observed it */
  observed_ms: number;
  /** the service day of its trip, when the trip resolved (stop events); not stored in vehicle_positions */
  service_date?: string | null;
  /** the feed's current_stop_sequence, when it gave one (stop events); not stored */
  stop_sequence?: number | null;
}

export interface Arrival {
  feed_id: string;
  /**
   * the schedule the row's ids belong to (its feed's, core/served-ids.ts); null for a feed without
   * one. Absent: the feed's schedule as configured.
   */
  schedule_id?: string | null;
  trip_id: string;
  /**
   * the feed's own trip id where trip matching gave the row another `trip_id` (a match by NYCT
   * origin, start time, or loosely: docs/guides/real-feeds.md, trip matching); null when the feed's id is
   * `trip_id` or the feed gave none. Absent is null.
   */
  feed_trip_id?: string | null;
  /**
   * null when the trip id appears once in its snapshot; when a feed carries the same trip id (and
   * start date) more than once with different content, what tells the instances apart
   * (`vehicle:…`, `to:<last stop>`, `from:<first stop>`, `#n`). The instance key is
   * trip_id + service_date + trip_instance.
   */
  trip_instance: string | null;
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
  /**
   * The stop time update's own arrival and departure, each from its time or its scheduled time plus
   * delay (propagated delays included); null when the update gives none. Stop events read them;
   * `arrivals` stores `predicted_ms` only.
   */
  predicted_arrival_ms?: number | null;
  predicted_departure_ms?: number | null;
}

/** A trip seen in one poll: the facts reliability is computed from. */
export interface TripObservation {
  feed_id: string;
  /**
   * the schedule the row's ids belong to (its feed's, core/served-ids.ts); null for a feed without
   * one. Absent: the feed's schedule as configured.
   */
  schedule_id?: string | null;
  service_date: string;
  trip_id: string;
  /**
   * the feed's own trip id where trip matching gave the row another `trip_id` (a match by NYCT
   * origin, start time, or loosely: docs/guides/real-feeds.md, trip matching); null when the feed's id is
   * `trip_id` or the feed gave none. Absent is null.
   */
  feed_trip_id?: string | null;
  route_id: string | null;
  mode: Mode | null;
  relationship: TripRelationship;
  skipped_stops: number;
  source: 'trip_update' | 'vehicle_position';
  in_schedule: boolean;
  observed_ms: number;
}

export interface ActivePeriod {
  start_ms: number | null;
  end_ms: number | null;
}

export interface Alert {
  /** `${feed_id}:${entity_id}`: stable across polls */
  id: string;
  feed_id: string;
  /**
   * the schedule the row's ids belong to (its feed's, core/served-ids.ts); null for a feed without
   * one. Absent: the feed's schedule as configured.
   */
  schedule_id?: string | null;
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

/**
 * `duplicate`: a body already stored (same feed, header timestamp and body hash, across restarts
 * and runs): live state is updated, history is not appended again. `rejected`: decoded, but the
 * snapshot is unusable as a whole (header outside the freshness bounds, or every entity rejected).
 */
export const POLL_STATUSES = [
  'ok',
  'unchanged',
  'duplicate',
  'http_error',
  'timeout',
  'network_error',
  'too_large',
  'decode_error',
  'rejected',
] as const;
export type PollStatus = (typeof POLL_STATUSES)[number];

/** Polls that delivered usable data (or confirmed it); every other status counts as a failure. */
export const SUCCESSFUL_POLL_STATUSES: readonly PollStatus[] = ['ok', 'unchanged', 'duplicate'];
export const isSuccessfulPoll = (status: PollStatus | null): boolean =>
  status !== null && (SUCCESSFUL_POLL_STATUSES as readonly string[]).includes(status);

/** Why a feed row (or a whole body) was rejected. A closed set so counts stay comparable. */
export const REJECT_REASONS = [
  'not_protobuf',
  'base64_body',
  'truncated_body',
  'http_error',
  'timeout',
  'too_large',
  'network_error',
  'header_timestamp_ms',
  'timestamp_future',
  'timestamp_too_old',
  'lat_lon_out_of_range',
  'missing_entity_id',
  'duplicate_trip',
  'duplicate_entity',
  'missing_trip',
  'missing_vehicle',
  'invalid_alerts_json',
  'no_position',
  'missing_stop',
  'duplicate_stop_time',
] as const;
export type RejectReason = (typeof REJECT_REASONS)[number];

/**
 * How a realtime trip is found in the static schedule (docs/guides/real-feeds.md):
 * by its trip id; by start date + start time + route + direction; by the NYCT origin time and
 * path carried in the id; loosely, an NYCT id whose origin no scheduled trip has, by the nearest
 * earlier scheduled trip of its route and direction (0–3,600 s late). Each also tries the
 * previous service day for trips past 24:00.
 */
export const MATCH_STRATEGIES = ['exact', 'start', 'nyct', 'nyct_loose'] as const;
export type MatchStrategy = (typeof MATCH_STRATEGIES)[number];

export interface MatchCounts {
  matched: number;
  unmatched: number;
  /** several scheduled trips fitted equally: none was chosen */
  ambiguous: number;
}

/** One poll's trip matching: every trip of a trip update or vehicle, and each strategy's decisions. */
export interface TripMatching {
  /** trips looked up; each ends matched, unmatched or ambiguous */
  trips: number;
  matched: number;
  unmatched: number;
  ambiguous: number;
  /** matched trips given the day before their start_date (a trip past 24:00 of that day) */
  previous_day: number;
  /** matched / trips, 0…1 */
  match_rate: number;
  /** decisions of each strategy tried, in the order tried; a strategy that did not apply is not counted */
  strategies: Partial<Record<MatchStrategy, MatchCounts>>;
}

/**
 * What a stop event's actual times came from (store/SCHEMA.md, stop_events): `vp` a vehicle
 * position, `tu` the trip update's last prediction before the stop was passed, `imputed` copied
 * from the other side of the same stop when only one was known.
 */
export const STOP_TIME_SOURCES = ['vp', 'tu', 'imputed'] as const;
export type StopTimeSource = (typeof STOP_TIME_SOURCES)[number];

/** Prediction horizons of the accuracy figures (minutes before the arrival, TransitMatters' bins). */
export const PREDICTION_HORIZONS = ['0-3', '3-6', '6-12', '12-30'] as const;
export type PredictionHorizon = (typeof PREDICTION_HORIZONS)[number];

/**
 * A prediction is accurate when the vehicle arrived within these bounds of it, seconds early and
 * late, by horizon: TransitMatters' (MBTA's) thresholds. "Early" is arriving before the prediction.
 */
export const PREDICTION_BOUNDS_S: Readonly<Record<PredictionHorizon, readonly [early: number, late: number]>> = {
  '0-3': [60, 60],
  '3-6': [90, 120],
  '6-12': [150, 210],
  '12-30': [240, 360],
};

/** One prediction sample's error at a stop: actual arrival minus predicted, seconds, and how many samples said it. */
export interface PredictionError {
  horizon: PredictionHorizon;
  error_s: number;
  samples: number;
}

/** A train or bus at one stop of its trip, written once when the stop was passed (store/SCHEMA.md). */
export interface StopEvent {
  feed_id: string;
  schedule_id: string | null;
  service_date: string;
  trip_id: string;
  trip_instance: string | null;
  route_id: string | null;
  mode: Mode | null;
  direction_id: number | null;
  stop_id: string;
  station_id: string;
  stop_sequence: number | null;
  vehicle_id: string | null;
  scheduled_arrival_ms: number | null;
  scheduled_departure_ms: number | null;
  actual_arrival_ms: number | null;
  actual_departure_ms: number | null;
  /**
   * `vp` both times from vehicle positions, `tu` both known with one at least from the trip update, `imputed` one side
   * copied; null without times
   */
  source: StopTimeSource | null;
  arrival_source: StopTimeSource | null;
  departure_source: StopTimeSource | null;
  arrival_delay_s: number | null;
  departure_delay_s: number | null;
  dwell_s: number | null;
  travel_s: number | null;
  scheduled_travel_s: number | null;
  headway_s: number | null;
  scheduled_headway_s: number | null;
  /** the trip's relationship, or `skipped` / `canceled` for a stop not served */
  relationship: string;
  in_schedule: boolean;
  first_stop: boolean;
  last_stop: boolean;
  prediction_errors: PredictionError[];
  /** the observed time of the poll that passed the stop */
  written_ms: number;
}

/**
 * Real feeds' misbehaviour met while following trips (store/SCHEMA.md, stop_events): none of it
 * rewrites a stop event or writes a negative dwell or travel time; each is counted per feed.
 */
export const STOP_EVENT_ANOMALIES = [
  'vehicle_backwards',
  'prediction_backwards',
  'trip_vanished',
  'vehicles_on_one_trip',
  'stop_not_on_trip',
  'times_out_of_order',
] as const;
export type StopEventAnomaly = (typeof STOP_EVENT_ANOMALIES)[number];

export interface StopEventCounts {
  /** stop events written */
  written: number;
  anomalies: Partial<Record<StopEventAnomaly, number>>;
}

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
  /** null when the poll looked up no trip (alerts, failed or unchanged polls, no trips) */
  matching: TripMatching | null;
  error: string | null;
  /** stop events this poll passed, and the anomalies it showed; absent when it fed no trip tracker */
  stop_events?: StopEventCounts;
  /** feed rule findings of the body, by rule id (pipeline/quality); absent when no body was checked */
  findings?: FindingCounts;
}

/** A poll of `status` with nothing counted yet: what every poll starts as, failed ones included. */
export function newPoll(feedId: string, polledMs: number, status: PollStatus = 'ok'): FeedPoll {
  return {
    feed_id: feedId,
    polled_ms: polledMs,
    status,
    http_status: null,
    bytes: 0,
    duration_ms: 0,
    header_timestamp_ms: null,
    entities: 0,
    vehicles: 0,
    trip_updates: 0,
    alerts: 0,
    stored: 0,
    rejected: {},
    matching: null,
    error: null,
  };
}

/** One feed rule's findings in one snapshot: how many, and the entity the first was about (null: the header). */
export interface RuleTally {
  count: number;
  example: string | null;
}
/** By rule id (pipeline/quality/rules.ts), the rules that fired only. */
export type FindingCounts = Record<string, RuleTally>;

/** History export datasets and file formats (exports/README.md). */
export const EXPORT_DATASETS = ['reliability', 'realtime', 'alerts', 'stop_events'] as const;
export type ExportDataset = (typeof EXPORT_DATASETS)[number];
export const EXPORT_FORMATS = ['parquet', 'ndjson.gz'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];
