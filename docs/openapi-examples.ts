// Response examples for the OpenAPI document, built from the document's own schemas (which come
// from the routes' zod schemas): a field's `example` where the schema gives one, otherwise the
// first enum value, the format's or type's smallest valid value. The tests validate every example
// against its schema, so an example cannot drift from the shape it illustrates.
import { ERRORS, problemType, type ErrorCode } from '../core/errors.ts';

type Json = Record<string, unknown>;

const DATE_TIME = '2024-05-01T17:45:21.000Z';
const DATE = '2024-05-01';

/**
 * Values of the demo network (`serve --demo`) for the fields every body shares, used where the
 * field's schema gives no example of its own; each is validated against its schema by the tests.
 */
const DEMO_VALUES: Readonly<Record<string, unknown>> = {
  source: 'demo-trip-updates',
  feed_id: 'demo-trip-updates',
  route_id: '12',
  route: '12',
  line: 'RED',
  line_id: 'RED',
  trip_id: 'RED_wk_0_0815',
  vehicle_id: '9004',
  station_id: 'S_CITY_HALL',
  next_station_id: 'S_CITY_HALL',
  stop_id: 'S_CITY_HALL_RED_0',
  station_name: 'City Hall',
  short_name: 'RED',
  long_name: 'Red Line',
  color: 'D32F2F',
  text_color: 'FFFFFF',
  headsign: 'Lakeshore',
  lat: 41.8812,
  lon: -87.6278,
  bearing: 92,
  speed_mps: 8.4,
  delay_s: 120,
  age_s: 12,
  current_status: 'IN_TRANSIT_TO',
  severity: 'warning',
  entity_id: 'alert-17',
  header: { en: 'Red Line delays of up to 10 minutes' },
  description: { en: 'A signal problem near City Hall slows trains in both directions.' },
  url: {},
  routes: ['RED'],
  stations: ['S_CITY_HALL'],
  trips: [],
  modes: ['rail'],
  last_error: null,
  severity_level: 'warning',
  next: null,
  next_cursor: null,
  limit: 20,
  total: 1,
  version: 1,
  timezone: 'America/Chicago',
  url_template: '/api/v1/rail/RED/realtime',
  description_text: 'A signal problem near City Hall.',
  message_id: 'msg_Qm9vC3d5aGVyZQ',
  endpoint_id: 'ep_Qm9vC3d5aGVyZQ',
  event_type: 'alert.created',
  request_id: 'req_3f9a1c0d2b',
};

function resolve(doc: Json, ref: string): Json | undefined {
  if (!ref.startsWith('#/')) return undefined;
  let target: unknown = doc;
  for (const part of ref.slice(2).split('/'))
    target = (target as Json | undefined)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  return target as Json | undefined;
}

/**
 * A small JSON Schema check (types, enums, required, patterns, bounds): enough to reject a demo value of another
 * shape.
 */
function fits(doc: Json, schema: unknown, value: unknown, depth = 0): boolean {
  if (!schema || typeof schema !== 'object' || depth > 12) return true;
  const s = schema as Json;
  if (typeof s.$ref === 'string') return fits(doc, resolve(doc, s.$ref), value, depth + 1);
  if (s.const !== undefined && s.const !== value) return false;
  if (Array.isArray(s.enum) && !s.enum.includes(value)) return false;
  const alternatives = (s.anyOf ?? s.oneOf) as unknown[] | undefined;
  if (Array.isArray(alternatives) && !alternatives.some((a) => fits(doc, a, value, depth + 1))) return false;
  if (s.type !== undefined) {
    const types = Array.isArray(s.type) ? (s.type as string[]) : [s.type as string];
    const actual = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
    const ok = types.some(
      (t) => t === actual || (t === 'integer' && Number.isInteger(value)) || (t === 'number' && actual === 'number'),
    );
    if (!ok) return false;
  }
  if (typeof value === 'string' && typeof s.pattern === 'string' && !new RegExp(s.pattern, 'u').test(value))
    return false;
  if (
    typeof value === 'number' &&
    ((typeof s.minimum === 'number' && value < s.minimum) || (typeof s.maximum === 'number' && value > s.maximum))
  )
    return false;
  if (Array.isArray(value)) return value.every((v) => fits(doc, s.items, v, depth + 1));
  if (value && typeof value === 'object') {
    const v = value as Json;
    if (Array.isArray(s.required) && !s.required.every((r) => r in v)) return false;
    const props = (s.properties ?? {}) as Json;
    return Object.entries(v).every(([k, x]) =>
      k in props
        ? fits(doc, props[k], x, depth + 1)
        : s.additionalProperties === false
          ? false
          : fits(doc, s.additionalProperties, x, depth + 1),
    );
  }
  return true;
}

