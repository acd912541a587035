// The committed OpenAPI document's schemas, closed: an object schema listing its properties
// admits no others here, so an event or body still carrying a field the contract dropped fails.
// For the contract tests of events (stream and webhooks); test/support/openapi-validator.ts checks
// responses against the document as served, open as it is.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { parse } from 'yaml';

export type Json = Record<string, unknown>;

function closed(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(closed);
  if (!node || typeof node !== 'object') return node;
  const out = Object.fromEntries(Object.entries(node).map(([k, v]) => [k, closed(v)])) as Json;
  if (out.properties && typeof out.properties === 'object' && out.additionalProperties === undefined)
    out.additionalProperties = false;
  return out;
}

export interface ClosedOpenApi {
  doc: Json;
  /** a validator of the schema at `openapi.json#<pointer>`, compiled once */
  validator(pointer: string): ValidateFunction;
}

/** docs/openapi.yaml as committed, with its components, paths and webhooks closed. */
export function closedOpenApi(): ClosedOpenApi {
  const file = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'docs', 'openapi.yaml');
  const doc = parse(readFileSync(file, 'utf8')) as Json;
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  (addFormats as unknown as (a: unknown) => void)(ajv);
  ajv.addSchema(
    closed({ $id: 'openapi.json', components: doc.components, webhooks: doc.webhooks, paths: doc.paths }) as Json,
  );
  const compiled = new Map<string, ValidateFunction>();
  return {
    doc,
    validator(pointer) {
      let v = compiled.get(pointer);
      if (!v) {
        v = ajv.compile({ $ref: `openapi.json${pointer}` });
        compiled.set(pointer, v);
      }
      return v;
    },
  };
}
