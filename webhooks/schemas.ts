// Request and response contracts of the webhook API, as zod schemas the route table reuses
// for validation and for the OpenAPI document.
import { z } from 'zod';
import { EVENT_TYPES, type EventType } from '../core/events.ts';
import { MODES } from '../core/types.ts';
import { parseTargetUrl } from './ssrf.ts';

/** `cancelled`: never to be attempted again because the endpoint's API key was revoked */
export const DELIVERY_STATES = ['pending', 'retrying', 'succeeded', 'failed', 'cancelled'] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

export const ATTEMPT_OUTCOMES = [
  'in_flight',
  'succeeded',
  'http_error',
  'gone',
  'timeout',
  'network_error',
  'redirect',
  'unsafe_target',
  'interrupted',
] as const;
export type AttemptOutcome = (typeof ATTEMPT_OUTCOMES)[number];

export const DISABLED_REASONS = ['user', 'gone', 'failing', 'deleted', 'key_revoked'] as const;
export type DisabledReason = (typeof DISABLED_REASONS)[number];

/**
 * Event types an endpoint receives when it names none. Per-vehicle and per-arrival events
 * arrive thousands per poll; a client must ask for them by name rather than get a flood.
 */
export const DEFAULT_EVENT_TYPES: readonly EventType[] = EVENT_TYPES.filter(
  (t) => t !== 'vehicle.position' && t !== 'arrival.updated',
);

export const MAX_ENDPOINTS_PER_KEY = 100;

const routeOrLineId = z
  .string()
  .min(1)
  .max(100)
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
  .regex(/^[^\u0000-\u001f\u007f]+$/, 'no control characters');

const targetUrl = z
  .string()
  .min(1)
  .max(2048)
  .superRefine((value, ctx) => {
    try {
      parseTargetUrl(value);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: (err as Error).message.replace(/^url: /, '') });
    }
  })
  .meta({
    description: 'http(s) URL; private, loopback and link-local targets are refused unless the operator allows them',
    example: 'https://example.com/hooks/transit',
  });

export const EndpointFiltersSchema = z
  .object({
    modes: z.array(z.enum(MODES)).min(1).max(MODES.length).optional().meta({
      description: 'Only events concerning these modes. Events that concern no particular mode (exports) pass.',
    }),
    routes: z.array(routeOrLineId).min(1).max(200).optional().meta({
      description: 'Bus or streetcar route ids. Events that concern no particular route (feed-wide, exports) pass.',
    }),
    lines: z
      .array(routeOrLineId)
      .min(1)
      .max(200)
      .optional()
      .meta({ description: 'Rail line ids; combined with `routes` as one "route or line" filter.' }),
    event_types: z
      .array(z.enum(EVENT_TYPES))
      .min(1)
      .max(EVENT_TYPES.length)
      .optional()
      .meta({
        description:
          `Event types to receive. When absent: ${DEFAULT_EVENT_TYPES.join(', ')} (vehicle.position and ` +
          `arrival.updated only when named).`,
      }),
  })
  .strict()
  .meta({ id: 'WebhookEndpointFilters' });
export type EndpointFilters = z.infer<typeof EndpointFiltersSchema>;

export const EndpointCreateSchema = z
  .object({
    url: targetUrl,
    description: z.string().max(500).optional(),
    filters: EndpointFiltersSchema.default({}),
  })
  .strict()
  .meta({ id: 'WebhookEndpointCreate' });
export type EndpointCreate = z.infer<typeof EndpointCreateSchema>;

export const EndpointUpdateSchema = z
  .object({
    url: targetUrl.optional(),
    description: z.string().max(500).nullable().optional(),
    filters: EndpointFiltersSchema.optional().meta({ description: 'replaces the filters as a whole' }),
    enabled: z
      .boolean()
      .optional()
      .meta({ description: 're-enabling clears the failure history; false fails queued deliveries' }),
  })
  .strict()
  .refine((v) => Object.keys(v).length > 0, 'at least one field must be given')
  .meta({ id: 'WebhookEndpointUpdate' });
