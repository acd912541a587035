// Response shapes of the public API. Each named schema becomes an OpenAPI component; the
// handlers' return types are checked against them at compile time through defineRoute.
import { z } from 'zod';
import 'zod-openapi';
import { ALERT_STATUSES, DELAY_STATES, FRESHNESS, MODES, POLL_STATUSES, POSITION_SOURCES, TRIP_RELATIONSHIPS } from '../../core/types.ts';

export const timestamp = (description: string) => z.string().meta({ description, format: 'date-time', example: '2024-05-01T17:45:21.000Z' });
const nullableTimestamp = (description: string) => z.string().nullable().meta({ description, format: 'date-time' });

export const ModeSchema = z.enum(MODES).meta({ id: 'Mode', description: 'Transit mode.' });
export const FreshnessSchema = z.enum(FRESHNESS).meta({
  id: 'Freshness',
  description: 'Age of the source data: `fresh` below the stale threshold (90 s by default), `stale` below the expired threshold (300 s), else `expired`.',
});
export const DelayStateSchema = z.enum(DELAY_STATES).meta({
  id: 'DelayState',
  description: '`early` below -60 s, `late` above 300 s (configurable), `canceled`/`skipped` from the trip update, `unknown` without a prediction.',
});

export const LinksSchema = z.object({
  self: z.string().meta({ description: 'This page.' }),
  next: z.string().nullable().meta({ description: 'The next page, or null on the last page.' }),
}).meta({ id: 'PageLinks' });

/**
 * A keyset page without a total (lists read from DuckDB page by page, where counting every
 * matching row would cost more than the page): `{data, meta: {limit, next_cursor}, links}`.
 */
export function cursorPageSchema<T extends z.ZodType>(item: T, id: string, metaId = `${id}Meta`) {
  return z.object({
    data: z.array(item),
    meta: z.object({
      limit: z.number().int(),
      next_cursor: z.string().nullable().meta({ description: 'Pass as `cursor` for the next page; null on the last page.' }),
    }).meta({ id: metaId }),
    links: LinksSchema,
  }).meta({ id });
}

export const PageMetaSchema = z.object({
  limit: z.number().int(),
  next_cursor: z.string().nullable().meta({ description: 'Pass as `cursor` for the next page; null on the last page.' }),
  total: z.number().int().meta({ description: 'Rows matching the filters right now, over all pages.' }),
}).meta({ id: 'PageMeta' });

export const AlertSchema = z.object({
  id: z.string().meta({ description: 'Stable id: source and the feed\'s entity id.', example: 'mbta-alerts:alert-3456' }),
  source: z.string().meta({ description: 'Feed id the alert came from.' }),
  entity_id: z.string(),
  modes: z.array(ModeSchema),
  status: z.enum(ALERT_STATUSES).meta({
    description: '`upcoming` before its active period, `active`, `resolved` once it left the feed or its period ended.',
  }),
  impact: z.string().meta({ description: 'GTFS-RT effect in lower case: no_service, reduced_service, significant_delays, detour, …', example: 'significant_delays' }),
  cause: z.string().meta({ example: 'technical_problem' }),
  severity: z.string().nullable(),
  header: z.record(z.string(), z.string()).meta({ description: 'Text by language tag (empty tag: unspecified).' }),
  description: z.record(z.string(), z.string()),
  url: z.record(z.string(), z.string()),
  active_periods: z.array(z.object({ start: nullableTimestamp('Open start when null.'), end: nullableTimestamp('Open end when null.') })),
  routes: z.array(z.string()).meta({ description: 'Bus and streetcar route ids and rail line ids it informs.' }),
  stations: z.array(z.string()),
  trips: z.array(z.string()),
  version: z.number().int().meta({ description: 'Increments on every change of the alert.' }),
  first_seen_at: timestamp('When the service first saw the alert.'),
  updated_at: timestamp('Last change.'),
  resolved_at: nullableTimestamp('When it was resolved.'),
  freshness: FreshnessSchema.meta({
    description: 'Freshness of the feed the alert comes from: from a `stale` or `expired` feed the alert may have changed or ended since it was last seen.',
  }),
}).meta({ id: 'Alert' });

export const SourceFreshnessSchema = z.object({
  source: z.string().meta({ description: 'Feed id.' }),
  kind: z.enum(['gtfs-rt', 'alerts-json']),
  freshness: FreshnessSchema,
  header_timestamp: nullableTimestamp('Timestamp in the feed header of the last good poll.'),
  last_poll_at: nullableTimestamp('Last poll attempt.'),
  last_success_at: nullableTimestamp('Last poll that returned usable data.'),
  last_status: z.enum(POLL_STATUSES).nullable().meta({
    description: 'ok, unchanged, duplicate (a snapshot stored before), http_error, timeout, network_error, too_large, decode_error, '
      + 'or rejected (decoded, but unusable: header outside the freshness bounds, or every entity rejected).',
  }),
  last_error: z.string().nullable(),
}).meta({ id: 'SourceFreshness' });

