// The events in the OpenAPI document, from their one definition (core/event-schemas.ts): a
// `webhooks:` entry per event type (the signed POST a webhook endpoint receives) and, on event
// stream operations, the schema of each SSE event's `data:` by event name (`x-sse-events`;
// OpenAPI 3.1 has no way to type a text/event-stream body item by item): the event stream's
// from its route, the stream form of JSON endpoints (reset/add/update/remove) from their body.
import { z } from 'zod';
import {
  createSchema,
  type CreateDocumentOptions,
  type ZodOpenApiOperationObject,
  type ZodOpenApiPathsObject,
} from 'zod-openapi';
import { EVENT_DATA, EVENT_SCHEMAS, EVENT_TYPES } from '../core/event-schemas.ts';
import { streamKindOf } from '../http/sse-routes.ts';
import type { RouteDef } from '../http/types.ts';

type Json = Record<string, unknown>;

const SIGNATURE_HEADERS = z.object({
  'webhook-id': z.string().meta({
    description: "The event's `id`; the same on every retry of this delivery.",
    example: 'evt_4kq0n2c1b7a9x3',
  }),
  'webhook-timestamp': z
    .string()
    .meta({ description: 'Unix seconds when this attempt was signed.', example: '1714585521' }),
  'webhook-signature': z.string().meta({
    description:
      'Space-separated `v1,<base64 HMAC-SHA256>` of `<webhook-id>.<webhook-timestamp>.<body>` with each of the ' +
      "endpoint's secrets (two while a rotated secret is still honoured). Verify with any Standard Webhooks library.",
    example: 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
  }),
});

const operationIdOf = (type: string) => `${type.replace(/\.(\w)/g, (_, c: string) => c.toUpperCase())}Webhook`;

/** One webhook per event type: what an endpoint subscribed to it receives. */
export function eventWebhooks(): ZodOpenApiPathsObject {
  const out: ZodOpenApiPathsObject = {};
  for (const type of EVENT_TYPES) {
    const operation: ZodOpenApiOperationObject = {
      operationId: operationIdOf(type),
      summary: `${type} event`,
      description:
        `${EVENT_DATA[type].description}\n\nDelivered to endpoints whose \`filters.event_types\` include it, as the ` +
        'event envelope (the same JSON the event stream sends), signed per Standard Webhooks. Answer ' +
        '2xx within 15 s; ' +
        'anything else is retried (immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, with jitter); ' +
        '410 disables the ' +
        'endpoint; `Retry-After` is honoured on 429 and 503.',
      tags: ['Webhooks'],
      security: [],
      requestParams: { header: SIGNATURE_HEADERS },
      requestBody: { required: true, content: { 'application/json': { schema: EVENT_SCHEMAS[type] } } },
      responses: {
        200: { description: 'Received (any 2xx).' },
        410: { description: 'Gone: the endpoint is disabled and receives nothing more.' },
        429: { description: 'Retried, after `Retry-After` when given.' },
      },
    };
    out[type] = { post: operation };
  }
  return out;
}

const idOf = (schema: z.ZodType) => (z.globalRegistry.get(schema) as { id?: string } | undefined)?.id;

function metaId(schema: z.ZodType): string {
  const id = idOf(schema);
  if (!id) throw new Error('an SSE event schema needs a meta id (it is documented as a component)');
  return id;
}

// one set per body schema and item type: routes sharing a body (the alert lists) share components
const jsonStreamSchemas = new WeakMap<z.ZodType, Map<string, Record<string, z.ZodType>>>();

/**
 * The SSE events of a JSON endpoint's stream form (http/sse-routes.ts snapshotOf and stream/item-diff.ts):
 * `reset` carries the endpoint's body; `add` and `update` one element of its `data`, typed with the
 * stream's item type; `remove` that element's `{id, type}`. A body without an identified `data`
 * array is one item, `{type, id, data}`.
 */
