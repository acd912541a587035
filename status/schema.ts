// The status document: what GET /status.json returns and what the page renders. Each named
// schema becomes an OpenAPI component, so clients can read the status programmatically.
import { z } from 'zod';
import 'zod-openapi';
import { FRESHNESS, MODES, POLL_STATUSES, STOP_EVENT_ANOMALIES, type StopEventAnomaly } from '../core/types.ts';
import { ComponentStateSchema, type ComponentState } from './component-state.ts';
import { EdgeHealthSchema, NodeStatusSchema } from './node-schema.ts';

const ANOMALY_HELP: Record<StopEventAnomaly, string> = {
  vehicle_backwards: 'A vehicle reported at or before a stop it had left.',
  prediction_backwards: 'A trip update time before a time already known of the trip.',
  trip_vanished: 'A trip unseen for history.trip_timeout_s before its last stop.',
  vehicles_on_one_trip: 'A second vehicle on a trip another vehicle is following.',
  stop_not_on_trip: "A stop named that is not on the trip's stops.",
  times_out_of_order: 'Vehicle reports giving a negative dwell or travel time (left unknown).',
};

export {
  COMPONENT_STATES,
  ComponentStateSchema,
  type ComponentState,
  type KnownState,
} from './component-state.ts';

const ts = (description: string) =>
  z.string().meta({ description, format: 'date-time', example: '2024-05-01T17:45:21.000Z' });
const tsOrNull = (description: string) => z.string().nullable().meta({ description, format: 'date-time' });
const count = (description: string) => z.number().int().nonnegative().meta({ description });
const msOrNull = (description: string) => z.number().nonnegative().nullable().meta({ description });

const reason = z.string().meta({
  description: 'Why the component is in this state, in words.',
  example: 'last poll failed: timeout after 10 s',
});

export const SparklineSchema = z
  .object({
    start: ts('Start of the first minute.'),
    step_s: z.number().int().positive().meta({ description: 'Length of one bucket in seconds (60).' }),
    polls: z.array(z.number().int().nonnegative()).meta({ description: 'Polls per minute, oldest first.' }),
    failures: z.array(z.number().int().nonnegative()).meta({ description: 'Failed polls per minute.' }),
    entities: z
      .array(z.number().int().nonnegative().nullable())
      .meta({ description: 'Entities of the last successful poll of each minute; null when none succeeded.' }),
  })
  .meta({ id: 'StatusSparkline', description: 'The last hour of one feed, minute by minute.' });

export const FeedRuleFindingsSchema = z
  .object({
    rule: z.string().meta({
      description:
        "Rule id: E… and W… as MobilityData's gtfs-realtime-validator numbers them, T… this service's own " +
        '(docs/guides/feed-quality.md).',
      example: 'E022',
    }),
    severity: z.enum(['error', 'warning']),
    title: z.string(),
    count_1h: count('Findings in the bodies polled in the last hour.'),
    example_entity_id: z
      .string()
      .nullable()
      .meta({ description: 'The entity of the most recent finding; null when it is about the header or the body.' }),
    last_seen_at: ts('The last body the rule fired in.'),
    firing: z.boolean().meta({ description: 'Still firing: it fired in one of the last 3 bodies checked.' }),
    unusable: z.boolean().meta({
      description:
        "The rule makes the feed's data unusable: the feed is `degraded` while its last body has a finding of it.",
    }),
  })
  .meta({ id: 'FeedRuleFindings', description: 'One feed rule that fired for the feed in the last hour.' });