export const AlertPageSchema = z.object({
  data: z.array(AlertSchema),
  freshness: z.object({ sources: z.array(SourceFreshnessSchema) }).meta({
    description: 'The feeds the matching alerts come from (every page of them), and how fresh each is.',
  }),
  meta: PageMetaSchema,
  links: LinksSchema,
}).meta({ id: 'AlertPage' });

export const VehicleSchema = z.object({
  id: z.string().meta({ description: 'source:vehicle_id.' }),
  source: z.string(),
  vehicle_id: z.string(),
  route_id: z.string().nullable(),
  trip_id: z.string().nullable(),
  lat: z.number().meta({ description: 'WGS 84 degrees: the vehicle\'s own fix, or its stop\'s when `position_source` is `stop`.' }),
  lon: z.number(),
  position_source: z.enum(POSITION_SOURCES).meta({
    description: '`gps`: the feed\'s coordinates. `stop`: the feed gave none (NYCT subway), so the vehicle is placed at `stop_id` (the stop it is at or heading to) with the schedule\'s coordinates of that stop.',
  }),
  bearing: z.number().nullable(),
  speed_mps: z.number().nullable(),
  stop_id: z.string().nullable(),
  current_status: z.string().nullable(),
  timestamp: timestamp('When the vehicle reported this position.'),
  observed_at: timestamp('When the poll that saw it ran.'),
  age_s: z.number().int().meta({ description: 'Seconds between the position\'s timestamp and this response.' }),
  freshness: FreshnessSchema,
  delay_s: z.number().int().nullable().meta({ description: 'Delay of its trip at the next stop, where a trip update gives one.' }),
}).meta({ id: 'VehiclePosition' });

export const RailArrivalSchema = z.object({
  id: z.string().meta({ description: 'source:trip:stop_sequence (or stop id); source:trip~instance:… for a trip carried twice.' }),
  source: z.string(),
  trip_id: z.string(),
  trip_instance: z.string().nullable().meta({
    description: 'Null unless the feed carries this trip id (and start date) more than once for different trains: then what tells them apart (`vehicle:<id>`, `start:<start_time>`, `to:<last stop>`, `from:<first stop>`, `#<n>`).',
  }),
  line: z.string().nullable().meta({ description: 'Rail line id; null when neither feed nor schedule names it.' }),
  station_id: z.string().meta({ description: 'Parent station, or the stop when it has none.' }),
  station_name: z.string().nullable(),
  stop_id: z.string(),
  stop_sequence: z.number().int().nullable(),
  direction_id: z.number().int().nullable(),
  service_date: z.string().nullable().meta({ format: 'date' }),
  scheduled_at: nullableTimestamp('Scheduled arrival.'),
  predicted_at: nullableTimestamp('Predicted arrival.'),
  delay_s: z.number().int().nullable(),
  delay_state: DelayStateSchema,
  trip_relationship: z.enum(TRIP_RELATIONSHIPS),
  in_schedule: z.boolean().meta({ description: 'false for added trips and trips missing from the static schedule.' }),
  vehicle_id: z.string().nullable(),
  observed_at: timestamp('When the poll that produced it ran.'),
  freshness: FreshnessSchema,
}).meta({ id: 'RailArrival' });

export const DelayCountsSchema = z.object(
  Object.fromEntries(DELAY_STATES.map((s) => [s, z.number().int()])) as Record<(typeof DELAY_STATES)[number], z.ZodNumber>,
).meta({ id: 'DelayStateCounts' });

const delayFigures = {
  mean_delay_s: z.number().nullable().meta({ description: 'Mean delay over arrivals with a known delay.' }),
  max_delay_s: z.number().int().nullable(),
  delay_states: DelayCountsSchema,
};

export const TrainSummarySchema = z.object({
  trip_id: z.string(),
  trip_instance: z.string().nullable().meta({ description: 'As on arrivals: set when one trip id is two trains.' }),
  source: z.string(),
  line: z.string().nullable(),
  direction_id: z.number().int().nullable(),
  vehicle_id: z.string().nullable(),
  next_station_id: z.string().meta({ description: 'Station of the train\'s earliest remaining stop in the feed.' }),
  delay_s: z.number().int().nullable().meta({ description: 'Delay at that stop.' }),
  delay_state: DelayStateSchema,
  arrivals: z.number().int(),
}).meta({ id: 'TrainDelaySummary' });

export const LineSummarySchema = z.object({
  line: z.string().nullable(),
  arrivals: z.number().int(),
  trains: z.number().int(),
  ...delayFigures,
}).meta({ id: 'LineDelaySummary' });

export const StationSummarySchema = z.object({
  station_id: z.string(),
  name: z.string().nullable(),
  arrivals: z.number().int(),
  ...delayFigures,
}).meta({ id: 'StationDelaySummary' });

