// The OpenAPI 3.1 document, generated from the route table and the error registry only.
import { z } from 'zod';
import {
  createDocument,
  type CreateDocumentOptions,
  type ZodOpenApiOperationObject,
  type ZodOpenApiResponseObject,
  type ZodOpenApiResponsesObject,
} from 'zod-openapi';
import { stringify } from 'yaml';
import { ERRORS, problemType, type ErrorCode } from '../core/errors.ts';
import { fullQuerySchema } from '../http/compile.ts';
import { UNKNOWN_IDS_RULE } from '../http/known-ids.ts';
import { addResponseExamples } from './openapi-examples.ts';
import { addStreamEventSchemas, eventWebhooks, streamEventComponents } from './openapi-events.ts';
import { API_VERSION } from '../http/headers.ts';
import { DEFAULT_PAGE_SIZE, PLAN_LIMITS, PLANS, WINDOW_MS, WINDOW_RULE } from '../accounts/plans.ts';
import type { RouteDef } from '../http/types.ts';

const ERROR_CODES = Object.keys(ERRORS) as [ErrorCode, ...ErrorCode[]];

export const ProblemSchema = z
  .object({
    type: z.string().meta({ description: 'URI of the problem type.', example: problemType('invalid_parameter') }),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    instance: z.string().meta({ description: 'The request path.' }),
    code: z.enum(ERROR_CODES).meta({ description: 'Stable machine-readable code from the error registry.' }),
    request_id: z.string().meta({ description: 'Quote it when reporting a problem; it is also in X-Request-Id.' }),
    errors: z
      .array(z.object({ parameter: z.string(), detail: z.string() }))
      .optional()
      .meta({ description: 'Each offending parameter, query name or body field.' }),
    'violated-policies': z
      .array(z.string())
      .optional()
      .meta({ description: 'On 429: the rate-limit policies exceeded.' }),
  })
  .loose()
  .meta({ id: 'Problem', description: 'RFC 9457 problem details.' });

// registered once under components.headers and referenced from every response
const h = (description: string, example?: string, id?: string) =>
  z.string().meta({
    description,
    ...(example ? { example } : {}),
    ...(id ? { header: { id } } : {}),
  });

const commonHeaders = {
  'X-API-Version': h('Version of the API that answered.', API_VERSION, 'X-API-Version'),
  'X-Request-Id': h('Id of this request, also in problem bodies.', undefined, 'X-Request-Id'),
};
const meterHeader = {
  'X-Meter-Unit': h('Billing unit charged for the call: `request` or `connection-minute`.', 'request', 'X-Meter-Unit'),
};
const rateHeaders = {
  'X-RateLimit-Policy': h("The key's policy: quota;w=window seconds.", '600;w=300', 'X-RateLimit-Policy'),
  'RateLimit-Policy': h('IETF RateLimit policy.', '"5m";q=600;w=300', 'RateLimit-Policy'),
  RateLimit: h('IETF RateLimit: remaining requests and seconds until one frees up.', '"5m";r=599;t=300', 'RateLimit'),
  'X-RateLimit-Limit': h('Requests allowed in the sliding window.', '600', 'X-RateLimit-Limit'),
  'X-RateLimit-Remaining': h('Requests left in the window.', '599', 'X-RateLimit-Remaining'),
  'X-RateLimit-Reset': h(
    'Epoch seconds when the oldest counted request leaves the window.',
    undefined,
    'X-RateLimit-Reset',
  ),
};

const WWW_AUTHENTICATE = h('Bearer challenge.', 'Bearer realm="transit-api"', 'WWW-Authenticate');
const RETRY_AFTER = h('Seconds to wait before retrying.', '42', 'Retry-After');
const ETAG = h(
  'Entity tag of this representation (each content coding has its own); send it back as If-None-Match.',
  undefined,
  'ETag',
);
// bodies of 1 KiB or more come in the coding Accept-Encoding asks for: gzip or br (q-values honoured)
const CODED_HEADERS = {
  'Content-Encoding': h(
    '`br` or `gzip` when Accept-Encoding asks for it and the body is 1 KiB or more; absent: identity.',
    'br',
    'Content-Encoding',
  ).optional(),
  Vary: h(
    '`Accept-Encoding` on bodies of 1 KiB or more: the coding follows that request header.',
    'Accept-Encoding',
    'Vary',
  ).optional(),
};