export const FeedStatusSchema = z
  .object({
    feed_id: z.string(),
    kind: z.enum(['gtfs-rt', 'alerts-json']),
    interval_s: z.number().positive().meta({ description: 'Configured poll interval.' }),
    state: ComponentStateSchema,
    reason,
    last_poll_at: tsOrNull('When the last poll finished.'),
    last_poll_status: z.enum(POLL_STATUSES).nullable().meta({ description: 'Outcome of the last poll.' }),
    last_success_at: tsOrNull('Last poll that succeeded (a new body, or 304 unchanged).'),
    header_timestamp: tsOrNull('The feed header timestamp of the newest body.'),
    header_age_s: z
      .number()
      .nullable()
      .meta({ description: 'Age of that header timestamp when the document was made.' }),
    freshness: z.enum(FRESHNESS),
    entities: count('Entities in the last poll that delivered a body.'),
    schedule_match: z
      .object({
        trips: count('Trips of its trip updates and vehicles looked up in the static schedule.'),
        matched: count('Trips found in the schedule.'),
        unmatched: count('Trips not found.'),
        ambiguous: count('Trips that several scheduled trips fitted equally: none was chosen.'),
        loose: count(
          'Of the matched, trips given the nearest earlier scheduled trip (nyct_loose: an NYCT train running up to ' +
            'an hour behind the published timetable).',
        ),
        rate: z.number().min(0).max(1).meta({ description: 'matched / trips.' }),
      })
      .nullable()
      .meta({
        id: 'ScheduleMatch',
        description: 'Trip matching of the last usable snapshot; null before one, or when it looked up no trip.',
      }),
    stop_events: z
      .object({
        written: count('Stop events its polls wrote since the service started.'),
        anomalies: z
          .object(
            Object.fromEntries(STOP_EVENT_ANOMALIES.map((kind) => [kind, count(ANOMALY_HELP[kind])])) as Record<
              StopEventAnomaly,
              ReturnType<typeof count>
            >,
          )
          .meta({
            description: 'Misbehaviour met while following its trips since the start, by kind (store/SCHEMA.md).',
          }),
      })
      .nullable()
      .meta({
        id: 'FeedStopEvents',
        description: 'Stop events of trips this feed reports; null for a feed that follows no trip (alerts).',
      }),
    consecutive_failures: count('Failed polls since the last success.'),
    polls_1h: count('Polls in the last hour.'),
    failures_1h: count('Failed polls in the last hour.'),
    error_rate_1h: z
      .number()
      .min(0)
      .max(1)
      .nullable()
      .meta({ description: 'failures_1h / polls_1h; null without polls.' }),
    last_error: z.string().nullable().meta({ description: 'The most recent failure reason, kept after recovery.' }),
    last_error_at: tsOrNull('When that failure happened.'),
    findings: z.array(FeedRuleFindingsSchema).meta({
      description:
        'Feed rules that fired in the last hour, most findings first; empty when none did (or for alerts-json feeds, ' +
        'which are not checked).',
    }),
    sparkline: SparklineSchema,
  })
  .meta({ id: 'FeedStatus' });

const perMode = (description: string) =>
  z
    .object(Object.fromEntries(MODES.map((m) => [m, count(`${m}`)])) as Record<(typeof MODES)[number], z.ZodNumber>)
    .meta({ description });

export const AlertSourceSchema = z
  .object({
    feed_id: z.string(),
    state: ComponentStateSchema,
    last_success_at: tsOrNull('Last successful poll of this source.'),
    alerts: count('Alerts from this source that are active or upcoming.'),
  })
  .meta({ id: 'AlertSourceStatus' });

export const AlertIngestionSchema = z
  .object({
    state: ComponentStateSchema,
    reason,
    active_by_mode: perMode('Active alerts per mode (an alert for two modes counts in both).'),
    upcoming_by_mode: perMode('Alerts whose active period has not started yet, per mode.'),
    last_change_at: tsOrNull('Last time an alert was created, updated or resolved.'),
    sources: z.array(AlertSourceSchema).meta({ description: 'Feeds that deliver alerts.' }),
  })
  .meta({ id: 'AlertIngestionStatus' });

export const ApiWindowSchema = z
  .object({
    minutes: z
      .number()
      .positive()
      .meta({ description: 'Span the figures cover: the window, or less since the start.' }),
    requests: count('API requests answered (event streams excluded).'),
    requests_per_minute: z.number().nonnegative(),
    server_errors: count('Answers with status 5xx.'),
    error_rate: z
      .number()
      .min(0)
      .max(1)
      .nullable()
      .meta({ description: 'server_errors / requests; null without requests.' }),
    client_errors: count('Answers with status 4xx (bad keys, bad parameters, rate limits).'),
    p50_ms: msOrNull('Median latency; null without requests.'),
    p99_ms: msOrNull('99th percentile latency; null without requests.'),
  })
  .meta({ id: 'ApiWindowFigures' });

export const WebhookOutboxSchema = z
  .object({
    depth: count('Deliveries waiting: pending or retrying.').nullable(),
    oldest_pending_at: tsOrNull('Creation time of the oldest waiting delivery.'),
    oldest_pending_age_s: z.number().nonnegative().nullable(),
    as_of: tsOrNull('When these figures were read from the store; null before the first read.'),
  })
  .meta({ id: 'WebhookOutboxStatus' });

export const ApiStatusSchema = z
  .object({
    state: ComponentStateSchema,
    reason,
    last_5m: ApiWindowSchema,
    last_60m: ApiWindowSchema,
    open_streams: count('Open API event streams (status page viewers excluded).'),
    webhooks: WebhookOutboxSchema,
  })
  .meta({ id: 'ApiStatus' });

