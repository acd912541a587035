// Validates real responses (status, headers, body) against the served OpenAPI document with
// ajv's JSON Schema 2020-12 implementation, which OpenAPI 3.1 schemas are.
import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { parse } from 'yaml';

type Json = Record<string, unknown>;

export interface Checked {
  ok: boolean;
  errors: string[];
}

function pointer(...parts: string[]): string {
  return parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
}

export class OpenApiValidator {
  private readonly ajv: Ajv2020;
  private readonly templates: Array<{ template: string; regex: RegExp }>;
  readonly doc: Json;

  /** the document as YAML text or as an already parsed object */
  constructor(source: string | Json) {
    this.doc = typeof source === 'string' ? (parse(source) as Json) : source;
    this.ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
    (addFormats as unknown as (ajv: unknown) => void)(this.ajv);
    this.ajv.addSchema({ $id: 'openapi.json', components: this.doc.components, paths: this.doc.paths } as Json);
    this.templates = Object.keys(this.doc.paths as Json).map((template) => ({
      template,
      regex: new RegExp(
        `^${template
          .replace(/[.*+?^$()|[\]\\]/g, '\\$&')
          .replace(/\\?\{[^}]+\\?\}/g, '[^/]+')
          .replace(/\{[^}]+\}/g, '[^/]+')}$`,
      ),
    }));
  }

  template(path: string): string | undefined {
    return this.templates.find((t) => t.regex.test(path))?.template;
  }

  /** Any error body: problem+json matching the Problem component. */
  checkProblem(headers: Headers, bodyText: string): Checked {
    if ((headers.get('content-type') ?? '') !== 'application/problem+json') {
      return { ok: false, errors: [`content type ${headers.get('content-type')} is not application/problem+json`] };
    }
    const validate = this.ajv.getSchema('openapi.json#/components/schemas/Problem')!;
    let body: unknown;
    try {
      body = JSON.parse(bodyText);
    } catch {
      return { ok: false, errors: ['problem body is not JSON'] };
    }
    return validate(body)
      ? { ok: true, errors: [] }
      : { ok: false, errors: (validate.errors ?? []).map((e: ErrorObject) => `${e.instancePath} ${e.message}`) };
  }

  /** Checks a response of `method path` (path without query). */
  check(method: string, path: string, status: number, headers: Headers, bodyText: string): Checked {
    const errors: string[] = [];
    const template = this.template(path);
    if (!template) {
      // an undocumented path can only answer with a problem document
      if (status < 400) return { ok: false, errors: [`no path template matches ${path}`] };
      return this.checkProblem(headers, bodyText);
    }
    const op = ((this.doc.paths as Json)[template] as Json)[method.toLowerCase()] as Json | undefined;
    if (!op) return { ok: false, errors: [`${method} ${template} is not documented`] };
    const responses = op.responses as Json;
    const key = String(status) in responses ? String(status) : 'default';
    const response = responses[key] as Json | undefined;
    if (!response) return { ok: false, errors: [`status ${status} is not documented for ${method} ${template}`] };
    for (const [name, raw] of Object.entries((response.headers ?? {}) as Json)) {
      const ref = (raw as Json).$ref as string | undefined;
      const header = (
        ref ? (this.doc.components as Json as { headers: Json }).headers[ref.split('/').pop()!] : raw
      ) as Json;
      if (header.required && headers.get(name) === null) errors.push(`missing header ${name}`);
    }
    const content = (response.content ?? {}) as Json;
    const type = (headers.get('content-type') ?? '').split(';')[0]!.trim();
    if (status !== 304 && Object.keys(content).length) {
      if (!(type in content)) errors.push(`content type ${type} not documented (${Object.keys(content).join(', ')})`);
      else if (type.endsWith('json')) {
        const path = pointer(template, method.toLowerCase(), 'responses', key, 'content', type, 'schema');
        const ref = `openapi.json#/paths/${path}`;
        const validate = this.ajv.getSchema(ref) ?? this.ajv.compile({ $ref: ref });
        let body: unknown;
        try {
          body = JSON.parse(bodyText);
        } catch {
          errors.push('body is not JSON');
        }
        if (body !== undefined && !validate(body)) {
          errors.push(
            ...(validate.errors ?? []).map(
              (e: ErrorObject) => `${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`,
            ),
          );
        }
      }
    }
    return { ok: errors.length === 0, errors };
  }
}
