// Zod builders for query and path parameters. Query values arrive as strings; each builder
// parses strictly (no silent coercion of "1e1" or " 5") and renders a precise OpenAPI schema.
import { z } from 'zod';
import 'zod-openapi';
import type { Mode } from '../core/types.ts';

const MAX_VALUE_LENGTH = 200;
const MAX_LIST_ITEMS = 50;

/** An identifier from a feed or schedule: any printable text up to 200 characters. */
export function idValue(description: string, example?: string) {
  return (
    z
      .string()
      .min(1, 'must not be empty')
      .max(MAX_VALUE_LENGTH, `must be at most ${MAX_VALUE_LENGTH} characters`)
      // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
      .regex(/^[^\u0000-\u001f\u007f]+$/, 'must not contain control characters')
      .meta({ description, ...(example !== undefined ? { example } : {}) })
  );
}

/** A non-negative decimal integer without sign, spaces or exponent. */
export function intParam(options: { description: string; min: number; max?: number; default?: number }) {
  const { description, min, max } = options;
  return z
    .string()
    .regex(/^[0-9]{1,9}$/, 'must be a whole number')
    .transform(Number)
    .pipe(max === undefined ? z.number().int().min(min) : z.number().int().min(min).max(max))
    .meta({
      description,
      // documented as the integer it is, not as the string pattern that parses it
      override: ({ jsonSchema }: { jsonSchema: Record<string, unknown> }) => {
        delete jsonSchema.pattern;
        jsonSchema.type = 'integer';
        jsonSchema.minimum = min;
        if (max !== undefined) jsonSchema.maximum = max;
        if (options.default !== undefined) jsonSchema.default = options.default;
      },
    });
}

export function enumParam<const T extends readonly [string, ...string[]]>(values: T, description: string) {
  return z.enum(values).meta({ description });
}

/** Comma-separated values from a closed set: `status=active,upcoming`. */
export function enumListParam<const T extends readonly [string, ...string[]]>(values: T, description: string) {
  // escaped: event types are dotted, and an unescaped `.` would let `alertXcreated` match
  const alternatives = values.map((v) => v.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|');
  const pattern = `^(${alternatives})(,(${alternatives}))*$`;
  return z
    .string()
    .max(MAX_VALUE_LENGTH * 4)
    .transform((raw) => [...new Set(raw.split(','))])
    .pipe(z.array(z.enum(values)).max(MAX_LIST_ITEMS))
    .meta({
      description: `${description} Comma-separated; any of: ${values.join(', ')}.`,
      override: { type: 'string', pattern, example: values[0] },
    });
}

/**
 * What an id parameter names, for the one rule on unknown ids (http/known-ids.ts): `route` with
 * the modes whose routes it may name (a rail `line` is a route of mode rail), `station`, `source`.
 */
export type IdKind =
  | { readonly kind: 'route'; readonly modes: readonly Mode[]; readonly noun: 'route' | 'line' }
  | { readonly kind: 'station' }
  | { readonly kind: 'source' };

const idKinds = new WeakMap<z.ZodType, IdKind>();

/** The kind an id parameter was declared with (through `.optional()`), if any. */
export function idKindOf(schema: z.ZodType): IdKind | undefined {
  const inner = schema instanceof z.ZodOptional ? (schema.unwrap() as z.ZodType) : schema;
  return idKinds.get(inner);
}

/** How a route, line, station or stop id in a request is written (core/served-ids.ts). */
export const AS_SERVED = 'As the API serves it: `<prefix>:<id>` for an id two imported schedules share.';

/** Comma-separated identifiers: `route=39,66`. With a kind, an id the server does not know is 404. */
export function idListParam(description: string, example?: string, kind?: IdKind) {
  const served = kind && kind.kind !== 'source' ? ` ${AS_SERVED}` : '';
  const unknown = kind
    ? `${served} An id this server does not know (in no imported schedule and not in the live data) is ` +
      `404 \`not_found\`.`
    : '';
  const schema = z
    .string()
    .max(MAX_VALUE_LENGTH * 8)
    .transform((raw) => [...new Set(raw.split(','))])
    .pipe(z.array(idValue(description)).min(1).max(MAX_LIST_ITEMS, `at most ${MAX_LIST_ITEMS} values`))
    .meta({
      description: `${description} Comma-separated, up to ${MAX_LIST_ITEMS} values.${unknown}`,
      override: { type: 'string', ...(example !== undefined ? { example } : {}) },
    });
  if (kind) idKinds.set(schema, kind);
  return schema;
}

/** A calendar date, YYYY-MM-DD, that exists. */
export function dateParam(description: string) {
  return z.iso.date('must be a date as YYYY-MM-DD').meta({ description });
}