export type EndpointUpdate = z.infer<typeof EndpointUpdateSchema>;

export const RedeliverSchema = z
  .object({
    message_id: z
      .string()
      .min(1)
      .max(64)
      .meta({ description: 'the webhook-id of a message this endpoint received before' }),
  })
  .strict()
  .meta({ id: 'WebhookRedeliver' });
export type Redeliver = z.infer<typeof RedeliverSchema>;

const isoTime = z.string().meta({ format: 'date-time' });

export const EndpointSchema = z
  .object({
    id: z.string(),
    url: z.string(),
    description: z.string().nullable(),
    filters: EndpointFiltersSchema,
    enabled: z.boolean(),
    disabled_reason: z
      .enum(DISABLED_REASONS)
      .nullable()
      .meta({
        description:
          'user: disabled by its owner; gone: the target answered 410; failing: every attempt failed for 5 days; ' +
          'deleted; key_revoked: the API key was revoked',
      }),
    disabled_at: isoTime.nullable(),
    failing_since: isoTime.nullable(),
    /** when the old secret stops signing after a rotation */
    previous_secret_expires_at: isoTime.nullable(),
    created_at: isoTime,
    updated_at: isoTime,
  })
  .meta({ id: 'WebhookEndpoint' });
export type Endpoint = z.infer<typeof EndpointSchema>;

export const EndpointWithSecretSchema = EndpointSchema.extend({
  secret: z
    .string()
    .meta({ description: 'whsec_…; shown only in this response', example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' }),
}).meta({ id: 'WebhookEndpointWithSecret' });
export type EndpointWithSecret = z.infer<typeof EndpointWithSecretSchema>;

export const EndpointListSchema = z.object({ data: z.array(EndpointSchema) }).meta({ id: 'WebhookEndpointList' });

export const AttemptSchema = z
  .object({
    attempt: z.number().int(),
    started_at: isoTime,
    finished_at: isoTime.nullable(),
    outcome: z.enum(ATTEMPT_OUTCOMES),
    status_code: z.number().int().nullable(),
    latency_ms: z.number().nullable(),
    error: z.string().nullable(),
  })
  .meta({ id: 'WebhookAttempt' });
export type Attempt = z.infer<typeof AttemptSchema>;

export const DeliverySchema = z
  .object({
    id: z.string(),
    endpoint_id: z.string(),
    message_id: z.string().meta({ description: 'the webhook-id header, the same on every attempt' }),
    event_type: z.enum(EVENT_TYPES),
    state: z.enum(DELIVERY_STATES).meta({
      description: 'cancelled: not attempted again because the API key was revoked (the attempts so far are kept)',
    }),
    attempt_count: z.number().int(),
    next_attempt_at: isoTime.nullable(),
    last_status_code: z.number().int().nullable(),
    last_error: z.string().nullable(),
    created_at: isoTime,
    updated_at: isoTime,
    attempts: z.array(AttemptSchema),
  })
  .meta({ id: 'WebhookDelivery' });
export type Delivery = z.infer<typeof DeliverySchema>;

export const DeliveryListQuerySchema = z
  .object({
    endpoint_id: z.string().min(1).max(64).optional(),
    state: z.enum(DELIVERY_STATES).optional(),
    event_type: z.enum(EVENT_TYPES).optional(),
    limit: z.coerce.number().int().min(1).max(1000).default(20),
    cursor: z.string().min(1).max(200).optional(),
  })
  .strict()
  .meta({ id: 'WebhookDeliveryQuery' });
export type DeliveryListQuery = z.input<typeof DeliveryListQuerySchema>;

export const DeliveryPageSchema = z
  .object({
    data: z.array(DeliverySchema),
    /** the position of the page's last delivery, for `after`; null on the last page */
    next_after: z.string().nullable(),
  })
  .meta({ id: 'WebhookDeliveryPage' });
export type DeliveryPage = z.infer<typeof DeliveryPageSchema>;
