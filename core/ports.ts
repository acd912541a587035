// The seams between pipeline, store and http. Each side depends on these shapes only.
import type {
  Alert,
  Arrival,
  FeedPoll,
  Freshness,
  Mode,
  StopEvent,
  StopEventCounts,
  TripMatching,
  TripObservation,
  VehiclePosition,
} from './types.ts';

export interface ScheduledTrip {
  schedule_id: string;
  trip_id: string;
  route_id: string;
  service_id: string;
  direction_id: number | null;
  headsign: string | null;
}

export interface ScheduledRoute {
  schedule_id: string;
  route_id: string;
  route_type: number;
  mode: Mode | null;
  short_name: string | null;
  long_name: string | null;
  color: string | null;
}

export interface ScheduledStopTime {
  stop_sequence: number;
  stop_id: string;
  /** seconds from "noon minus 12 h" of the service date; may exceed 86,400 */
  arrival_s: number | null;
  departure_s: number | null;
}

export interface ScheduledStop {
  stop_id: string;
  name: string | null;
  lat: number | null;
  lon: number | null;
  /** the parent station, or the stop itself when it has none */
  station_id: string;
}

/** A trip's first departure and last arrival, in seconds from its service day's origin. */
export interface TripSpan {
  start_s: number;
  end_s: number;
}

/** A scheduled trip found by its NYCT origin time, route and direction, with the path its id names. */
export interface NyctScheduledTrip {
  trip: ScheduledTrip;
  path: string | null;
}

/** A scheduled trip of one NYCT route and direction, with its first departure, for the loose match. */
export interface NyctTimedTrip extends NyctScheduledTrip {
  /** first departure, seconds from its service day's origin (may pass 86,400) */
  start_s: number;
}

/** A trip's shape (shapes.txt): its points in order, as parallel coordinate arrays. */
export interface ShapeLine {
  readonly lat: Float32Array;
  readonly lon: Float32Array;
}

/** Static schedule lookups the normalizer needs, held in memory by the store. */
export interface ScheduleIndex {
  readonly timezone: string;
  trip(tripId: string): ScheduledTrip | undefined;
  route(routeId: string): ScheduledRoute | undefined;
  stop(stopId: string): ScheduledStop | undefined;
  /**
   * Modes of the routes whose trips call at a station (a stop's `station_id`: its parent, or the
   * stop itself), in MODES order; empty when no trip calls there. Indexed on first use, then O(1).
   */
  stationModes(stationId: string): readonly Mode[];
  /** ordered by stop_sequence */
  stopTimes(tripId: string): readonly ScheduledStopTime[];
  /** is the trip's service active on that date (calendar + calendar_dates)? */
  runsOn(serviceId: string, serviceDate: string): boolean;
  routes(): readonly ScheduledRoute[];
  /** undefined for a trip without timed stops; O(1), no stop time objects built */
  tripSpan(tripId: string): TripSpan | undefined;
  /**
   * Trips of a route whose first departure is `startS` (seconds, may pass 86,400), in one
   * direction or, with null, in either. Indexed on first use, then O(1).
   */
  tripsStartingAt(routeId: string, directionId: number | null, startS: number): readonly ScheduledTrip[];
  /** Trips by core/nyct-trip-id.ts's nyctKey (origin, route, direction). Indexed on first use, then O(1). */
  nyctTrips(key: string): readonly NyctScheduledTrip[];
  /**
   * The NYCT-style trips (core/nyct-trip-id.ts) of a route in one direction (N or S), ordered by
   * first departure, whatever their service. Indexed on first use, then O(1).
   */
  nyctRouteTrips(routeId: string, direction: 'N' | 'S'): readonly NyctTimedTrip[];
  /**
   * Every trip of a route (scheduled headways of stop events). Indexed on first use, then O(1); absent: no scheduled
   * headways.
   */
  tripsOfRoute?(routeId: string): readonly ScheduledTrip[];
  /** every stop; without it the feed rules have no coverage area (E028) */
  stops?(): readonly ScheduledStop[];
  /** the trip's shape; undefined without shapes.txt or a shape_id (feed rule E029) */
  tripShape?(tripId: string): ShapeLine | undefined;
}

/** What identifies a stored snapshot: the hash covers the whole body, header timestamp included. */
export interface SnapshotKey {
  feed_id: string;
  body_sha256: string;
}

export interface SnapshotRecord extends SnapshotKey {
  header_timestamp_ms: number | null;
  /** the rows' observed time: the poll's, or the header's for a replayed snapshot */
  observed_ms: number;
  source: 'poll' | 'replay';
}