/** Rate-limit headers exist once a key is known: not on 401, and not promised on 500. */
function headersFor(def: RouteDef, extra: Record<string, z.ZodType> = {}, status = 200): z.ZodObject {
  return z.object({
    ...commonHeaders,
    ...(def.meter ? meterHeader : {}),
    ...(def.auth === 'key' && status !== 401 && status < 500 ? rateHeaders : {}),
    ...extra,
  });
}

function errorResponse(def: RouteDef, status: number, codes: ErrorCode[], extra: Record<string, z.ZodType> = {}) {
  return {
    description: codes.map((c) => `\`${c}\`: ${ERRORS[c].title}`).join('; '),
    headers: headersFor(def, extra, status),
    content: { 'application/problem+json': { schema: ProblemSchema } },
  };
}

function possibleErrors(def: RouteDef): ErrorCode[] {
  const codes = new Set<ErrorCode>(['invalid_parameter', 'internal']);
  if (def.auth === 'key') codes.add('unauthorized').add('rate_limited');
  if (def.paginated) codes.add('invalid_cursor').add('limit_exceeds_plan');
  if (def.plan || def.testKeys === false || def.sse || def.stream) codes.add('forbidden_plan');
  if (def.sse) codes.add('not_acceptable');
  if (def.sse || def.stream) codes.add('sse_allowance_exceeded');
  if (def.body) codes.add('invalid_body').add('payload_too_large').add('unsupported_media_type');
  for (const code of def.errors ?? []) codes.add(code);
  return [...codes];
}

function responses(def: RouteDef): ZodOpenApiResponsesObject {
  const out: Record<string, ZodOpenApiResponseObject> = {};
  // media type keys without parameters (charset), as clients match them
  const type = (def.contentType ?? 'application/json').split(';')[0]!.trim();
  const content: Record<string, { schema: z.ZodType | { type: 'string' } }> = {
    [type]: { schema: type === 'application/json' ? def.response : { type: 'string' } },
  };
  if (def.sse || def.stream) content['text/event-stream'] = { schema: { type: 'string' } };
  if (def.download) return { ...downloadResponses(def), ...errorResponses(def) } as ZodOpenApiResponsesObject;
  const success = String(def.successStatus ?? 200);
  out[success] = {
    description: def.stream ? 'An event stream.' : def.sse ? 'JSON, or an event stream when requested.' : 'Success.',
    headers: headersFor(def, def.cache ? { ETag: ETAG, ...CODED_HEADERS } : {}),
    content,
  };
  if (def.cache) {
    out['304'] = {
      description:
        'Not modified (If-None-Match matched). Not counted against the rate-limit window, and answered even when the window is used up.',
      headers: headersFor(def, { ETag: ETAG, Vary: CODED_HEADERS.Vary }),
    };
  }
  return { ...out, ...errorResponses(def) } as ZodOpenApiResponsesObject;
}

