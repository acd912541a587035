// A flat reading of the OpenAPI document for the human and LLM docs: operations with their
// parameters, responses and a curl example. Both pages render this, so they list the same things.

type Json = Record<string, unknown>;

export interface DocParameter {
  name: string;
  in: string;
  required: boolean;
  type: string;
  description: string;
}

export interface DocResponse {
  status: string;
  description: string;
  contentTypes: string[];
  /** top-level fields of a JSON body, for the expanded guides */
  fields: Array<{ name: string; type: string; description: string }>;
}

export interface DocOperation {
  id: string;
  method: string;
  path: string;
  summary: string;
  description: string;
  tags: string[];
  auth: boolean;
  parameters: DocParameter[];
  responses: DocResponse[];
  curl: string[];
}

export function resolve(doc: Json, value: unknown, depth = 0): Json {
  if (!value || typeof value !== 'object') return {};
  const ref = (value as Json).$ref;
  if (typeof ref === 'string' && ref.startsWith('#/') && depth < 8) {
    let target: unknown = doc;
    for (const part of ref.slice(2).split('/'))
      target = (target as Json | undefined)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
    return resolve(doc, target, depth + 1);
  }
  return value as Json;
}

export function typeName(doc: Json, schemaRef: unknown): string {
  const schema = resolve(doc, schemaRef);
  const ref = (schemaRef as Json | undefined)?.$ref;
  if (typeof ref === 'string') return ref.split('/').pop()!;
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (Array.isArray(schema.enum)) return (schema.enum as unknown[]).map((v) => JSON.stringify(v)).join(' | ');
  const anyOf = (schema.anyOf ?? schema.oneOf) as unknown[] | undefined;
  if (Array.isArray(anyOf)) return anyOf.map((s) => typeName(doc, s)).join(' | ');
  const type = schema.type;
  if (Array.isArray(type)) return type.join(' | ');
  if (type === 'array') return `${typeName(doc, schema.items)}[]`;
  if (typeof type === 'string') return schema.format ? `${type} (${String(schema.format)})` : type;
  return 'any';
}

function exampleValue(doc: Json, schemaRef: unknown): string {
  const schema = resolve(doc, schemaRef);
  if (schema.example !== undefined) return String(schema.example);
  if (Array.isArray(schema.enum) && schema.enum.length) return String(schema.enum[0]);
  if (schema.type === 'integer' || schema.type === 'number') return String(schema.default ?? schema.minimum ?? 1);
  return 'example';
}

function curlFor(doc: Json, method: string, path: string, op: Json, params: DocParameter[], sse: boolean): string[] {
  const parameters = (op.parameters ?? []) as Json[];
  let url = path;
  for (const p of parameters.filter((p) => p.in === 'path')) {
    url = url.replace(`{${String(p.name)}}`, encodeURIComponent(exampleValue(doc, p.schema)));
  }
  const required = parameters.filter((p) => p.in === 'query' && p.required);
  const qs = required.map((p) => `${String(p.name)}=${encodeURIComponent(exampleValue(doc, p.schema))}`);
  if (params.some((p) => p.name === 'limit')) qs.push('limit=20');
  const full = `$BASE_URL${url}${qs.length ? `?${qs.join('&')}` : ''}`;
  const auth = ((op.security as unknown[] | undefined) ?? []).length > 0;
  const lines = [
    `curl${method === 'GET' ? '' : ` -X ${method}`}${auth ? ' -H "Authorization: Bearer $TRANSIT_API_KEY"' : ''}` +
      `${op.requestBody ? ` -H 'Content-Type: application/json' -d '${JSON.stringify(bodyExample(doc, op))}'` : ''} ` +
      `"${full}"`,
  ];
  if (sse)
    lines.push(
      `curl -N${auth ? ' -H "Authorization: Bearer $TRANSIT_API_KEY"' : ''} -H 'Accept: text/event-stream' "${full}"`,
    );
  return lines;
}

function bodyExample(doc: Json, op: Json): unknown {
  const schema = resolve(doc, (((op.requestBody as Json).content as Json)['application/json'] as Json)?.schema);
  const build = (s: Json, depth: number): unknown => {
    if (depth > 4) return null;
    if (s.example !== undefined) return s.example;
    if (s.type === 'object' || s.properties) {
      const out: Json = {};
      const required = new Set((s.required as string[] | undefined) ?? []);
      for (const [name, prop] of Object.entries((s.properties ?? {}) as Json)) {
        if (required.has(name)) out[name] = build(resolve(doc, prop), depth + 1);
      }
      return out;
    }
    if (s.type === 'array') return [];
    if (Array.isArray(s.enum)) return s.enum[0];
    if (s.type === 'integer' || s.type === 'number') return 1;
    if (s.type === 'boolean') return true;
    return 'string';
  };
  return build(schema, 0);
}

export function operations(doc: Json): DocOperation[] {
  const out: DocOperation[] = [];
  for (const [path, item] of Object.entries((doc.paths ?? {}) as Json)) {
    for (const [method, raw] of Object.entries(item as Json)) {
      const op = raw as Json;
      const parameters: DocParameter[] = ((op.parameters ?? []) as Json[]).map((p) => ({
        name: String(p.name),
        in: String(p.in),
        required: p.required === true,
        type: typeName(doc, p.schema),
        description: String(p.description ?? resolve(doc, p.schema).description ?? ''),
      }));
      const responses: DocResponse[] = Object.entries((op.responses ?? {}) as Json).map(([status, r]) => {
        const response = resolve(doc, r);
        const content = (response.content ?? {}) as Json;
        const json = resolve(doc, (content['application/json'] as Json | undefined)?.schema);
        const required = new Set((json.required as string[] | undefined) ?? []);
        return {
          status,
          description: String(response.description ?? ''),
          contentTypes: Object.keys(content),
          fields: Object.entries((json.properties ?? {}) as Json).map(([name, prop]) => ({
            name: required.has(name) ? name : `${name}?`,
            type: typeName(doc, prop),
            description: String(resolve(doc, prop).description ?? ''),
          })),
        };
      });
      const sse = responses.some((r) => r.contentTypes.includes('text/event-stream'));
      out.push({
        id: String(op.operationId ?? `${method} ${path}`),
        method: method.toUpperCase(),
        path,
        summary: String(op.summary ?? ''),
        description: String(op.description ?? ''),
        tags: (op.tags as string[] | undefined) ?? [],
        auth: ((op.security as unknown[] | undefined) ?? []).length > 0,
        parameters,
        responses,
        curl: curlFor(doc, method.toUpperCase(), path, op, parameters, sse),
      });
    }
  }
  return out;
}
