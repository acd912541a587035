// The public shapes of the things REST and the events both show (an alert, a vehicle, an arrival,
// a feed's freshness), defined once. REST bodies (http/routes/schemas.ts) add what only a
// response knows (its age, the source's freshness now, names joined from the schedule); event
// data (core/event-schemas.ts) carries the same fields under the same names and formats.
import { z } from 'zod';
import 'zod-openapi';
import {
  ALERT_STATUSES,
  DELAY_STATES,
  FRESHNESS,
  MODES,
  POLL_STATUSES,
  POSITION_SOURCES,
  TRIP_RELATIONSHIPS,
} from './types.ts';

export const timestamp = (description: string) =>
  z.string().meta({ description, format: 'date-time', example: '2024-05-01T17:45:21.000Z' });
export const nullableTimestamp = (description: string) =>
  z.string().nullable().meta({ description, format: 'date-time' });

export const ModeSchema = z.enum(MODES).meta({ id: 'Mode', description: 'Transit mode.' });
export const FreshnessSchema = z.enum(FRESHNESS).meta({
  id: 'Freshness',
  description:
    'Age of the source data: `fresh` below the stale threshold (90 s by default), `stale` below the expired ' +
    'threshold (300 s), else `expired`.',
});
export const DelayStateSchema = z.enum(DELAY_STATES).meta({
  id: 'DelayState',
  description:
    '`early` below -60 s, `late` above 300 s (configurable), `canceled`/`skipped` from the trip update, `unknown` ' +
    'without a prediction.',
});
export const TripRelationshipSchema = z.enum(TRIP_RELATIONSHIPS);

/**
 * What every served route, line, stop, station, trip and vehicle id says in the document: ids
 * are unique across schedules (core/served-ids.ts).
 */
export const SERVED_ID =
  'Unique across schedules: an id that two imported schedules share is served as `<prefix>:<id>` ' +
  '(`schedules[].id_prefix`, else the schedule id); with one schedule, as the feed gives it.';
const servedId = (what: string) => z.string().meta({ description: `${what} ${SERVED_ID}` });
const servedIdOrNull = (what: string) =>
  z
    .string()
    .nullable()
    .meta({ description: `${what} ${SERVED_ID}` });

/** An alert's fields; REST's `Alert` adds `freshness` (how fresh its feed is at response time). */
export const alertFields = {
  id: z
    .string()
    .meta({ description: "Stable id: source and the feed's entity id.", example: 'mbta-alerts:alert-3456' }),
  source: z.string().meta({ description: 'Feed id the alert came from.' }),
  entity_id: z.string(),
  modes: z.array(ModeSchema),
  status: z.enum(ALERT_STATUSES).meta({
    description: '`upcoming` before its active period, `active`, `resolved` once it left the feed or its period ended.',
  }),
  impact: z.string().meta({
    description: 'GTFS-RT effect in lower case: no_service, reduced_service, significant_delays, detour, …',
    example: 'significant_delays',
  }),
  cause: z.string().meta({ example: 'technical_problem' }),
  severity: z.string().nullable(),
  header: z.record(z.string(), z.string()).meta({ description: 'Text by language tag (empty tag: unspecified).' }),
  description: z.record(z.string(), z.string()),
  url: z.record(z.string(), z.string()),
  active_periods: z.array(
    z.object({ start: nullableTimestamp('Open start when null.'), end: nullableTimestamp('Open end when null.') }),
  ),
  routes: z
    .array(z.string())
    .meta({ description: `Bus and streetcar route ids and rail line ids it informs. ${SERVED_ID}` }),
  stations: z.array(z.string()).meta({ description: `Stations and stops it informs. ${SERVED_ID}` }),
  trips: z.array(z.string()).meta({ description: `Trips it informs. ${SERVED_ID}` }),
  version: z.number().int().meta({ description: 'Increments on every change of the alert.' }),
  first_seen_at: timestamp('When the service first saw the alert.'),
  updated_at: timestamp('Last change.'),
  resolved_at: nullableTimestamp('When it was resolved.'),
};

export const AlertSchema = z
  .object({
    ...alertFields,
    freshness: FreshnessSchema.meta({
      description:
        'Freshness of the feed the alert comes from: from a `stale` or `expired` feed the alert may have changed or ' +
        'ended since it was last seen.',
    }),
  })
  .meta({ id: 'Alert' });

export const SourceFreshnessSchema = z
  .object({
    source: z.string().meta({ description: 'Feed id.' }),
    kind: z.enum(['gtfs-rt', 'alerts-json']),
    freshness: FreshnessSchema,
    header_timestamp: nullableTimestamp('Timestamp in the feed header of the last good poll.'),
    last_poll_at: nullableTimestamp('Last poll attempt.'),
    last_success_at: nullableTimestamp('Last poll that returned usable data.'),
    last_status: z
      .enum(POLL_STATUSES)
      .nullable()
      .meta({
        description:
          'ok, unchanged, duplicate (a snapshot stored before), http_error, timeout, network_error, too_large, ' +
          'decode_error, or rejected (decoded, but unusable: header outside the freshness bounds, or every ' +
          'entity rejected).',
      }),
    last_error: z.string().nullable(),
  })
  .meta({ id: 'SourceFreshness' });