function errorResponses(def: RouteDef): Record<string, ZodOpenApiResponseObject> {
  const out: Record<string, ZodOpenApiResponseObject> = {};
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of possibleErrors(def)) {
    const status = ERRORS[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  for (const [status, codes] of [...byStatus].sort((a, b) => a[0] - b[0])) {
    const extra: Record<string, z.ZodType> = {};
    if (status === 401) extra['WWW-Authenticate'] = WWW_AUTHENTICATE;
    if (status === 429) extra['Retry-After'] = RETRY_AFTER;
    if (status === 416) extra['Content-Range'] = z.string().meta({ description: "`bytes */<size>`: the file's size." });
    out[String(status)] = errorResponse(def, status, codes, extra);
  }
  return out;
}

const FILE_HEADERS: Record<string, z.ZodType> = {
  ETag: z.string().meta({ description: 'Strong validator: the quoted SHA-256 of the file.' }),
  'Repr-Digest': z.string().meta({ description: 'RFC 9530 digest of the whole file: `sha-256=:<base64>:`.' }),
  'Accept-Ranges': z.literal('bytes'),
  'Content-Disposition': z.string().meta({ description: '`attachment` with the file name.' }),
};

/** A file download: binary bodies, a single byte range (206) and revalidation (304). */
function downloadResponses(def: RouteDef): Record<string, ZodOpenApiResponseObject> {
  const binary = Object.fromEntries(
    (def.download?.contentTypes ?? []).map((type) => [type, { schema: { type: 'string' as const, format: 'binary' } }]),
  );
  return {
    200: { description: 'The whole file.', headers: headersFor(def, FILE_HEADERS), content: binary },
    206: {
      description:
        'One byte range of the file (`Range: bytes=first-last`, `bytes=first-` or `bytes=-suffix`; ' +
        '`If-Range` with the ETag makes it conditional). Several ranges in one request get the whole file.',
      headers: headersFor(def, {
        ...FILE_HEADERS,
        'Content-Range': z.string().meta({ description: '`bytes first-last/size`' }),
      }),
      content: binary,
    },
    304: {
      description: 'Not modified (If-None-Match matched the ETag).',
      headers: headersFor(def, { ETag: FILE_HEADERS.ETag! }),
    },
  };
}

function description(def: RouteDef): string {
  const notes: string[] = [];
  if (def.description) notes.push(def.description);
  if (def.plan) notes.push(`Requires the ${def.plan} plan${def.testKeys === false ? ' and a live key' : ''}.`);
  else if (def.testKeys === false) notes.push('Not available to test keys.');
  if (def.meter === 'connection-minute')
    notes.push(
      'Metered per connection-minute; opening (or being refused) a stream also takes one request from the rate-limit window.',
    );
  else if (def.meter) notes.push(`Metered per ${def.meter}.`);
  else if (def.auth === 'key')
    notes.push(
      'Needs a key; not metered, and not counted against the rate limit window (the RateLimit headers show it).',
    );
  else notes.push('Public: no key, not metered.');
  if (def.paginated)
    notes.push('Cursor pagination: follow `links.next` (or pass `meta.next_cursor` as `cursor`) until it is null.');
  if (def.sse) {
    notes.push(
      'Also an event stream with `Accept: text/event-stream` or `format=sse`: `reset` carrying this body, then ' +
        '`add`/`update`/`remove` as the result changes (`add` and `update` carry an item of `data` with its `type`, `remove` ' +
        "its `{id, type}`; each event's schema is in `x-sse-events`). Resume with `Last-Event-ID` (or " +
        '`last_event_id`); an id the stream no longer holds gets `reset` and `Last-Event-ID: earliest`. The stream (only ' +
        'the stream) also takes the key as `api_key` in the query, for EventSource. Allowance, ' +
        'connection-minute metering and limits as on `/api/v1/events/stream`; the request that opens (or is refused) ' +
        'the stream takes one request from the rate-limit window.',
    );
  }
  return notes.join('\n\n');
}

function operation(def: RouteDef): ZodOpenApiOperationObject {
  const query = fullQuerySchema(def);
  const op: ZodOpenApiOperationObject = {
    operationId: def.id,
    summary: def.summary,
    description: description(def),
    tags: [...def.tags],
    // apiKeyQuery only where every answer is a stream: a security requirement covers the whole
    // operation, and the JSON representation of an SSE-capable route refuses ?api_key= (401)
    security: def.auth === 'key' ? (def.stream ? [{ bearerAuth: [] }, { apiKeyQuery: [] }] : [{ bearerAuth: [] }]) : [],
    requestParams: {
      ...(def.params ? { path: def.params } : {}),
      ...(Object.keys(query.shape).length ? { query } : {}),
    },
    responses: responses(def),
  };
  if (def.body) op.requestBody = { required: true, content: { 'application/json': { schema: def.body } } };
  if (def.meter) op['x-meter-unit'] = def.meter;
  if (def.plan) op['x-plan'] = def.plan;
  return op;
}

const INTRO = `Transit alerts, realtime arrivals and vehicle positions, reliability rollups, event streams and webhooks.

**Authentication.** \`Authorization: Bearer <key>\`. Live keys start \`tk_live_\`, test keys \`tk_test_\`; both name a plan and work on every endpoint, and test usage is metered apart. Event streams also accept \`?api_key=\` because browsers' EventSource cannot send headers.

**Plans and limits.** A sliding ${WINDOW_MS / 60_000}-minute window per key:
${PLANS.map((p) => `- ${p}: ${PLAN_LIMITS[p].requests_per_window} requests, ${PLAN_LIMITS[p].sse_streams} concurrent event streams, \`limit\` up to ${PLAN_LIMITS[p].max_page_size}`).join('\n')}

