// A route's complete parameter set: its own plus the ones the request chain adds (pagination, event
// stream selection). Validation and OpenAPI both read this, so they cannot disagree.
import { z } from 'zod';
import { DEFAULT_PAGE_SIZE, PLAN_LIMITS } from '../accounts/plans.ts';
import { idKindOf, intParam, type IdKind } from './params.ts';
import type { RouteDef } from './types.ts';

export const limitParam = intParam({
  description:
    `Page size, 1 to the plan's maximum (Free ${PLAN_LIMITS.free.max_page_size}, Regular ` +
    `${PLAN_LIMITS.regular.max_page_size}, Max ${PLAN_LIMITS.max.max_page_size}); above it the answer is ` +
    `400 limit_exceeds_plan, never a silently shorter page. Default ${DEFAULT_PAGE_SIZE}.`,
  min: 1,
  default: DEFAULT_PAGE_SIZE,
}).optional();

export const cursorParam = z
  .string()
  .meta({
    description:
      'Opaque cursor from `meta.next_cursor` of the previous page. It is bound to the endpoint and ' +
      'filters it came from; changing them (except `limit`) or altering it gives 400 invalid_cursor.',
  })
  .optional();

export const formatParam = z
  .enum(['sse'])
  .meta({
    description: 'Selects the event-stream representation (same as `Accept: text/event-stream`).',
  })
  .optional();

export const apiKeyParam = z
  .string()
  .meta({
    description:
      "API key for event streams only (`format=sse` or `Accept: text/event-stream` here), since browsers' " +
      'EventSource cannot send headers. A JSON request must use `Authorization: Bearer`: with only `api_key` it is ' +
      '401 `unauthorized`, with both 400 `invalid_parameter`.',
  })
  .optional();

export const lastEventIdParam = z
  .string()
  .max(200)
  .meta({
    description: 'Resume an event stream after this event id (same as the Last-Event-ID header).',
  })
  .optional();

export interface CompiledRoute {
  readonly def: RouteDef;
  readonly query: z.ZodObject;
  readonly allowedQuery: ReadonlySet<string>;
  /** explanations for names that exist elsewhere (api_key on a JSON request) */
  readonly hints: Readonly<Record<string, string>>;
  /** query names excluded from the cursor scope */
  readonly pagingNames: ReadonlySet<string>;
  /**
   * names that select how a stream of the resource is delivered (format=sse, api_key,
   * last_event_id), only on routes that have them: elsewhere `format` may be a real filter
   */
  readonly streamNames: ReadonlySet<string>;
  /** query parameters naming ids, checked against what the server knows (http/known-ids.ts) */
  readonly idParams: ReadonlyArray<{ readonly name: string; readonly kind: IdKind }>;
}

export function fullQuerySchema(def: RouteDef): z.ZodObject {
  let shape: Record<string, z.ZodType> = { ...(def.query?.shape ?? {}) };
  if (def.paginated) shape = { ...shape, limit: limitParam, cursor: cursorParam };
  if (def.sse) shape = { ...shape, format: formatParam };
  // a public stream takes no key and starts from the current state, so it has neither parameter
  if ((def.sse || def.stream) && def.auth === 'key')
    shape = { ...shape, api_key: apiKeyParam, last_event_id: lastEventIdParam };
  return z.object(shape).strict();
}

export function compileRoute(def: RouteDef): CompiledRoute {
  const query = fullQuerySchema(def);
  const allowedQuery = new Set(Object.keys(query.shape));
  const hints: Record<string, string> = {};
  if (!allowedQuery.has('api_key')) {
    hints.api_key = 'accepted only on event streams; send the key as Authorization: Bearer <key>';
  }
  if (!allowedQuery.has('limit')) hints.limit = 'this endpoint is not paginated';
  if (!allowedQuery.has('cursor')) hints.cursor = 'this endpoint is not paginated';
  if (!allowedQuery.has('format')) hints.format = 'this endpoint has no event-stream representation';
  const streamNames = new Set<string>();
  if (def.sse) streamNames.add('format');
  if (allowedQuery.has('api_key')) streamNames.add('api_key');
  if (allowedQuery.has('last_event_id')) streamNames.add('last_event_id');
  const idParams = Object.entries(query.shape).flatMap(([name, schema]) => {
    const kind = idKindOf(schema as z.ZodType);
    return kind ? [{ name, kind }] : [];
  });
  return {
    def,
    query,
    idParams,
    allowedQuery,
    hints,
    pagingNames: new Set(['limit', 'cursor', ...streamNames]),
    streamNames,
  };
}