/** A vehicle's fields; REST's `VehiclePosition` adds `age_s`, `freshness` and `delay_s` (response time, joined). */
export const vehicleFields = {
  id: z.string().meta({ description: 'source:vehicle_id.' }),
  source: z.string(),
  vehicle_id: servedId('Vehicle id.'),
  route_id: servedIdOrNull('Route (or rail line) id.'),
  trip_id: servedIdOrNull('Trip id.'),
  feed_trip_id: z
    .string()
    .nullable()
    .meta({
      description:
        "The feed's own trip id where trip matching gave `trip_id` the schedule's (found by NYCT origin, start time, " +
        'or loosely: a train running behind the published timetable); null when they are one.',
    }),
  lat: z
    .number()
    .meta({ description: "WGS 84 degrees: the vehicle's own fix, or its stop's when `position_source` is `stop`." }),
  lon: z.number(),
  position_source: z.enum(POSITION_SOURCES).meta({
    description:
      "`gps`: the feed's coordinates. `stop`: the feed gave none (NYCT subway), so the vehicle is placed at " +
      "`stop_id` (the stop it is at or heading to) with the schedule's coordinates of that stop.",
  }),
  bearing: z.number().nullable(),
  speed_mps: z.number().nullable(),
  stop_id: servedIdOrNull('Stop id.'),
  current_status: z.string().nullable(),
  timestamp: timestamp('When the vehicle reported this position.'),
  observed_at: timestamp('When the poll that saw it ran.'),
};

export const VehicleSchema = z
  .object({
    ...vehicleFields,
    age_s: z.number().int().meta({ description: "Seconds between the position's timestamp and this response." }),
    freshness: FreshnessSchema,
    delay_s: z
      .number()
      .int()
      .nullable()
      .meta({ description: 'Delay of its trip at the next stop, where a trip update gives one.' }),
  })
  .meta({ id: 'VehiclePosition' });

/** A predicted stop's fields; REST's `RailArrival` adds `station_name` (from the schedule) and `freshness`. */
export const arrivalFields = {
  id: z
    .string()
    .meta({ description: 'source:trip:stop_sequence (or stop id); source:trip~instance:… for a trip carried twice.' }),
  source: z.string(),
  trip_id: servedId('Trip id.'),
  feed_trip_id: z
    .string()
    .nullable()
    .meta({
      description:
        "The feed's own trip id where trip matching gave `trip_id` the schedule's (found by NYCT origin, start time, " +
        'or loosely: a train running behind the published timetable); null when they are one.',
    }),
  trip_instance: z
    .string()
    .nullable()
    .meta({
      description:
        'Null unless the feed carries this trip id (and start date) more than once for different trains: then what ' +
        'tells them apart (`vehicle:<id>`, `start:<start_time>`, `to:<last stop>`, `from:<first ' +
        'stop>`, `#<n>`).',
    }),
  line: servedIdOrNull('Rail line id; null when neither feed nor schedule names it.'),
  station_id: servedId('Parent station, or the stop when it has none.'),
  stop_id: servedId('Stop id.'),
  stop_sequence: z.number().int().nullable(),
  direction_id: z.number().int().nullable(),
  service_date: z.string().nullable().meta({ format: 'date' }),
  scheduled_at: nullableTimestamp('Scheduled arrival.'),
  predicted_at: nullableTimestamp('Predicted arrival.'),
  delay_s: z.number().int().nullable(),
  delay_state: DelayStateSchema,
  trip_relationship: TripRelationshipSchema,
  in_schedule: z.boolean().meta({ description: 'false for added trips and trips missing from the static schedule.' }),
  vehicle_id: servedIdOrNull('Vehicle id.'),
  observed_at: timestamp('When the poll that produced it ran.'),
};

export const RailArrivalSchema = z
  .object({
    id: arrivalFields.id,
    source: arrivalFields.source,
    trip_id: arrivalFields.trip_id,
    feed_trip_id: arrivalFields.feed_trip_id,
    trip_instance: arrivalFields.trip_instance,
    line: arrivalFields.line,
    station_id: arrivalFields.station_id,
    station_name: z.string().nullable(),
    stop_id: arrivalFields.stop_id,
    stop_sequence: arrivalFields.stop_sequence,
    direction_id: arrivalFields.direction_id,
    service_date: arrivalFields.service_date,
    scheduled_at: arrivalFields.scheduled_at,
    predicted_at: arrivalFields.predicted_at,
    delay_s: arrivalFields.delay_s,
    delay_state: arrivalFields.delay_state,
    trip_relationship: arrivalFields.trip_relationship,
    in_schedule: arrivalFields.in_schedule,
    vehicle_id: arrivalFields.vehicle_id,
    observed_at: arrivalFields.observed_at,
    freshness: FreshnessSchema,
  })
  .meta({ id: 'RailArrival' });

export type ApiAlert = z.input<typeof AlertSchema>;
export type ApiRailArrival = z.input<typeof RailArrivalSchema>;
export type ApiVehicle = z.input<typeof VehicleSchema>;
export type ApiSourceFreshness = z.input<typeof SourceFreshnessSchema>;
