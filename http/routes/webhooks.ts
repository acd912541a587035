// The webhook API: a key's endpoints (register, list, update, disable, delete, rotate the secret,
// redeliver) and its delivery audit. Every call is scoped by the calling key inside the webhooks
// component, so another key's ids answer 404 exactly like ids that never existed.
import { z } from 'zod';
import { ApiError } from '../../core/errors.ts';
import { EVENT_TYPES } from '../../core/events.ts';
import {
  DELIVERY_STATES,
  DeliverySchema,
  EndpointCreateSchema,
  EndpointListSchema,
  EndpointSchema,
  EndpointUpdateSchema,
  EndpointWithSecretSchema,
  RedeliverSchema,
  type Webhooks,
} from '../../webhooks/index.ts';
import { stringKey, type CursorValue } from '../cursor.ts';
import type { HeaderList } from '../headers.ts';
import { enumParam, idValue } from '../params.ts';
import { defineRoute } from '../route.ts';
import { Reply, type RequestContext, type RouteDef } from '../types.ts';
import { PREFIX } from './deps.ts';
import { cursorPageSchema } from './schemas.ts';

const BASE = `${PREFIX}/webhooks`;
const TAGS = ['Webhooks'];
const JSON_TYPE = 'application/json';
// a response carrying a signing secret must not be kept by any cache on the way
const NO_STORE: HeaderList = [['Cache-Control', 'no-store']];

const endpointParams = z.object({
  endpoint_id: idValue('Webhook endpoint id, as returned at registration.', 'ep_3q2XyH1f0bK9mR7tWcZ4'),
});
const deliveryParams = z.object({
  delivery_id: idValue('Delivery id from the delivery audit.', 'dlv_9bT2nE5kL1pQ8sV4xY7a'),
});

export const EndpointDeletedSchema = z
  .object({
    id: z.string(),
    deleted: z.literal(true),
  })
  .meta({ id: 'WebhookEndpointDeleted' });

export const DeliveryListPageSchema = cursorPageSchema(
  DeliverySchema,
  'WebhookDeliveryListPage',
  'WebhookDeliveryPageMeta',
);

function keyId(ctx: Pick<RequestContext, 'key'>): string {
  // auth: 'key' routes never reach a handler without one; guard against a table mistake
  if (!ctx.key) throw new Error('webhook route reached without an authenticated key');
  return ctx.key.id;
}

/** The target check names no parameter of its own; the body field at fault is always `url`. */
async function naming<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (err) {
    if (err instanceof ApiError && err.code === 'unsafe_target' && !err.extra.errors) {
      throw new ApiError('unsafe_target', err.detail, {
        errors: [{ parameter: 'url', detail: err.detail.replace(/^url: /, '') }],
      });
    }
    throw err;
  }
}

function json(status: number, body: unknown, headers: HeaderList = []): Reply {
  return new Reply(status, JSON_TYPE, JSON.stringify(body), headers);
}

/**
 * The audit's keyset position travels in the API's one signed cursor (bound to this route and
 * its filters, like every list, and signed with signing_secret so it survives a restart), beside
 * the key that listed it: another key's cursor is refused.
 */
function afterPosition(after: readonly CursorValue[] | null, keyId: string): string | undefined {
  if (after === null) return undefined;
  const [owner, position] = stringKey(after, 2) as [string, string];
  if (owner !== keyId) {
    throw new ApiError('invalid_cursor', 'the cursor belongs to another key', {
      errors: [{ parameter: 'cursor', detail: 'the cursor belongs to another key' }],
    });
  }
  return position;
}

