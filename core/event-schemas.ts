// Every domain event, defined once: a versioned envelope around per-type data, discriminated on
// `type`. The event stream sends it as the `data:` of each SSE message, webhooks as the signed
// body; the OpenAPI document (webhooks, the stream's event schemas), the docs page and
// llms-full.txt are generated from these schemas, and producers are typed against them.
import { z } from 'zod';
import 'zod-openapi';
import {
  alertFields,
  arrivalFields,
  ModeSchema,
  SERVED_ID,
  SourceFreshnessSchema,
  timestamp,
  TripRelationshipSchema,
  vehicleFields,
} from './api-shapes.ts';
import { EXPORT_DATASETS, EXPORT_FORMATS, FRESHNESS } from './types.ts';

/** Bumped when a field of the envelope or of any event's data changes incompatibly. */
export const EVENT_VERSION = 1;

export const EventAlertSchema = z.object(alertFields).meta({
  id: 'EventAlert',
  description: 'The alert as `GET /api/v1/alerts` shows it, without `freshness` (a property of the response time).',
});

export const EventVehicleSchema = z.object(vehicleFields).meta({
  id: 'EventVehicle',
  description:
    'The vehicle as `GET /api/v1/{mode}/realtime` shows it, without `age_s`, `freshness` (response time) and ' +
    '`delay_s` (joined from trip updates at response time).',
});

export const EventArrivalSchema = z.object(arrivalFields).meta({
  id: 'EventArrival',
  description:
    'A predicted stop as `GET /api/v1/rail/realtime` shows it, without `station_name` (joined from the schedule) and ' +
    '`freshness` (response time). `line` is null on bus and streetcar trips.',
});

const tripScope = {
  mode: ModeSchema.nullable().meta({ description: 'Null when neither the feed nor the schedule tells.' }),
  route_id: z
    .string()
    .nullable()
    .meta({ description: `Bus or streetcar route id; null on rail trips (see \`line\`). ${SERVED_ID}` }),
  line: z
    .string()
    .nullable()
    .meta({ description: `Rail line id; null on bus and streetcar trips (see \`route_id\`). ${SERVED_ID}` }),
};

export const ArrivalUpdateSchema = z
  .object({
    source: z.string().meta({ description: 'Feed id.' }),
    trip_id: z.string(),
    trip_instance: arrivalFields.trip_instance,
    ...tripScope,
    direction_id: z.number().int().nullable(),
    service_date: z.string().nullable().meta({ format: 'date' }),
    trip_relationship: TripRelationshipSchema,
    partial: z.boolean().meta({
      description: "false when `arrivals` is the trip's whole list (first sight of the trip, or every stop changed).",
    }),
    stop_count: z.number().int().meta({ description: 'Stops the trip now predicts.' }),
    arrivals: z
      .array(EventArrivalSchema)
      .meta({ description: 'New or changed rows; merge by `(stop_sequence, stop_id)`.' }),
    removed_stops: z
      .array(z.object({ stop_id: z.string(), stop_sequence: z.number().int().nullable() }))
      .meta({ description: 'Stops no longer predicted.' }),
  })
  .meta({ id: 'ArrivalUpdate' });

export const TripCancellationSchema = z
  .object({
    source: z.string().meta({ description: 'Feed id.' }),
    trip_id: z.string(),
    service_date: z.string().meta({ format: 'date' }),
    ...tripScope,
    trip_relationship: z.enum(['canceled', 'deleted']),
    in_schedule: z.boolean(),
    observed_at: timestamp('When the poll that saw it ran.'),
  })
  .meta({ id: 'TripCancellation' });

export const FeedFreshnessChangeSchema = z
  .object({
    ...SourceFreshnessSchema.shape,
    previous_freshness: z.enum(FRESHNESS).meta({ description: "The feed's freshness before this change." }),
  })
  .meta({
    id: 'FeedFreshnessChange',
    description: 'The feed as `freshness.sources` lists it, and its previous freshness.',
  });

export const FeedRuleChangeSchema = z
  .object({
    source: z.string().meta({ description: 'Feed id.' }),
    rule: z.string().meta({
      description:
        "Rule id: E… and W… as MobilityData's gtfs-realtime-validator numbers them, T… this service's own " +
        '(docs/guides/feed-quality.md).',
      example: 'E022',
    }),
    severity: z.enum(['error', 'warning']),
    title: z
      .string()
      .meta({ description: "The rule's title.", example: 'Sequential stop_time_update times are not increasing' }),
    unusable: z.boolean().meta({
      description:
        "A finding of this rule makes the feed's data unusable: the feed shows `degraded` on /status while its last " +
        'snapshot has one.',
    }),
    firing: z.boolean().meta({ description: 'true on `feed.rule_firing`, false on `feed.rule_cleared`.' }),
    findings: z
      .number()
      .int()
      .nonnegative()
      .meta({ description: 'Findings in the snapshot that started the rule firing; 0 when it stops.' }),
    example_entity_id: z.string().nullable().meta({
      description:
        'An entity of the most recent finding (FeedEntity id); null when the finding is about the header or the body.',
    }),
    since: timestamp('When the rule started firing for the feed.'),
    last_seen_at: timestamp('The last snapshot the rule fired in.'),
  })
  .meta({
    id: 'FeedRuleChange',
    description: 'A feed rule that started or stopped firing for a feed, and what it means.',
  });

