// Response shapes of the public API. Each named schema becomes an OpenAPI component; the
// handlers' return types are checked against them at compile time through defineRoute.
import { z } from 'zod';
import 'zod-openapi';
import { DELAY_STATES } from '../../core/types.ts';
import {
  AlertSchema,
  DelayStateSchema,
  FreshnessSchema,
  RailArrivalSchema,
  SERVED_ID,
  SourceFreshnessSchema,
  timestamp,
  VehicleSchema,
} from '../../core/api-shapes.ts';

// the shapes events share live in core (core/api-shapes.ts); the routes import them from here
export {
  AlertSchema,
  DelayStateSchema,
  FreshnessSchema,
  ModeSchema,
  RailArrivalSchema,
  SourceFreshnessSchema,
  timestamp,
  VehicleSchema,
} from '../../core/api-shapes.ts';
export type { ApiAlert, ApiRailArrival, ApiSourceFreshness, ApiVehicle } from '../../core/api-shapes.ts';

export const LinksSchema = z
  .object({
    self: z.string().meta({ description: 'This page.' }),
    next: z.string().nullable().meta({ description: 'The next page, or null on the last page.' }),
  })
  .meta({ id: 'PageLinks' });

/**
 * A keyset page without a total (lists read from DuckDB page by page, where counting every
 * matching row would cost more than the page): `{data, meta: {limit, next_cursor}, links}`.
 */
export function cursorPageSchema<T extends z.ZodType>(item: T, id: string, metaId = `${id}Meta`) {
  return z
    .object({
      data: z.array(item),
      meta: z
        .object({
          limit: z.number().int(),
          next_cursor: z
            .string()
            .nullable()
            .meta({ description: 'Pass as `cursor` for the next page; null on the last page.' }),
        })
        .meta({ id: metaId }),
      links: LinksSchema,
    })
    .meta({ id });
}

export const PageMetaSchema = z
  .object({
    limit: z.number().int(),
    next_cursor: z
      .string()
      .nullable()
      .meta({ description: 'Pass as `cursor` for the next page; null on the last page.' }),
    total: z.number().int().meta({ description: 'Rows matching the filters right now, over all pages.' }),
  })
  .meta({ id: 'PageMeta' });

export const AlertPageSchema = z
  .object({
    data: z.array(AlertSchema),
    freshness: z.object({ sources: z.array(SourceFreshnessSchema) }).meta({
      description: 'The feeds the matching alerts come from (every page of them), and how fresh each is.',
    }),
    meta: PageMetaSchema,
    links: LinksSchema,
  })
  .meta({ id: 'AlertPage' });

export const DelayCountsSchema = z
  .object(
    Object.fromEntries(DELAY_STATES.map((s) => [s, z.number().int()])) as Record<
      (typeof DELAY_STATES)[number],
      z.ZodNumber
    >,
  )
  .meta({ id: 'DelayStateCounts' });

const delayFigures = {
  mean_delay_s: z.number().nullable().meta({ description: 'Mean delay over arrivals with a known delay.' }),
  max_delay_s: z.number().int().nullable(),
  delay_states: DelayCountsSchema,
};

export const TrainSummarySchema = z
  .object({
    trip_id: z.string(),
    trip_instance: z.string().nullable().meta({ description: 'As on arrivals: set when one trip id is two trains.' }),
    source: z.string(),
    line: z.string().nullable(),
    direction_id: z.number().int().nullable(),
    vehicle_id: z.string().nullable(),
    next_station_id: z.string().meta({ description: "Station of the train's earliest remaining stop in the feed." }),
    delay_s: z.number().int().nullable().meta({ description: 'Delay at that stop.' }),
    delay_state: DelayStateSchema,
    arrivals: z.number().int(),
  })
  .meta({ id: 'TrainDelaySummary' });

export const LineSummarySchema = z
  .object({
    line: z.string().nullable(),
    arrivals: z.number().int(),
    trains: z.number().int(),
    ...delayFigures,
  })
  .meta({ id: 'LineDelaySummary' });

export const StationSummarySchema = z
  .object({
    station_id: z.string(),
    name: z.string().nullable(),
    arrivals: z.number().int(),
    ...delayFigures,
  })
  .meta({ id: 'StationDelaySummary' });

export const RailRealtimeSchema = z
  .object({
    data: z.array(RailArrivalSchema),
    summaries: z
      .object({
        trains: z.array(TrainSummarySchema),
        lines: z.array(LineSummarySchema),
        stations: z.array(StationSummarySchema),
      })
      .meta({ description: 'Over every arrival matching the filters, not only this page.' }),
    vehicles: z.array(VehicleSchema).meta({
      description:
        'Every rail vehicle position on the requested lines (all lines without `line`), whatever the page; the other ' +
        'filters apply to arrivals. Trains whose feed gives no coordinates are placed at their stop ' +
        '(`position_source: stop`).',
    }),
    freshness: z.object({ sources: z.array(SourceFreshnessSchema) }),
    meta: PageMetaSchema,
    links: LinksSchema,
  })
  .meta({ id: 'RailRealtime' });

