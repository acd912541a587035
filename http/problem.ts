// The one place errors become responses: RFC 9457 problem+json with the registry's code.
import { ApiError, ERRORS, problemType, type ParameterProblem } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import type { HeaderList } from './headers.ts';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

export interface ProblemDocument {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance: string;
  code: string;
  request_id: string;
  errors?: ParameterProblem[];
  [member: string]: unknown;
}

export interface RenderedProblem {
  status: number;
  headers: HeaderList;
  body: string;
}

const STANDARD_MEMBERS = new Set(['type', 'title', 'status', 'detail', 'instance', 'code', 'request_id', 'errors']);

/**
 * Anything thrown becomes an ApiError. Unexpected errors are logged with their stack and
 * reach the client only as `internal`: a stack trace or message could leak internals.
 */
export function toApiError(err: unknown, log: Logger, requestId: string): ApiError {
  if (err instanceof ApiError) return err;
  log.error({ err, request_id: requestId }, 'request failed');
  return new ApiError('internal', 'The server failed to handle this request; it has been logged under the request_id.');
}

export function problemDocument(err: ApiError, requestId: string, instance: string): ProblemDocument {
  const doc: ProblemDocument = {
    type: problemType(err.code),
    title: ERRORS[err.code].title,
    status: err.status,
    detail: err.detail,
    instance,
    code: err.code,
    request_id: requestId,
  };
  if (err.extra.errors?.length) doc.errors = err.extra.errors;
  for (const [name, value] of Object.entries(err.extra.members ?? {})) {
    if (!STANDARD_MEMBERS.has(name)) doc[name] = value;
  }
  return doc;
}

export function renderProblem(err: ApiError, requestId: string, instance: string): RenderedProblem {
  const headers: HeaderList = [
    ['Content-Type', PROBLEM_CONTENT_TYPE],
    ['Cache-Control', 'no-store'],
  ];
  for (const [name, value] of Object.entries(err.extra.headers ?? {})) headers.push([name, value]);
  if (err.status === 401 && !err.extra.headers?.['WWW-Authenticate']) {
    headers.push(['WWW-Authenticate', 'Bearer realm="transit-api"']);
  }
  return { status: err.status, headers, body: JSON.stringify(problemDocument(err, requestId, instance)) };
}