export const ScheduleStatusSchema = z
  .object({
    schedule_id: z.string(),
    state: ComponentStateSchema,
    reason,
    version_id: z
      .number()
      .int()
      .nullable()
      .meta({ description: 'The version serving now (each import is one); null before the first import.' }),
    feed_version: z.string().nullable().meta({ description: "feed_info.txt's feed_version of that version." }),
    imported_at: tsOrNull('When that version was imported.'),
    service_start_date: z
      .string()
      .nullable()
      .meta({ format: 'date', description: 'First day the version schedules service.' }),
    service_end_date: z
      .string()
      .nullable()
      .meta({ format: 'date', description: 'Last day the version schedules service: trips after it are unscheduled.' }),
    trips: count('Trips in the version.'),
    refresh_cron: z
      .string()
      .meta({ description: 'When the source is checked again (cron, agency time zone).', example: '41 3 * * *' }),
    last_check_at: tsOrNull('Last time the source was fetched (or answered 304).'),
    last_check_outcome: z
      .enum(['imported', 'unchanged', 'not_modified', 'failed'])
      .nullable()
      .meta({
        description:
          '`imported` (a new version swapped in), `unchanged` (same SHA-256), `not_modified` (HTTP 304) or `failed` ' +
          '(the version in place keeps serving).',
      }),
    last_error: z.string().nullable().meta({ description: 'The most recent failed import, kept after recovery.' }),
    last_error_at: tsOrNull('When it failed.'),
    consecutive_failures: count('Failed checks since the last good one.'),
  })
  .meta({
    id: 'ScheduleStatus',
    description: 'One static schedule: the version in use and the last check of its source.',
  });

export const IncidentSchema = z
  .object({
    component: z.string().meta({ description: '`feed:<feed_id>`, `alerts` or `api`.', example: 'feed:bus-vehicles' }),
    name: z.string(),
    state: ComponentStateSchema.meta({ description: 'The worst state reached.' }),
    started_at: ts('First change away from operational.'),
    ended_at: tsOrNull('Return to operational; null while ongoing.'),
    reason: z.string().meta({ description: 'Reason of the first change.' }),
    changes: count('State changes during the incident (flapping shows as many).'),
  })
  .meta({ id: 'Incident' });

export const ComponentDaySchema = z
  .object({
    date: z.string().meta({ description: 'UTC date.', example: '2024-05-01' }),
    state: ComponentStateSchema.nullable().meta({
      description: 'Worst state of the day; null before the first record.',
    }),
    degraded_s: z.number().nonnegative(),
    down_s: z.number().nonnegative(),
  })
  .meta({ id: 'ComponentDay' });

export const ComponentHistorySchema = z
  .object({
    component: z.string(),
    name: z.string(),
    days: z.array(ComponentDaySchema).meta({ description: 'Oldest first, today last.' }),
  })
  .meta({ id: 'ComponentHistory' });

export const StatusDocumentSchema = z
  .object({
    generated_at: ts('When these figures were computed (they are refreshed twice a second).'),
    started_at: ts('When this server started.'),
    state: ComponentStateSchema.meta({ description: 'The worst state of all components.' }),
    summary: z.string().meta({ example: 'All systems operational' }),
    feeds: z.array(FeedStatusSchema),
    alerts: AlertIngestionSchema,
    api: ApiStatusSchema,
    schedules: z
      .array(ScheduleStatusSchema)
      .meta({ description: 'Static schedules, refreshed on their refresh_cron.' }),
    node: NodeStatusSchema.nullable().meta({
      description:
        'The node that answered, in a deploy of several (broker.url set); null in one process. An edge ' +
        'answers its own.',
    }),
    edges: z.array(EdgeHealthSchema).meta({
      description:
        "On the ingest node: every edge's health, from the heartbeats they publish through the broker (an edge that " +
        'stopped cleanly leaves the list; one silent for 10 minutes too). Empty elsewhere.',
    }),
    history: z.object({
      days: z.number().int().positive(),
      components: z.array(ComponentHistorySchema),
      incidents: z.array(IncidentSchema).meta({ description: 'Newest first; at most 50.' }),
      incidents_total: count('Incidents in the window, including those not listed.'),
    }),
  })
  .meta({
    id: 'StatusDocument',
    description:
      'Live operational status of the realtime feeds, alert ingestion, the public API and the static schedules.',
  });

export type FeedStatus = z.infer<typeof FeedStatusSchema>;
export type FeedRuleFindings = z.infer<typeof FeedRuleFindingsSchema>;
export type AlertIngestion = z.infer<typeof AlertIngestionSchema>;
export type ApiStatus = z.infer<typeof ApiStatusSchema>;
export type ApiWindow = z.infer<typeof ApiWindowSchema>;
export type WebhookOutbox = z.infer<typeof WebhookOutboxSchema>;
export type Incident = z.infer<typeof IncidentSchema>;
export type ScheduleStatus = z.infer<typeof ScheduleStatusSchema>;
export type ComponentHistory = z.infer<typeof ComponentHistorySchema>;
export type StatusDocument = z.infer<typeof StatusDocumentSchema>;
export type Sparkline = z.infer<typeof SparklineSchema>;
export type { EdgeHealth, NodeStatus } from './node-schema.ts';

const RANK: Record<ComponentState, number> = { operational: 0, unknown: 1, degraded: 2, down: 3 };

/** The worse of two states; unknown only beats operational. */
export function worse(a: ComponentState, b: ComponentState): ComponentState {
  return RANK[b] > RANK[a] ? b : a;
}