/** One poll's normalized output, written to history in one batch. */
export interface HistoryBatch {
  vehicles: VehiclePosition[];
  arrivals: Arrival[];
  trips: TripObservation[];
  /** new alert versions only (created, updated or resolved in this poll) */
  alertVersions: Alert[];
  polls: FeedPoll[];
  /** stop events the poll passed (pipeline/stop-events/); written whatever the snapshot's verdict, once each */
  stopEvents?: StopEvent[];
  /**
   * The snapshot the vehicles, arrivals and trips come from. Recorded in the same transaction;
   * when it is already recorded those rows are not appended again.
   */
  snapshot?: SnapshotRecord;
}

export interface HistoryWriter {
  /** Appends through the DuckDB appender; resolves with the number of rows stored. */
  write(batch: HistoryBatch): Promise<number>;
  /** Called when nothing waits to be written: a moment for the store's own upkeep (a checkpoint). */
  idle?(): Promise<void>;
  /** Whether this snapshot's rows are stored already (by this process or an earlier one). */
  hasSnapshot(key: SnapshotKey): Promise<boolean>;
}

export interface FeedHealth {
  feed_id: string;
  kind: 'gtfs-rt' | 'alerts-json';
  freshness: Freshness;
  header_timestamp_ms: number | null;
  last_poll_ms: number | null;
  last_success_ms: number | null;
  last_status: FeedPoll['status'] | null;
  last_error: string | null;
  entities: number;
  polls: number;
  failures: number;
  rejected: number;
  /** trip matching of the last usable snapshot; null before one, or when it looked up no trip */
  matching?: TripMatching | null;
  /** stop events written from this feed's polls and the anomalies they showed, since the process started */
  stop_events?: StopEventCounts;
  /** feed rules that fired since start (pipeline/quality); replaced, never mutated, on each checked body */
  rules?: readonly FeedRuleHealth[];
}

/** One feed rule's findings for one feed since this process started. */
export interface FeedRuleHealth {
  rule: string;
  /** findings in every body checked */
  total: number;
  /** findings in the last body checked (0: it did not fire there) */
  last: number;
  /** the entity of the most recent finding (null: the header) */
  example: string | null;
  last_seen_ms: number;
  /** since when the rule fires for the feed; null when it does not (it stopped, after clean bodies in a row) */
  firing_since_ms: number | null;
  /** bodies checked in a row without a finding of this rule */
  clean: number;
}

/**
 * The parts of the live state that change apart, each with its own version, so a reader caches
 * per slice: a poll of a bus feed leaves cached alert bodies alone. `feeds` is every feed's
 * health (it moves on every poll, last_poll_ms at least); `freshness` only when a feed's verdict
 * changes or a feed is added or removed.
 */
export const LIVE_SLICES = [
  'alerts',
  'arrivals',
  'vehicles:rail',
  'vehicles:bus',
  'vehicles:streetcar',
  'feeds',
  'freshness',
] as const;
export type LiveSlice = (typeof LIVE_SLICES)[number];

/** Read-only view of the current state, for http. Arrays are snapshots: do not mutate. */
export interface LiveView {
  vehicles(mode: Mode): readonly VehiclePosition[];
  arrivals(): readonly Arrival[];
  alerts(): readonly Alert[];
  feeds(): readonly FeedHealth[];
  /** moves whenever any slice moves, so readers can cache per version */
  readonly version: number;
  /** moves only when the slice's content changes; a view without it moves every slice with `version` */
  sliceVersion?(slice: LiveSlice): number;
  /** moves when this feed's health changes (every poll); absent: the `feeds` slice */
  feedVersion?(feedId: string): number;
  /**
   * Calls `listener` right after any slice moved (once per move: coalesce to read the state
   * once); returns the unsubscribe. Absent: readers compare `version` on a timer.
   */
  onChange?(listener: () => void): () => void;
}

/**
 * A trip instance whose stop events are stored through `stop_sequence`: the trip tracker resumes
 * after it (a restart, a replay of an archive stored before) rather than writing a stop twice.
 * `group` is the schedule id, or `feed:<feed_id>` for a feed without schedule.
 */
export interface WrittenTrip {
  group: string;
  service_date: string;
  trip_id: string;
  trip_instance: string | null;
  /** the highest stop_sequence stored; null when every stop stored came without one */
  stop_sequence: number | null;
  /** stops stored without a stop_sequence (a trip the schedule does not have, from a feed that numbers none) */
  stop_ids: readonly string[];
}