Every response to a request with a valid key carries \`X-RateLimit-Policy\`, \`RateLimit-Policy\`, \`RateLimit\` and \`X-RateLimit-Limit/-Remaining/-Reset\`, errors and 404s included; every response carries \`X-API-Version\` and \`X-Request-Id\`, and metered ones \`X-Meter-Unit\`. Over the limit: 429 with \`Retry-After\`.

**What counts.** ${WINDOW_RULE}

**Unknown ids.** ${UNKNOWN_IDS_RULE}

**Pagination.** \`limit\` (default ${DEFAULT_PAGE_SIZE}) and an opaque \`cursor\`; responses have \`data\`, \`meta.next_cursor\` and \`links.next\`. Cursors are keyset positions: pages never repeat or skip rows while data changes.

**Errors.** RFC 9457 \`application/problem+json\` with a stable \`code\`:
${ERROR_CODES.map((c) => `- \`${c}\` (${ERRORS[c].status}): ${ERRORS[c].title}`).join('\n')}
Unknown query parameters and bad values are 400 \`invalid_parameter\` naming each parameter in \`errors\`.`;

export interface OpenApiOptions {
  /** server URL in the document; '/' keeps it relative to wherever it is served */
  serverUrl?: string;
}

/**
 * Every tag, in the order the document lists them (and their paths). A tag missing here is listed
 * after these without a description, which the document's lint test reports.
 */
export const TAGS: ReadonlyArray<{ name: string; description: string }> = [
  { name: 'Rail', description: 'Rail lines, their stations, realtime arrivals with delay summaries, and rail alerts.' },
  { name: 'Bus', description: 'Bus routes, vehicle positions and bus alerts.' },
  { name: 'Streetcar', description: 'Streetcar routes, vehicle positions and streetcar alerts.' },
  {
    name: 'Realtime',
    description: 'Live arrivals and vehicle positions from the GTFS Realtime feeds, with their freshness.',
  },
  {
    name: 'Alerts',
    description: 'Service alerts of every mode, current and recently resolved, with filters and cursor pagination.',
  },
  {
    name: 'Directories',
    description: 'The routes and lines of the imported schedules, with links to their resources.',
  },
  { name: 'Reliability', description: 'Scheduled versus delivered trips per route or line, by day, week or period.' },
  {
    name: 'Performance',
    description:
      'How each route or line ran, from its stop events: on time, headways and bunching, excess wait, travel and dwell times, prediction accuracy.',
  },
  {
    name: 'Events',
    description: 'The persistent server-sent event stream of domain events (the types webhooks deliver).',
  },
  { name: 'Webhooks', description: 'Signed webhook endpoints (Standard Webhooks), redelivery and the delivery audit.' },
  { name: 'Account', description: "The calling key's plan, limits, window and usage; not metered." },
  {
    name: 'History exports',
    description: 'Daily Parquet and NDJSON files of the history (Max plan, live keys), with signed download links.',
  },
  { name: 'Status', description: 'The public status page and its figures.' },
  { name: 'Dashboard', description: 'The developer dashboard page.' },
  { name: 'Documentation', description: 'This document, the rendered reference and the guides for language models.' },
];