export const RouteSummarySchema = z
  .object({
    route_id: z.string().nullable(),
    vehicles: z.number().int(),
    mean_delay_s: z.number().nullable().meta({ description: 'Mean over vehicles with a known delay.' }),
    newest_position_at: timestamp('Most recent position on the route.'),
    oldest_position_at: timestamp('Oldest position on the route.'),
    newest_age_s: z.number().int(),
    oldest_age_s: z.number().int(),
  })
  .meta({ id: 'RouteSummary' });

export const RouteFreshnessSchema = z
  .object({
    route_id: z.string().nullable(),
    freshness: FreshnessSchema.meta({ description: "Freshness of the route's newest position." }),
    fresh: z.number().int(),
    stale: z.number().int(),
    expired: z.number().int(),
  })
  .meta({ id: 'RouteFreshness' });

export const VehicleRealtimeSchema = z
  .object({
    data: z.array(VehicleSchema),
    summaries: z.object({ routes: z.array(RouteSummarySchema) }).meta({
      description: 'Over every vehicle matching the filters, not only this page.',
    }),
    freshness: z.object({ sources: z.array(SourceFreshnessSchema), routes: z.array(RouteFreshnessSchema) }),
    meta: PageMetaSchema,
    links: LinksSchema,
  })
  .meta({ id: 'VehicleRealtime' });

const routeFields = {
  short_name: z.string().nullable(),
  long_name: z.string().nullable(),
  color: z.string().nullable().meta({ description: 'Hex colour without #, from the schedule.' }),
  text_color: z.string().nullable(),
  route_type: z.number().int().meta({ description: 'GTFS route_type.' }),
  schedule: z.string().meta({
    description: 'Id of the schedule (`schedules[].id`, one GTFS feed) the route comes from: which agency it is.',
  }),
  agency_name: z.string().nullable().meta({
    description: "The route's agency (agency.txt), or its schedule's when the route names none.",
  }),
};

export const RailLineSchema = z
  .object({
    line: z.string().meta({ description: `Rail line id. ${SERVED_ID}` }),
    ...routeFields,
    stations: z.array(
      z.object({ station_id: z.string().meta({ description: SERVED_ID }), name: z.string().nullable() }),
    ),
    links: z.object({ realtime: z.string(), alerts: z.string(), reliability: z.string() }),
  })
  .meta({ id: 'RailLine' });

export const ReliabilitySnapshotSchema = z
  .object({
    from: z.string().meta({ format: 'date' }),
    to: z.string().meta({ format: 'date' }),
    scheduled: z.number().int(),
    canceled: z.number().int(),
    partially_canceled: z.number().int(),
    unobserved: z.number().int(),
    delivered: z.number().int(),
    delivered_pct: z
      .number()
      .nullable()
      .meta({ description: 'delivered / scheduled × 100; null when nothing was scheduled.' }),
    observed: z.number().int().meta({
      description: 'Scheduled trips seen by any feed (running or canceled): scheduled - unobserved.',
    }),
    delivered_pct_of_observed: z
      .number()
      .nullable()
      .meta({
        description:
          'delivered / observed × 100: the share of the trips seen that ran; null when no scheduled trip was seen. ' +
          'When more than half the scheduled trips are unobserved, delivered_pct measures missing data more than ' +
          'missing service.',
      }),
  })
  .meta({ id: 'ReliabilitySnapshot', description: 'The last seven finalized service days.' });

export const BusRouteSchema = z
  .object({
    route_id: z.string().meta({ description: `Bus route id. ${SERVED_ID}` }),
    ...routeFields,
    reliability: ReliabilitySnapshotSchema.nullable().meta({
      description: 'Null until the route has finalized service days.',
    }),
    links: z.object({ realtime: z.string(), alerts: z.string(), reliability: z.string() }),
  })
  .meta({ id: 'BusRoute' });

export const StreetcarRouteSchema = z
  .object({
    route_id: z.string().meta({ description: `Streetcar route id. ${SERVED_ID}` }),
    ...routeFields,
    active_alerts: z.number().int().meta({ description: 'Alerts currently active on the route.' }),
    links: z.object({ alerts: z.string(), realtime: z.string(), reliability: z.string() }),
  })
  .meta({ id: 'StreetcarRoute' });

const directoryMeta = z.object({ count: z.number().int(), schedules: z.array(z.string()) });

export const RailDirectorySchema = z
  .object({ data: z.array(RailLineSchema), meta: directoryMeta })
  .meta({ id: 'RailDirectory' });
export const BusDirectorySchema = z
  .object({ data: z.array(BusRouteSchema), meta: directoryMeta })
  .meta({ id: 'BusDirectory' });
export const StreetcarDirectorySchema = z
  .object({ data: z.array(StreetcarRouteSchema), meta: directoryMeta })
  .meta({ id: 'StreetcarDirectory' });

export type ApiReliabilitySnapshot = z.input<typeof ReliabilitySnapshotSchema>;
export type ApiPageMeta = z.input<typeof PageMetaSchema>;
export type ApiLinks = z.input<typeof LinksSchema>;