function hasOwnExample(doc: Json, schema: unknown, depth = 0): boolean {
  if (!schema || typeof schema !== 'object' || depth > 8) return false;
  const s = schema as Json;
  if (s.example !== undefined || Array.isArray(s.examples) || s.const !== undefined || Array.isArray(s.enum))
    return true;
  if (typeof s.$ref === 'string') return hasOwnExample(doc, resolve(doc, s.$ref), depth + 1);
  const alternatives = (s.anyOf ?? s.oneOf) as unknown[] | undefined;
  return Array.isArray(alternatives) && alternatives.some((a) => hasOwnExample(doc, a, depth + 1));
}

/** A value valid against `schema` (a JSON Schema 2020-12 object of `doc`). */
export function exampleOf(
  doc: Json,
  schema: unknown,
  seen: readonly string[] = [],
  name = 'string',
  values: Readonly<Record<string, unknown>> = DEMO_VALUES,
): unknown {
  if (!schema || typeof schema !== 'object') return null;
  const s = schema as Json;
  if (s.example !== undefined) return s.example;
  if (Array.isArray(s.examples) && s.examples.length > 0) return s.examples[0];
  if (typeof s.$ref === 'string') {
    // a schema that contains itself: stop at the second visit (an empty list or null ends it)
    if (seen.includes(s.$ref)) return null;
    return exampleOf(doc, resolve(doc, s.$ref), [...seen, s.$ref], name, values);
  }
  if (s.const !== undefined) return s.const;
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0];
  if (s.default !== undefined) return s.default;
  const alternatives = (s.anyOf ?? s.oneOf) as unknown[] | undefined;
  if (Array.isArray(alternatives)) {
    const chosen = alternatives.find((a) => (a as Json).type !== 'null') ?? alternatives[0];
    return exampleOf(doc, chosen, seen, name, values);
  }
  if (Array.isArray(s.allOf)) {
    return Object.assign({}, ...s.allOf.map((part) => exampleOf(doc, part, seen, name, values) as Json));
  }
  const types = Array.isArray(s.type) ? (s.type as string[]) : [s.type as string | undefined];
  const type = types.find((t) => t !== 'null') ?? types[0] ?? (s.properties ? 'object' : undefined);
  switch (type) {
    case 'object': {
      const out: Json = {};
      for (const [name, prop] of Object.entries((s.properties ?? {}) as Json)) {
        const own = exampleOf(doc, prop, seen, name, values);
        const demo = values[name];
        out[name] = hasOwnExample(doc, prop) || demo === undefined || !fits(doc, prop, demo) ? own : demo;
      }
      const extra = s.additionalProperties;
      if (!s.properties && extra && typeof extra === 'object')
        out[String(exampleOf(doc, s.propertyNames, seen, 'en', values) ?? 'en')] = exampleOf(
          doc,
          extra,
          seen,
          name,
          values,
        );
      return out;
    }
    case 'array': {
      const count = Math.max(1, Number(s.minItems ?? 1));
      if (s.maxItems === 0) return [];
      return Array.from({ length: count }, () => exampleOf(doc, s.items, seen, name, values));
    }
    case 'string': {
      if (s.format === 'date-time') return DATE_TIME;
      if (s.format === 'date') return DATE;
      if (s.format === 'uri' || s.format === 'url') return 'https://transit.example.org/';
      if (s.format === 'binary') return '';
      // a field without an example shows its own name: a placeholder that says what goes there
      return name.padEnd(Number(s.minLength ?? 1), '_');
    }
    case 'integer':
    case 'number': {
      if (typeof s.minimum === 'number') return s.minimum;
      if (typeof s.exclusiveMinimum === 'number')
        return type === 'integer' ? Math.floor(s.exclusiveMinimum) + 1 : s.exclusiveMinimum + 1;
      return typeof s.maximum === 'number' && s.maximum < 0 ? s.maximum : 0;
    }
    case 'boolean':
      return true;
    case 'null':
      return null;
    default:
      return null;
  }
}