function endpointRoutes(webhooks: Webhooks): RouteDef[] {
  const create = defineRoute({
    id: 'createWebhookEndpoint',
    method: 'POST',
    path: `${BASE}/endpoints`,
    summary: 'Register a webhook endpoint',
    description:
      'Registers an http(s) target for the calling key, with optional filters by mode, route or line, and event ' +
      'type. The response is the only one that shows the signing secret (`whsec_…`): store it. Deliveries follow ' +
      'Standard Webhooks: headers `webhook-id`, `webhook-timestamp`, `webhook-signature` (`v1,` + base64 HMAC-SHA256 ' +
      'of `id.timestamp.body`), body `{type, timestamp, data}`. Targets resolving to private, loopback, link-local ' +
      'or metadata addresses are refused with 400 `unsafe_target`. A key holds at most 100 endpoints (409 ' +
      '`conflict` beyond).',
    tags: TAGS,
    auth: 'key',
    meter: 'request',
    successStatus: 201,
    errors: ['unsafe_target', 'conflict'],
    body: EndpointCreateSchema,
    response: EndpointWithSecretSchema,
    async handler(ctx) {
      const created = await naming(webhooks.createEndpoint(keyId(ctx), ctx.body));
      return json(201, created, [...NO_STORE, ['Location', `${ctx.url()}/${encodeURIComponent(created.id)}`]]);
    },
  });

  const list = defineRoute({
    id: 'listWebhookEndpoints',
    method: 'GET',
    path: `${BASE}/endpoints`,
    summary: 'List webhook endpoints',
    description:
      'Every endpoint of the calling key, oldest first, disabled ones included. Secrets are never shown here.',
    tags: TAGS,
    auth: 'key',
    meter: 'request',
    response: EndpointListSchema,
    async handler(ctx) {
      return { data: await webhooks.listEndpoints(keyId(ctx)) };
    },
  });

  const get = defineRoute({
    id: 'getWebhookEndpoint',
    method: 'GET',
    path: `${BASE}/endpoints/{endpoint_id}`,
    summary: 'Get a webhook endpoint',
    tags: TAGS,
    auth: 'key',
    meter: 'request',
    errors: ['not_found'],
    params: endpointParams,
    response: EndpointSchema,
    handler: (ctx) => webhooks.getEndpoint(keyId(ctx), ctx.params.endpoint_id),
  });

  const update = defineRoute({
    id: 'updateWebhookEndpoint',
    method: 'PATCH',
    path: `${BASE}/endpoints/{endpoint_id}`,
    summary: 'Update a webhook endpoint',
    description:
      'Changes the URL (checked like at registration), description, filters (replaced as a whole) or `enabled`. ' +
      'Disabling fails the deliveries still queued; re-enabling clears the failure history.',
    tags: TAGS,
    auth: 'key',
    meter: 'request',
    errors: ['not_found', 'unsafe_target'],
    params: endpointParams,
    body: EndpointUpdateSchema,
    response: EndpointSchema,
    handler: (ctx) => naming(webhooks.updateEndpoint(keyId(ctx), ctx.params.endpoint_id, ctx.body)),
  });

  const remove = defineRoute({
    id: 'deleteWebhookEndpoint',
    method: 'DELETE',
    path: `${BASE}/endpoints/{endpoint_id}`,
    summary: 'Delete a webhook endpoint',
    description:
      'Stops all deliveries to the endpoint and erases its secret. Its deliveries stay in the audit until ' +
      'retention removes them.',
    tags: TAGS,
    auth: 'key',
    meter: 'request',
    errors: ['not_found'],
    params: endpointParams,
    response: EndpointDeletedSchema,
    async handler(ctx) {
      await webhooks.deleteEndpoint(keyId(ctx), ctx.params.endpoint_id);
      return { id: ctx.params.endpoint_id, deleted: true as const };
    },
  });

  const disable = defineRoute({
    id: 'disableWebhookEndpoint',
    method: 'POST',
    path: `${BASE}/endpoints/{endpoint_id}/disable`,
    summary: 'Disable a webhook endpoint',
    description:
      'Same as PATCH with `{"enabled": false}`: nothing more is sent and queued deliveries fail. Enable it ' +
      'again with PATCH.',
    tags: TAGS,
    auth: 'key',
    meter: 'request',
    errors: ['not_found'],
    params: endpointParams,
    response: EndpointSchema,
    handler: (ctx) => webhooks.disableEndpoint(keyId(ctx), ctx.params.endpoint_id),
  });

  const rotate = defineRoute({
    id: 'rotateWebhookSecret',
    method: 'POST',
    path: `${BASE}/endpoints/{endpoint_id}/rotate-secret`,
    summary: 'Rotate the signing secret',
    description:
      'Returns a new secret, shown only here. For the next 24 hours (`previous_secret_expires_at`) every delivery ' +
      'carries two signatures, one per secret, so receivers can switch without losing a message.',
    tags: TAGS,
    auth: 'key',
    meter: 'request',
    errors: ['not_found'],
    params: endpointParams,
    response: EndpointWithSecretSchema,
    async handler(ctx) {
      return json(200, await webhooks.rotateSecret(keyId(ctx), ctx.params.endpoint_id), NO_STORE);
    },
  });

  const redeliver = defineRoute({
    id: 'redeliverWebhookMessage',
    method: 'POST',
    path: `${BASE}/endpoints/{endpoint_id}/redeliver`,
    summary: 'Redeliver a message',
    description:
      'Queues a message this endpoint was sent before for one more delivery, with the same `webhook-id`, and answers ' +
      'with the new delivery. 409 `conflict` when the endpoint is disabled.',
    tags: TAGS,
    auth: 'key',
    meter: 'request',
    successStatus: 202,
    errors: ['not_found', 'conflict'],
    params: endpointParams,
    body: RedeliverSchema,
    response: DeliverySchema,
    handler: (ctx) => webhooks.redeliver(keyId(ctx), ctx.params.endpoint_id, ctx.body.message_id),
  });

  return [create, list, get, update, remove, disable, rotate, redeliver];
}

