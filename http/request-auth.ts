// Who is asking, and may they: the API key from `Authorization: Bearer` (or `api_key` in the
// query of an event stream, which EventSource cannot send headers for), and the problems a
// request without a valid key or over its window gets.
import { ApiError } from '../core/errors.ts';
import type { AuthenticatedKey, KeyAuthenticator } from '../accounts/auth.ts';
import type { RateDecision } from '../accounts/limiter.ts';
import { WINDOW_POLICY_NAME } from '../accounts/plans.ts';
import type { ApiRequest } from './types.ts';

/** The request's key, checked; throws 401 problems for a missing, malformed or unknown key. */
export function authenticateRequest(
  keys: KeyAuthenticator,
  req: ApiRequest,
  stream: boolean,
  sseCapable: boolean,
  nowMs: number,
): AuthenticatedKey | Promise<AuthenticatedKey> {
  const header = req.headers.authorization;
  let token: string | null = null;
  if (header !== undefined) {
    token = bearerToken(header);
    if (token === null) {
      throw new ApiError('unauthorized', 'The Authorization header must be "Bearer <key>".', {
        headers: { 'WWW-Authenticate': 'Bearer realm="transit-api", error="invalid_request"' },
      });
    }
  } else if (stream) {
    token = new URLSearchParams(req.query).get('api_key');
  }
  if (token === null) {
    if (req.query.includes('api_key') && new URLSearchParams(req.query).has('api_key')) {
      throw new ApiError(
        'unauthorized',
        sseCapable
          ? 'api_key in the query is accepted on event streams only (format=sse or Accept: text/event-stream); ' +
              'for JSON send the key as Authorization: Bearer <key>.'
          : 'api_key in the query is accepted on event streams only, and this endpoint has none; ' +
              'send the key as Authorization: Bearer <key>.',
        {
          errors: [{ parameter: 'api_key', detail: 'accepted only on event streams; use Authorization: Bearer' }],
        },
      );
    }
    throw new ApiError('unauthorized', 'This endpoint needs an API key: send Authorization: Bearer <key>.');
  }
  const pending = keys.authenticate(token, nowMs);
  return pending instanceof Promise ? pending.then(validKey) : validKey(pending);
}

function validKey(key: AuthenticatedKey | null): AuthenticatedKey {
  if (!key) {
    throw new ApiError('unauthorized', 'The API key is not valid: it is unknown, malformed or revoked.', {
      headers: { 'WWW-Authenticate': 'Bearer realm="transit-api", error="invalid_token"' },
    });
  }
  return key;
}

export function rateLimited(key: AuthenticatedKey, decision: RateDecision): ApiError {
  return new ApiError(
    'rate_limited',
    `This key's ${key.plan} plan allows ${decision.limit} requests per 5 minutes; retry after the window moves on.`,
    { members: { 'violated-policies': [WINDOW_POLICY_NAME] } },
  );
}

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

/** The token of `Bearer <token>`; the usual form is read without the regular expression. */
function bearerToken(header: string): string | null {
  if (header.startsWith('Bearer ')) {
    const token = header.slice(7);
    if (token.length > 0 && !/\s/.test(token)) return token;
  }
  return BEARER.exec(header)?.[1] ?? null;
}

/** Whether the request asks for an event stream (Accept, or format=sse). */
export function wantsEventStream(req: ApiRequest): boolean {
  const accept = req.headers.accept;
  if (accept?.includes('text/event-stream')) return true;
  // decoded like the validator decodes it, so format=%73se cannot slip through as JSON
  return req.query.includes('format') && new URLSearchParams(req.query).get('format') === 'sse';
}