/** The problem document the server would send for `code` on `path`. */
export function problemExample(code: ErrorCode, path: string): Json {
  const example: Json = {
    type: problemType(code),
    title: ERRORS[code].title,
    status: ERRORS[code].status,
    detail: PROBLEM_DETAILS[code] ?? ERRORS[code].title,
    instance: path,
    code,
    request_id: 'req_3f9a1c0d2b',
  };
  if (code === 'invalid_parameter') example.errors = [{ parameter: 'limit', detail: 'must be a whole number' }];
  if (code === 'rate_limited') example['violated-policies'] = ['5m'];
  return example;
}

const PROBLEM_DETAILS: Partial<Record<ErrorCode, string>> = {
  invalid_parameter: 'limit: must be a whole number',
  unauthorized: 'This endpoint needs an API key: send Authorization: Bearer <key>.',
  rate_limited: "This key's regular plan allows 600 requests per 5 minutes; retry after the window moves on.",
  not_found: 'Unknown route "999" for bus.',
  internal: 'The server failed to handle this request; it has been logged under the request_id.',
};

const SSE_EXAMPLE = 'retry: 3000\n\nid: 1041\nevent: reset\ndata: {"data":[]}\n\n: ping 1041\n\n';
const EVENTS_EXAMPLE =
  'retry: 3000\n\nid: 1042\nevent: feed.recovered\ndata: ' +
  '{"version":1,"id":"evt_4kq0n2c1b7a9x3","type":"feed.recovered","timestamp":"2024-05-01T17:45:21.000Z",' +
  '"modes":["rail"],"routes":[],"lines":["RED"],"data":{"source":"demo-trip-updates","kind":"gtfs-rt",' +
  '"freshness":"fresh","header_timestamp":"2024-05-01T17:45:20.000Z","last_poll_at":"2024-05-01T17:45:21.000Z",' +
  '"last_success_at":"2024-05-01T17:45:21.000Z","last_status":"ok","last_error":null,' +
  '"previous_freshness":"stale"}}\n\n';
const TEXT_EXAMPLES: Record<string, string> = {
  'text/html': '<!doctype html>\n<html lang="en">…</html>',
  'application/yaml': 'openapi: 3.1.0\ninfo:\n  title: Transit API\n…',
  'text/plain': '# Transit API\n\n> …',
};

/**
 * Adds an `example` to every response media type that has none and is not binary: JSON bodies
 * from their schema, problem bodies for the response's first code, a short text otherwise.
 */
export function addResponseExamples(doc: Json): void {
  for (const [path, item] of Object.entries((doc.paths ?? {}) as Json)) {
    for (const op of Object.values(item as Json)) {
      for (const response of Object.values(((op as Json).responses ?? {}) as Json)) {
        const r = response as Json;
        for (const [type, media] of Object.entries((r.content ?? {}) as Json)) {
          const m = media as Json;
          if (m.example !== undefined || m.examples !== undefined) continue;
          const schema = (m.schema ?? {}) as Json;
          if (schema.format === 'binary') continue;
          if (type === 'application/problem+json') {
            const code = /`([a-z_]+)`/.exec(String(r.description ?? ''))?.[1] as ErrorCode | undefined;
            if (code && code in ERRORS) m.example = problemExample(code, path);
          } else if (type === 'application/json') {
            // links of a page point at the operation's own path
            m.example = exampleOf(doc, schema, [], 'body', { ...DEMO_VALUES, self: `${path}?limit=20` });
          } else if (type === 'text/event-stream') {
            // stream-only and metered: /api/v1/events/stream; the others are SSE forms of a list
            const streamOnly = Object.keys((r.content ?? {}) as Json).length === 1;
            m.example =
              streamOnly && (op as Json)['x-meter-unit'] === 'connection-minute' ? EVENTS_EXAMPLE : SSE_EXAMPLE;
          } else if (TEXT_EXAMPLES[type] !== undefined) {
            m.example = TEXT_EXAMPLES[type];
          }
        }
      }
    }
  }
}