const METHOD_ORDER = ['get', 'put', 'post', 'patch', 'delete'];

/**
 * Paths and tags in one canonical order, whatever order the route table was assembled in: the
 * served document is byte for byte the committed one.
 */
function canonicalOrder(routes: readonly RouteDef[]): {
  tags: Array<{ name: string; description?: string }>;
  routes: RouteDef[];
} {
  const used = new Set(routes.flatMap((r) => r.tags));
  const known = TAGS.filter((t) => used.has(t.name));
  const extra = [...used]
    .filter((name) => !TAGS.some((t) => t.name === name))
    .sort()
    .map((name) => ({ name }));
  const tags = [...known, ...extra];
  const rank = (def: RouteDef) => {
    const i = tags.findIndex((t) => t.name === def.tags[0]);
    return i < 0 ? tags.length : i;
  };
  const firstOf = new Map<string, RouteDef>();
  for (const def of routes) {
    const current = firstOf.get(def.path);
    if (!current || METHOD_ORDER.indexOf(def.method.toLowerCase()) < METHOD_ORDER.indexOf(current.method.toLowerCase()))
      firstOf.set(def.path, def);
  }
  const sorted = [...routes].sort(
    (a, b) =>
      rank(firstOf.get(a.path)!) - rank(firstOf.get(b.path)!) ||
      (a.path < b.path ? -1 : a.path > b.path ? 1 : 0) ||
      METHOD_ORDER.indexOf(a.method.toLowerCase()) - METHOD_ORDER.indexOf(b.method.toLowerCase()),
  );
  return { tags, routes: sorted };
}

const SCHEMA_OPTIONS: CreateDocumentOptions = {
  // z.number().int() renders the safe-integer range as bounds: noise for readers and clients
  override: ({ jsonSchema }) => {
    if (jsonSchema.minimum === Number.MIN_SAFE_INTEGER) delete jsonSchema.minimum;
    if (jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete jsonSchema.maximum;
  },
};

export function buildOpenApi(routes: readonly RouteDef[], options: OpenApiOptions = {}): Record<string, unknown> {
  const ordered = canonicalOrder(routes);
  const paths: Record<string, Record<string, ZodOpenApiOperationObject>> = {};
  for (const def of ordered.routes) {
    paths[def.path] ??= {};
    paths[def.path]![def.method.toLowerCase()] = operation(def);
  }
  const tags = ordered.tags;
  const doc = createDocument(
    {
      openapi: '3.1.0',
      info: {
        title: 'Transit API',
        version: API_VERSION,
        description: INTRO,
        license: { name: 'Apache 2.0', url: 'https://www.apache.org/licenses/LICENSE-2.0' },
      },
      servers: [{ url: options.serverUrl ?? '/' }],
      tags,
      paths,
      webhooks: eventWebhooks(),
      components: {
        schemas: streamEventComponents(ordered.routes),
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', description: 'tk_live_… or tk_test_… key.' },
          apiKeyQuery: {
            type: 'apiKey',
            in: 'query',
            name: 'api_key',
            description:
              "Event streams only (browsers' EventSource cannot send headers): declared on `/api/v1/events/stream`, and " +
              'accepted by the event-stream representation of alert, realtime and reliability endpoints (`format=sse` or ' +
              '`Accept: text/event-stream`). A JSON request with `api_key` and no Authorization header is 401 `unauthorized`.',
          },
        },
      },
    },
    SCHEMA_OPTIONS,
  );
  const plain = JSON.parse(JSON.stringify(doc)) as Record<string, unknown>;
  addStreamEventSchemas(plain, ordered.routes, SCHEMA_OPTIONS);
  addResponseExamples(plain);
  return plain;
}

export function toYaml(doc: Record<string, unknown>): string {
  return stringify(doc, { lineWidth: 0 });
}
