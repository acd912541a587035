// Turns raw path parameters, query strings and bodies into typed values, or a 400 that names
// every offending parameter.
import type { z } from 'zod';
import { ApiError, type ParameterProblem } from '../core/errors.ts';

export interface ParsedQuery {
  /** name → value, every name given once */
  values: Record<string, string>;
  /** `a=1&b=2` with names sorted: the cache and cursor key of the query */
  normalized: string;
}

const MAX_QUERY_LENGTH = 8192;

function problems(list: ParameterProblem[]): ApiError {
  const names = [...new Set(list.map((p) => p.parameter))];
  const detail =
    list.length === 1 ? `${list[0]!.parameter}: ${list[0]!.detail}` : `invalid parameters: ${names.join(', ')}`;
  return new ApiError('invalid_parameter', detail, { errors: list });
}

/** Splits the raw query; refuses unknown and repeated names. */
export function parseQuery(raw: string, allowed: ReadonlySet<string>, hints: Record<string, string> = {}): ParsedQuery {
  if (raw.length > MAX_QUERY_LENGTH) {
    throw problems([
      { parameter: '(query)', detail: `the query string is longer than ${MAX_QUERY_LENGTH} characters` },
    ]);
  }
  // no prototype: names such as __proto__ or toString must stay plain data
  const values: Record<string, string> = Object.create(null) as Record<string, string>;
  const found: ParameterProblem[] = [];
  const seen = new Set<string>();
  for (const [name, value] of new URLSearchParams(raw)) {
    if (!allowed.has(name)) {
      found.push({ parameter: name, detail: Object.hasOwn(hints, name) ? hints[name]! : 'unknown query parameter' });
      continue;
    }
    if (seen.has(name)) {
      found.push({ parameter: name, detail: 'given more than once' });
      continue;
    }
    seen.add(name);
    values[name] = value;
  }
  if (found.length) throw problems(dedupe(found));
  const normalized = Object.keys(values)
    .sort()
    .map((name) => `${encodeURIComponent(name)}=${encodeURIComponent(values[name]!)}`)
    .join('&');
  return { values, normalized };
}

function dedupe(list: ParameterProblem[]): ParameterProblem[] {
  const seen = new Set<string>();
  return list.filter((p) => {
    const k = `${p.parameter}\u0000${p.detail}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/** Validates with zod; each issue becomes a ParameterProblem named after its parameter. */
export function validate<S extends z.ZodType>(schema: S, input: unknown, prefix = ''): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  throw problems(
    dedupe(
      result.error.issues.flatMap((issue): ParameterProblem[] => {
        const path = issue.path.filter((p) => typeof p !== 'symbol').map(String);
        if (issue.code === 'unrecognized_keys') {
          return issue.keys.map((key) => ({
            parameter: `${prefix}${[...path, key].join('.')}`,
            detail: 'unknown parameter',
          }));
        }
        const parameter = `${prefix}${path.length ? path[0] : '(value)'}`;
        return [{ parameter, detail: `${path.length > 1 ? `${path.slice(1).join('.')}: ` : ''}${issue.message}` }];
      }),
    ),
  );
}

/** Parses a JSON request body against its schema; the caller checks size and content type. */
export function parseJsonBody<S extends z.ZodType>(schema: S, bytes: Uint8Array): z.output<S> {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
  } catch (err) {
    throw new ApiError('invalid_body', `the body is not valid JSON: ${(err as Error).message}`);
  }
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const errors = result.error.issues.flatMap((issue): ParameterProblem[] => {
    const path = issue.path.map(String);
    if (issue.code === 'unrecognized_keys')
      return issue.keys.map((key) => ({ parameter: [...path, key].join('.'), detail: 'unknown field' }));
    return [{ parameter: path.length ? path.join('.') : '(body)', detail: issue.message }];
  });
  throw new ApiError(
    'invalid_body',
    `the body does not match the schema: ${errors.map((e) => e.parameter).join(', ')}`,
    { errors },
  );
}
