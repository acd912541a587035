// A flat reading of the events in the OpenAPI document for the docs page and llms-full.txt: the
// envelope, each event type with its data fields (from `webhooks:`, whose bodies are the event
// schemas of core/event-schemas.ts), how the event stream carries them (its `x-sse-events`) and
// how webhooks deliver them (headers, responses, retry policy). Both pages render this model, so
// they list the same fields as the document, and nothing here is written twice.
import { resolve, typeName } from './model.ts';

type Json = Record<string, unknown>;

export interface DocField {
  /** `a.b[].c` for fields of nested objects; `?` when optional */
  name: string;
  type: string;
  description: string;
}

export interface DocEventType {
  type: string;
  /** the html anchor of its section on /docs */
  anchor: string;
  description: string;
  /** the component schema of its envelope (`Event.<type>`) and of its data */
  schema: string;
  dataSchema: string;
  data: DocField[];
}

export interface DocEvents {
  envelope: DocField[];
  types: DocEventType[];
  /** the operation streaming these events, when the document has one */
  stream: { operationId: string; method: string; path: string; reset: DocField[]; resetDescription: string } | null;
  webhooks: { delivery: string; headers: DocField[]; responses: Array<{ status: string; description: string }> };
}

export const eventAnchor = (type: string) => `event-${type.replace(/[^A-Za-z0-9_-]/g, '-')}`;

const componentName = (value: unknown) =>
  String((value as Json | undefined)?.$ref ?? '')
    .split('/')
    .pop() ?? '';

/** A field's type, spelling out an enumeration behind a reference (`"rail" | "bus" | …` rather than `Mode`). */
function fieldType(doc: Json, schemaRef: unknown): string {
  const schema = resolve(doc, schemaRef);
  if (Array.isArray(schema.enum)) return (schema.enum as unknown[]).map((v) => JSON.stringify(v)).join(' | ');
  if (schema.type === 'array') {
    const items = resolve(doc, schema.items);
    if (Array.isArray(items.enum)) return `(${fieldType(doc, schema.items)})[]`;
  }
  return typeName(doc, schemaRef);
}

/**
 * The properties of an object schema, with the fields of inline nested objects (and arrays of them) after their
 * parent.
 */
export function fieldsOf(doc: Json, schemaRef: unknown, prefix = '', depth = 0): DocField[] {
  const schema = resolve(doc, schemaRef);
  const required = new Set((schema.required as string[] | undefined) ?? []);
  const out: DocField[] = [];
  for (const [name, prop] of Object.entries((schema.properties ?? {}) as Json)) {
    const resolved = resolve(doc, prop);
    out.push({
      name: `${prefix}${name}${required.has(name) ? '' : '?'}`,
      type: fieldType(doc, prop),
      description: String(resolved.description ?? '').replace(/\n+/g, ' '),
    });
    if (depth > 1 || (prop as Json).$ref) continue;
    if (resolved.properties) out.push(...fieldsOf(doc, resolved, `${prefix}${name}.`, depth + 1));
    const items = resolved.type === 'array' ? (resolved.items as Json | undefined) : undefined;
    if (items && !items.$ref && items.properties) out.push(...fieldsOf(doc, items, `${prefix}${name}[].`, depth + 1));
  }
  return out;
}

/** The first paragraph of a description (what it says of itself) and the rest (what every webhook shares). */
function paragraphs(text: string): [string, string] {
  const [first = '', ...rest] = text.split(/\n{2,}/);
  return [first, rest.join('\n\n')];
}

