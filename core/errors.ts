// The one registry of API error codes. http/ renders these as RFC 9457 problem+json;
// OpenAPI and the docs list them from here, so a code cannot exist in one place only.

export const ERROR_TYPE_BASE = 'https://transit-api.dev/problems/';

export const ERRORS = {
  invalid_parameter: { status: 400, title: 'Invalid parameter' },
  // the socket layer's own refusals (http/http-edge.ts), answered with Connection: close
  malformed_request: { status: 400, title: 'Malformed request' },
  invalid_body: { status: 400, title: 'Invalid request body' },
  invalid_cursor: { status: 400, title: 'Invalid cursor' },
  limit_exceeds_plan: { status: 400, title: 'Limit exceeds plan maximum' },
  outside_retention: { status: 400, title: 'Outside the retained window' },
  unsafe_target: { status: 400, title: 'Webhook target not allowed' },
  unauthorized: { status: 401, title: 'Unauthorized' },
  forbidden_plan: { status: 403, title: 'Plan does not include this feature' },
  forbidden: { status: 403, title: 'Forbidden' },
  invalid_signature: { status: 403, title: 'Invalid download signature' },
  link_expired: { status: 403, title: 'Download link expired' },
  not_found: { status: 404, title: 'Not found' },
  no_retained_rows: { status: 404, title: 'No retained rows' },
  method_not_allowed: { status: 405, title: 'Method not allowed' },
  not_acceptable: { status: 406, title: 'Not acceptable' },
  conflict: { status: 409, title: 'Conflict' },
  gone: { status: 410, title: 'Gone' },
  request_timeout: { status: 408, title: 'Request timeout' },
  payload_too_large: { status: 413, title: 'Payload too large' },
  uri_too_long: { status: 414, title: 'URI too long' },
  unsupported_media_type: { status: 415, title: 'Unsupported media type' },
  range_not_satisfiable: { status: 416, title: 'Range not satisfiable' },
  // the IETF RateLimit draft registers this problem type for an exhausted quota
  rate_limited: {
    status: 429,
    title: 'Rate limit exceeded',
    type: 'https://iana.org/assignments/http-problem-types#quota-exceeded',
  },
  sse_allowance_exceeded: { status: 429, title: 'Event stream allowance exceeded' },
  headers_too_large: { status: 431, title: 'Request header fields too large' },
  internal: { status: 500, title: 'Internal error' },
  not_implemented: { status: 501, title: 'Not implemented' },
  unavailable: { status: 503, title: 'Service unavailable' },
  // an edge node forwards history paths to the ingest node (docs/guides/multi-node.md)
  ingest_unavailable: { status: 503, title: 'Ingest node unavailable' },
} as const satisfies Record<string, { status: number; title: string; type?: string }>;

export type ErrorCode = keyof typeof ERRORS;

export interface ParameterProblem {
  parameter: string;
  detail: string;
}

export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    readonly extra: {
      errors?: ParameterProblem[];
      headers?: Record<string, string>;
      /** extension members of the problem document, e.g. violated-policies */
      members?: Record<string, unknown>;
    } = {},
  ) {
    super(detail);
    this.name = 'ApiError';
    this.status = ERRORS[code].status;
  }
}

export function problemType(code: ErrorCode): string {
  const entry = ERRORS[code];
  return 'type' in entry ? entry.type : `${ERROR_TYPE_BASE}${code.replace(/_/g, '-')}`;
}

export function invalidParameter(parameter: string, detail: string): ApiError {
  return new ApiError('invalid_parameter', `${parameter}: ${detail}`, { errors: [{ parameter, detail }] });
}
