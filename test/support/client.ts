// Fetch + OpenAPI check in one step: every response an integration test sees is validated.
import type { Test } from 'tap';
import type { Harness } from './harness.ts';
import { OpenApiValidator } from './openapi-validator.ts';
import type { JsonBody } from './json.ts';

export interface Got {
  status: number;
  headers: Headers;
  text: string;
  json: JsonBody;
}

export async function loadValidator(h: Harness): Promise<OpenApiValidator> {
  // the JSON rendering of the same document: parsing 150 KB of YAML takes seconds here
  const res = await fetch(`${h.url}/openapi.json`);
  return new OpenApiValidator((await res.json()) as Record<string, unknown>);
}

export function checker(t: Test, h: Harness, validator: OpenApiValidator) {
  /** `body`: a string is sent as is, anything else as JSON (with its content type unless given) */
  return async function call(
    path: string,
    headers: Record<string, string> = {},
    method = 'GET',
    body?: unknown,
  ): Promise<Got> {
    const init: RequestInit = { method, headers };
    if (body !== undefined) {
      init.body = typeof body === 'string' ? body : JSON.stringify(body);
      if (typeof body !== 'string') init.headers = { 'content-type': 'application/json', ...headers };
    }
    const res = await fetch(`${h.url}${path}`, init);
    const text = await res.text();
    const result = validator.check(method, path.split('?')[0]!, res.status, res.headers, text);
    t.ok(result.ok, `${method} ${path} → ${res.status} matches the OpenAPI document`, { errors: result.errors });
    let json: unknown = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      json = null;
    }
    return { status: res.status, headers: res.headers, text, json };
  };
}

/** The answer is a problem+json document with this status and code (and names `parameter`). */
export function expectProblem(t: Test, got: Got, status: number, code: string, parameter?: string): void {
  t.equal(got.status, status, `${code}: status ${status}`);
  t.equal(got.json?.code, code);
  t.equal(got.headers.get('content-type'), 'application/problem+json');
  if (parameter !== undefined) {
    t.ok(
      (got.json?.errors ?? []).some((e: { parameter: string }) => e.parameter === parameter),
      `names ${parameter}`,
      { errors: got.json?.errors },
    );
  }
}