export const ReliabilityUpdateSchema = z
  .object({
    service_date: z.string().meta({ format: 'date' }),
    final: z.literal(true).meta({ description: 'The day is over and its figures will not change.' }),
    trips: z
      .number()
      .int()
      .meta({ description: 'Trips stored for the day (scheduled trips plus trips seen outside the schedule).' }),
    routes: z.array(
      z.object({
        mode: ModeSchema.nullable(),
        route_id: z
          .string()
          .nullable()
          .meta({
            description:
              'Bus or streetcar route id, or rail line id (as in the reliability endpoints); null for trips seen ' +
              'without a route.',
          }),
        scheduled: z.number().int(),
        delivered: z.number().int(),
        canceled: z.number().int(),
        unobserved: z.number().int().meta({ description: 'Scheduled trips never seen by any feed that day.' }),
        observed: z
          .number()
          .int()
          .meta({
            description:
              'Scheduled trips seen by any feed (scheduled - unobserved). Fewer than half of `scheduled`: the ' +
              'figures measure missing data more than missing service.',
          }),
      }),
    ),
  })
  .meta({ id: 'ReliabilityUpdate' });

const exportFields = {
  id: z.string().meta({ description: 'The export file id, as `GET /api/v1/history/exports` lists it.' }),
  dataset: z.enum(EXPORT_DATASETS),
  part: z.string(),
  service_date: z.string().meta({ format: 'date' }),
  format: z.enum(EXPORT_FORMATS),
};

export const ExportReadySchema = z
  .object({
    ...exportFields,
    rows: z.number().int().nullable(),
    bytes: z.number().int().nullable(),
    sha256: z.string().nullable(),
    created_at: z.string().nullable().meta({ description: 'When the file was completed.' }),
  })
  .meta({ id: 'ExportReady' });

export const ExportFailedSchema = z
  .object({
    ...exportFields,
    error: z.string().nullable(),
    attempts: z.number().int(),
  })
  .meta({ id: 'ExportFailed' });

/** Each event type: its data and what it announces. Order is the documents' order. */
export const EVENT_DATA = {
  'alert.created': { data: EventAlertSchema, description: 'An alert appeared in a feed.' },
  'alert.updated': {
    data: EventAlertSchema,
    description: 'An alert changed (content, or status upcoming → active); `version` increments.',
  },
  'alert.resolved': {
    data: EventAlertSchema,
    description: 'An alert left its feed, its active period ended, or its feed was removed.',
  },
  'vehicle.position': { data: EventVehicleSchema, description: 'A vehicle reported a new position (or changed trip).' },
  'arrival.updated': {
    data: ArrivalUpdateSchema,
    description: "A trip's predictions changed: its new or changed stops, and the stops it no longer predicts.",
  },
  'trip.canceled': {
    data: TripCancellationSchema,
    description: 'A trip is canceled or deleted (announced once per trip and service date).',
  },
  'feed.stale': { data: FeedFreshnessChangeSchema, description: 'A feed became `stale` or `expired`.' },
  'feed.recovered': { data: FeedFreshnessChangeSchema, description: 'A stale or expired feed is `fresh` again.' },
  'feed.rule_firing': {
    data: FeedRuleChangeSchema,
    description:
      'A feed rule fired in a snapshot of a feed where it was not firing (GTFS-Realtime validator rules, ' +
      'checked on every poll).',
  },
  'feed.rule_cleared': {
    data: FeedRuleChangeSchema,
    description: 'A feed rule that was firing found nothing in 3 snapshots of the feed in a row.',
  },
  'reliability.updated': {
    data: ReliabilityUpdateSchema,
    description: 'A service day was finalized: its scheduled, delivered and canceled trips per route.',
  },
  'export.ready': { data: ExportReadySchema, description: 'A history export file is ready to download.' },
  'export.failed': { data: ExportFailedSchema, description: 'A history export file failed.' },
} as const;

export type EventType = keyof typeof EVENT_DATA;
export const EVENT_TYPES = Object.keys(EVENT_DATA) as [EventType, ...EventType[]];

export type EventData<K extends EventType> = z.output<(typeof EVENT_DATA)[K]['data']>;

function envelope<K extends EventType>(type: K) {
  const { data, description } = EVENT_DATA[type];
  return z
    .object({
      version: z.literal(EVENT_VERSION).meta({ description: 'Version of the envelope and data shapes.' }),
      id: z.string().meta({
        description:
          'Unique id of the event, the same on the stream and in webhooks (where it is also the `webhook-id`). ' +
          "Not the stream's resume id (the SSE `id:` line).",
        example: 'evt_4kq0n2c1b7a9x3',
      }),
      type: z.literal(type),
      timestamp: timestamp('When the service observed the change.'),
      modes: z.array(ModeSchema).meta({ description: 'Modes the event concerns (empty: service-wide).' }),
      routes: z
        .array(z.string())
        .meta({ description: 'Bus and streetcar route ids the event concerns (the `route` filter).' }),
      lines: z.array(z.string()).meta({ description: 'Rail line ids the event concerns (the `line` filter).' }),
      data,
    })
    .meta({ id: `Event.${type}`, description });
}

export const EVENT_SCHEMAS = Object.fromEntries(EVENT_TYPES.map((type) => [type, envelope(type)])) as {
  [K in EventType]: ReturnType<typeof envelope<K>>;
};

/** Any event, as sent on the stream and to webhooks. */
export const EventSchema = z
  .discriminatedUnion(
    'type',
    EVENT_TYPES.map((t) => EVENT_SCHEMAS[t]) as unknown as [
      (typeof EVENT_SCHEMAS)[EventType],
      ...Array<(typeof EVENT_SCHEMAS)[EventType]>,
    ],
  )
  .meta({ id: 'Event', description: 'Any event: the envelope, with `data` by `type`.' });

export type EventEnvelope<K extends EventType = EventType> = { [T in K]: z.output<(typeof EVENT_SCHEMAS)[T]> }[K];