export function eventsModel(doc: Json): DocEvents {
  const webhooks = Object.entries((doc.webhooks ?? {}) as Json).map(([type, item]) => ({
    type,
    op: (item as Json).post as Json,
  }));
  const types = webhooks.map(({ type, op }): DocEventType => {
    const bodyRef = (((op.requestBody as Json).content as Json)['application/json'] as Json).schema;
    const envelope = resolve(doc, bodyRef);
    const data = (envelope.properties as Json).data;
    return {
      type,
      anchor: eventAnchor(type),
      description: String(envelope.description ?? paragraphs(String(op.description ?? ''))[0]),
      schema: componentName(bodyRef),
      dataSchema: componentName(data) || 'inline',
      data: fieldsOf(doc, data),
    };
  });
  const first = webhooks[0];
  const envelope = first
    ? fieldsOf(doc, (((first.op.requestBody as Json).content as Json)['application/json'] as Json).schema, '', 2)
        .map((f) =>
          f.name === 'type'
            ? { ...f, type: 'string', description: 'The event type (below); the SSE event name on the stream.' }
            : f,
        )
        .map((f) =>
          f.name === 'data' ? { ...f, type: 'object', description: 'By `type`: the fields each type lists below.' } : f,
        )
    : [];
  const headers = ((first?.op.parameters ?? []) as Json[])
    .filter((p) => p.in === 'header')
    .map((p) => ({
      name: String(p.name),
      type: typeName(doc, p.schema),
      description: String(p.description ?? ''),
    }));
  return {
    envelope,
    types,
    stream: streamOperation(doc, new Set(types.map((t) => t.type))),
    webhooks: {
      delivery: paragraphs(String(first?.op.description ?? ''))[1],
      headers,
      responses: Object.entries((first?.op.responses ?? {}) as Json).map(([status, r]) => ({
        status,
        description: String((r as Json).description ?? ''),
      })),
    },
  };
}

/** The operation whose event stream names the event types (`x-sse-events`), and its `reset` event. */
function streamOperation(doc: Json, types: Set<string>): DocEvents['stream'] {
  for (const [path, item] of Object.entries((doc.paths ?? {}) as Json)) {
    for (const [method, raw] of Object.entries(item as Json)) {
      const op = raw as Json;
      for (const response of Object.values((op.responses ?? {}) as Json)) {
        const events = ((((resolve(doc, response).content ?? {}) as Json)['text/event-stream'] ?? {}) as Json)[
          'x-sse-events'
        ] as Json | undefined;
        if (!events || !Object.keys(events).some((name) => types.has(name))) continue;
        return {
          operationId: String(op.operationId ?? ''),
          method: method.toUpperCase(),
          path,
          reset: events.reset ? fieldsOf(doc, events.reset) : [],
          resetDescription: String(resolve(doc, events.reset).description ?? ''),
        };
      }
    }
  }
  return null;
}

/** The sentences around the generated lists, in the docs' Markdown subset; facts come from the model. */
export function eventsProse(model: DocEvents): { intro: string; stream: string; webhooks: string } {
  const stream = model.stream;
  return {
    intro:
      `${model.types.length} event types. Each is one envelope, \`data\` by \`type\`: the same JSON on ` +
      `the event stream ` +
      'and as a webhook body. Its `id` names the event on both channels (every delivery of it has it ' +
      'as `webhook-id`); ' +
      '`routes` holds bus and streetcar route ids and `lines` rail line ids, as the `route` and `line` ' +
      'filters take them. ' +
      'A change of `version` announces an incompatible change of the shapes.',
    stream: stream
      ? `\`${stream.method} ${stream.path}\` sends each event as one message: \`event:\` its type, ` +
        "`data:` the envelope on one line, `id:` its position in the stream (not the envelope's `id`). To " +
        'resume, send the ' +
        'last position received as `Last-Event-ID` (or `last_event_id`): the events after it are replayed, then ' +
        'live ones follow. ' +
        `A position the stream no longer holds gets \`event: reset\` and the header \`Last-Event-ID: earliest\`. ` +
        `${stream.resetDescription}`
      : '',
    webhooks:
      'Each event is a `POST` of the envelope to every enabled endpoint whose filters match it. ' +
      model.webhooks.delivery,
  };
}