function deliveryRoutes(webhooks: Webhooks): RouteDef[] {
  const list = defineRoute({
    id: 'listWebhookDeliveries',
    method: 'GET',
    path: `${BASE}/deliveries`,
    summary: 'Webhook delivery audit',
    description:
      "The calling key's deliveries, newest first, each with its state (`pending` → `succeeded` | `retrying` → … → " +
      '`succeeded` | `failed`), next attempt time and every attempt (time, status code, latency, error). Deliveries ' +
      'of deleted endpoints stay listed until retention removes them.',
    tags: TAGS,
    auth: 'key',
    meter: 'request',
    paginated: true,
    query: z.object({
      endpoint_id: idValue('Only deliveries to this endpoint.', 'ep_3q2XyH1f0bK9mR7tWcZ4').optional(),
      state: enumParam(DELIVERY_STATES, 'Only deliveries in this state.').optional(),
      event_type: enumParam(EVENT_TYPES, 'Only deliveries of this event type.').optional(),
    }),
    response: DeliveryListPageSchema,
    async handler(ctx) {
      const page = ctx.page;
      if (!page) throw new Error('listWebhookDeliveries must be declared paginated');
      const { endpoint_id, state, event_type } = ctx.query;
      const owner = keyId(ctx);
      const after = afterPosition(page.after, owner);
      const found = await webhooks.listDeliveries(owner, {
        limit: page.limit,
        ...(endpoint_id !== undefined ? { endpoint_id } : {}),
        ...(state !== undefined ? { state } : {}),
        ...(event_type !== undefined ? { event_type } : {}),
        ...(after !== undefined ? { after } : {}),
      });
      const next = found.next_after === null ? null : page.cursorFor([owner, found.next_after]);
      return {
        data: found.data,
        meta: { limit: page.limit, next_cursor: next },
        links: { self: ctx.url(), next: next === null ? null : ctx.url({ cursor: next }) },
      };
    },
  });

  const get = defineRoute({
    id: 'getWebhookDelivery',
    method: 'GET',
    path: `${BASE}/deliveries/{delivery_id}`,
    summary: 'One webhook delivery with its attempts',
    tags: TAGS,
    auth: 'key',
    meter: 'request',
    errors: ['not_found'],
    params: deliveryParams,
    response: DeliverySchema,
    handler: (ctx) => webhooks.getDelivery(keyId(ctx), ctx.params.delivery_id),
  });

  return [list, get];
}

/** The `/api/v1/webhooks` table, for createApi({ routes }). */
export function webhookRoutes(webhooks: Webhooks): RouteDef[] {
  return [...endpointRoutes(webhooks), ...deliveryRoutes(webhooks)];
}
