// The shape of decoded GTFS-RT messages as protobufjs reflection hands them back (snake_case,
// keepCase). Only the fields the normalizers read are declared. Unset optional scalars read the
// proto default from the prototype, so presence checks use `has()` (own property), never truthiness.

/** protobufjs decodes 64-bit integers to Long objects when `long` is installed, else to numbers. */
export type Int64 = number | { toNumber(): number };

export interface TranslatedStringMsg {
  translation: { text: string; language?: string }[];
}

/** NYCT's extension of TripDescriptor (pipeline/nyct-subway.proto, field 1001). */
export interface NyctTripDescriptorMsg {
  train_id?: string;
  is_assigned?: boolean;
  /** NORTH = 1, EAST = 2, SOUTH = 3, WEST = 4 */
  direction?: number;
}

/** protobufjs names extension fields by their full name, with a leading dot. */
export const NYCT_TRIP_DESCRIPTOR = '.transit_realtime.nyct_trip_descriptor';
export const NYCT_FEED_HEADER = '.transit_realtime.nyct_feed_header';

export interface TripDescriptorMsg {
  trip_id?: string;
  route_id?: string;
  direction_id?: number;
  start_time?: string;
  start_date?: string;
  schedule_relationship?: number;
  [NYCT_TRIP_DESCRIPTOR]?: NyctTripDescriptorMsg;
}

export interface VehicleDescriptorMsg {
  id?: string;
  label?: string;
}

export interface StopTimeEventMsg {
  delay?: number;
  time?: Int64;
  scheduled_time?: Int64;
}

export interface StopTimeUpdateMsg {
  stop_sequence?: number;
  stop_id?: string;
  arrival?: StopTimeEventMsg;
  departure?: StopTimeEventMsg;
  schedule_relationship?: number;
}

export interface TripUpdateMsg {
  trip: TripDescriptorMsg;
  vehicle?: VehicleDescriptorMsg;
  stop_time_update: StopTimeUpdateMsg[];
  timestamp?: Int64;
  delay?: number;
}

export interface PositionMsg {
  latitude: number;
  longitude: number;
  bearing?: number;
  speed?: number;
}

export interface VehiclePositionMsg {
  trip?: TripDescriptorMsg;
  vehicle?: VehicleDescriptorMsg;
  position?: PositionMsg;
  current_stop_sequence?: number;
  stop_id?: string;
  current_status?: number;
  timestamp?: Int64;
}

export interface EntitySelectorMsg {
  agency_id?: string;
  route_id?: string;
  route_type?: number;
  trip?: TripDescriptorMsg;
  stop_id?: string;
  direction_id?: number;
}

export interface AlertMsg {
  active_period: { start?: Int64; end?: Int64 }[];
  informed_entity: EntitySelectorMsg[];
  cause?: number;
  effect?: number;
  url?: TranslatedStringMsg;
  header_text?: TranslatedStringMsg;
  description_text?: TranslatedStringMsg;
  severity_level?: number;
}

export interface FeedEntityMsg {
  id?: string;
  is_deleted?: boolean;
  trip_update?: TripUpdateMsg;
  vehicle?: VehiclePositionMsg;
  alert?: AlertMsg;
}

export interface FeedHeaderMsg {
  gtfs_realtime_version: string;
  incrementality?: number;
  timestamp?: Int64;
  [NYCT_FEED_HEADER]?: { nyct_subway_version?: string };
}

export interface FeedMessageMsg {
  header: FeedHeaderMsg;
  entity: FeedEntityMsg[];
}

const hasOwn = Object.prototype.hasOwnProperty;

/** True when the field was on the wire (protobufjs sets own properties only for those). */
export function has<T extends object>(msg: T | undefined | null, field: keyof T & string): boolean {
  return msg != null && hasOwn.call(msg, field);
}

/**
 * The vehicle a message names: the VehicleDescriptor's id, else its label, else NYCT's train id
 * (the TripDescriptor extension), which NYCT sends instead of a VehicleDescriptor and which, unlike
 * its entity ids, stays with the train from poll to poll.
 */
export function vehicleRef(
  vehicle: VehicleDescriptorMsg | undefined,
  td: TripDescriptorMsg | undefined,
): string | null {
  return vehicle?.id || vehicle?.label || td?.[NYCT_TRIP_DESCRIPTOR]?.train_id || null;
}

export function int64(value: Int64 | undefined | null): number | null {
  if (value == null) return null;
  return typeof value === 'number' ? value : value.toNumber();
}

// Enum names as the GTFS-RT reference spells them; rows carry them in lower case.
export const TRIP_RELATIONSHIP_NAMES: Record<number, string> = {
  0: 'scheduled',
  1: 'added',
  2: 'unscheduled',
  3: 'canceled',
  5: 'replacement',
  6: 'duplicated',
  7: 'deleted',
  8: 'new',
};
export const STOP_RELATIONSHIP = { SCHEDULED: 0, SKIPPED: 1, NO_DATA: 2, UNSCHEDULED: 3 } as const;
export const VEHICLE_STOP_STATUS_NAMES: Record<number, string> = {
  0: 'incoming_at',
  1: 'stopped_at',
  2: 'in_transit_to',
};
export const CAUSE_NAMES: Record<number, string> = {
  1: 'unknown_cause',
  2: 'other_cause',
  3: 'technical_problem',
  4: 'strike',
  5: 'demonstration',
  6: 'accident',
  7: 'holiday',
  8: 'weather',
  9: 'maintenance',
  10: 'construction',
  11: 'police_activity',
  12: 'medical_emergency',
};
export const EFFECT_NAMES: Record<number, string> = {
  1: 'no_service',
  2: 'reduced_service',
  3: 'significant_delays',
  4: 'detour',
  5: 'additional_service',
  6: 'modified_service',
  7: 'other_effect',
  8: 'unknown_effect',
  9: 'stop_moved',
  10: 'no_effect',
  11: 'accessibility_issue',
};
export const SEVERITY_NAMES: Record<number, string> = { 1: 'unknown_severity', 2: 'info', 3: 'warning', 4: 'severe' };