export const RailRealtimeSchema = z.object({
  data: z.array(RailArrivalSchema),
  summaries: z.object({
    trains: z.array(TrainSummarySchema),
    lines: z.array(LineSummarySchema),
    stations: z.array(StationSummarySchema),
  }).meta({ description: 'Over every arrival matching the filters, not only this page.' }),
  vehicles: z.array(VehicleSchema).meta({
    description: 'Every rail vehicle position on the requested lines (all lines without `line`), whatever the page; the other filters apply to arrivals. Trains whose feed gives no coordinates are placed at their stop (`position_source: stop`).',
  }),
  freshness: z.object({ sources: z.array(SourceFreshnessSchema) }),
  meta: PageMetaSchema,
  links: LinksSchema,
}).meta({ id: 'RailRealtime' });

export const RouteSummarySchema = z.object({
  route_id: z.string().nullable(),
  vehicles: z.number().int(),
  mean_delay_s: z.number().nullable().meta({ description: 'Mean over vehicles with a known delay.' }),
  newest_position_at: timestamp('Most recent position on the route.'),
  oldest_position_at: timestamp('Oldest position on the route.'),
  newest_age_s: z.number().int(),
  oldest_age_s: z.number().int(),
}).meta({ id: 'RouteSummary' });

export const RouteFreshnessSchema = z.object({
  route_id: z.string().nullable(),
  freshness: FreshnessSchema.meta({ description: 'Freshness of the route\'s newest position.' }),
  fresh: z.number().int(),
  stale: z.number().int(),
  expired: z.number().int(),
}).meta({ id: 'RouteFreshness' });

export const VehicleRealtimeSchema = z.object({
  data: z.array(VehicleSchema),
  summaries: z.object({ routes: z.array(RouteSummarySchema) }).meta({
    description: 'Over every vehicle matching the filters, not only this page.',
  }),
  freshness: z.object({ sources: z.array(SourceFreshnessSchema), routes: z.array(RouteFreshnessSchema) }),
  meta: PageMetaSchema,
  links: LinksSchema,
}).meta({ id: 'VehicleRealtime' });

const routeFields = {
  short_name: z.string().nullable(),
  long_name: z.string().nullable(),
  color: z.string().nullable().meta({ description: 'Hex colour without #, from the schedule.' }),
  text_color: z.string().nullable(),
  route_type: z.number().int().meta({ description: 'GTFS route_type.' }),
  schedule: z.string().meta({ description: 'Schedule (GTFS feed) id the route comes from.' }),
};

export const RailLineSchema = z.object({
  line: z.string(),
  ...routeFields,
  stations: z.array(z.object({ station_id: z.string(), name: z.string().nullable() })),
  links: z.object({ realtime: z.string(), alerts: z.string(), reliability: z.string() }),
}).meta({ id: 'RailLine' });

export const ReliabilitySnapshotSchema = z.object({
  from: z.string().meta({ format: 'date' }),
  to: z.string().meta({ format: 'date' }),
  scheduled: z.number().int(),
  canceled: z.number().int(),
  partially_canceled: z.number().int(),
  unobserved: z.number().int(),
  delivered: z.number().int(),
  delivered_pct: z.number().nullable().meta({ description: 'delivered / scheduled × 100; null when nothing was scheduled.' }),
}).meta({ id: 'ReliabilitySnapshot', description: 'The last seven finalized service days.' });

export const BusRouteSchema = z.object({
  route_id: z.string(),
  ...routeFields,
  reliability: ReliabilitySnapshotSchema.nullable().meta({ description: 'Null until the route has finalized service days.' }),
  links: z.object({ realtime: z.string(), alerts: z.string(), reliability: z.string() }),
}).meta({ id: 'BusRoute' });

export const StreetcarRouteSchema = z.object({
  route_id: z.string(),
  ...routeFields,
  active_alerts: z.number().int().meta({ description: 'Alerts currently active on the route.' }),
  links: z.object({ alerts: z.string(), realtime: z.string(), reliability: z.string() }),
}).meta({ id: 'StreetcarRoute' });

const directoryMeta = z.object({ count: z.number().int(), schedules: z.array(z.string()) });

export const RailDirectorySchema = z.object({ data: z.array(RailLineSchema), meta: directoryMeta }).meta({ id: 'RailDirectory' });
export const BusDirectorySchema = z.object({ data: z.array(BusRouteSchema), meta: directoryMeta }).meta({ id: 'BusDirectory' });
export const StreetcarDirectorySchema = z.object({ data: z.array(StreetcarRouteSchema), meta: directoryMeta }).meta({ id: 'StreetcarDirectory' });

export type ApiAlert = z.input<typeof AlertSchema>;
export type ApiRailArrival = z.input<typeof RailArrivalSchema>;
export type ApiVehicle = z.input<typeof VehicleSchema>;
export type ApiSourceFreshness = z.input<typeof SourceFreshnessSchema>;
export type ApiReliabilitySnapshot = z.input<typeof ReliabilitySnapshotSchema>;
export type ApiPageMeta = z.input<typeof PageMetaSchema>;
export type ApiLinks = z.input<typeof LinksSchema>;