export function jsonStreamEvents(def: RouteDef): Readonly<Record<string, z.ZodType>> | undefined {
  if (def.streamEvents || !def.sse) return def.streamEvents;
  const { itemType } = streamKindOf(def);
  const byType = jsonStreamSchemas.get(def.response) ?? new Map<string, Record<string, z.ZodType>>();
  jsonStreamSchemas.set(def.response, byType);
  const known = byType.get(itemType);
  if (known) return known;
  const data = def.response instanceof z.ZodObject ? (def.response.shape as Record<string, z.ZodType>).data : undefined;
  const element =
    data instanceof z.ZodArray && data.element instanceof z.ZodObject && 'id' in data.element.shape
      ? (data.element as z.ZodObject)
      : undefined;
  // named after the element (or body) when that is a component; inline otherwise
  const base = idOf(element ?? def.response);
  const named = (suffix: string) => (base ? { id: `${base}${suffix}` } : {});
  const type = z
    .literal(itemType)
    .meta({ description: "The stream's item type: with `id`, what identifies the item." });
  const item = element
    ? element.extend({ type }).meta({
        ...named('StreamItem'),
        description:
          'One item of `data`, with its `type`: sent as `add` when it enters the result, as `update` when it changes.',
      })
    : z.object({ type, id: z.string().meta({ description: 'The request path.' }), data: data ?? def.response }).meta({
        ...named('StreamItem'),
        description: 'The whole result as one item: sent as `update` when it changes.',
      });
  const removed = z
    .object({
      id: element ? (element.shape as Record<string, z.ZodType>).id! : z.string(),
      type,
    })
    .meta({
      ...named('StreamItemRemoval'),
      description: 'Sent as `remove` when the item with this `id` and `type` leaves the result.',
    });
  const events = { reset: def.response, add: item, update: item, remove: removed };
  byType.set(itemType, events);
  return events;
}

/**
 * The SSE event schemas of stream routes that the webhooks do not already make components (those
 * are request bodies there: registering them again here would add unused output variants).
 */
export function streamEventComponents(routes: readonly RouteDef[]): Record<string, z.ZodType> {
  const webhookBodies = new Set<z.ZodType>(Object.values(EVENT_SCHEMAS));
  const out: Record<string, z.ZodType> = {};
  for (const def of routes) {
    for (const schema of Object.values(def.streamEvents ?? {}))
      if (!webhookBodies.has(schema)) out[metaId(schema)] = schema;
  }
  return out;
}

const STREAM_BODY =
  'A text/event-stream body: messages of `id:`, `event:` (the event name) and `data:` (one line of JSON, ' +
  'whose schema by event name is in `x-sse-events`), separated by blank lines, and `: ping` comments.';

/**
 * Names each SSE event's data schema on the text/event-stream media type of stream routes. The
 * JSON streams' item schemas are rendered here, as responses are (output), and added with the
 * components they use that the document lacks: registered as document components they would also
 * be rendered as inputs, splitting the components they share with responses in two (`…Output`).
 */
export function addStreamEventSchemas(doc: Json, routes: readonly RouteDef[], opts: CreateDocumentOptions = {}): void {
  const components = doc.components as Json;
  components.schemas ??= {};
  const schemas = components.schemas as Json;
  for (const def of routes) {
    const events = jsonStreamEvents(def);
    if (!events) continue;
    const rendered: Json = {};
    for (const [name, schema] of Object.entries(events)) {
      if (def.streamEvents) {
        rendered[name] = { $ref: `#/components/schemas/${metaId(schema)}` };
        continue;
      }
      const { schema: json, components } = createSchema(schema, { io: 'output', opts, openapiVersion: '3.1.0' });
      for (const [id, component] of Object.entries(components)) schemas[id] ??= JSON.parse(JSON.stringify(component));
      rendered[name] = JSON.parse(JSON.stringify(json));
    }
    const op = ((doc.paths as Json)[def.path] as Json | undefined)?.[def.method.toLowerCase()] as Json | undefined;
    for (const response of Object.values((op?.responses ?? {}) as Json)) {
      const media = (((response as Json).content ?? {}) as Json)['text/event-stream'] as Json | undefined;
      if (!media) continue;
      media.schema = streamBodySchema(rendered);
      media['x-sse-events'] = JSON.parse(JSON.stringify(rendered));
    }
  }
}

/**
 * The body as JSON Schema describes text it does not parse: a string whose content
 * (`contentMediaType`) is an event stream, decoded (`contentSchema`) into its messages, each an
 * event name with its `data:` line, the JSON of that event's schema. Annotations only: a
 * validator checks the body is a string, and the document references every item schema from
 * the response that sends it (`x-sse-events` keeps the flat map the docs page reads).
 */
function streamBodySchema(events: Json): Json {
  const message = (name: string, data: unknown): Json => ({
    type: 'object',
    required: ['event', 'data'],
    properties: {
      id: { type: 'string', description: 'The event id to resume from (`Last-Event-ID`).' },
      event: { const: name },
      data: {
        type: 'string',
        contentMediaType: 'application/json',
        contentSchema: JSON.parse(JSON.stringify(data)),
      },
    },
  });
  return {
    type: 'string',
    description: STREAM_BODY,
    contentMediaType: 'text/event-stream',
    contentSchema: {
      type: 'array',
      description: 'The messages of the stream, in order (comments such as `: ping` are not messages).',
      items: { oneOf: Object.entries(events).map(([name, data]) => message(name, data)) },
    },
  };
}
