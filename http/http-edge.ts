// HTTP edge cases the socket layer answers itself, before a request reaches the request chain: what
// uWebSockets.js hands over although RFC 9112 says to refuse it (two Host headers, a Content-Length
// that is not one number, an unknown Transfer-Encoding, both framings at once), and the limits
// of this server on the request target and header section. Each answer is a problem+json with
// `Connection: close`: after a framing error nothing later on the connection can be trusted.
//
// What uWS (20.30) never hands over cannot be answered at all: it holds the connection until its
// 10 s idle timeout and closes it without a status line (docs/guides/api.md, "HTTP edge cases").
import { ApiError, type ErrorCode } from '../core/errors.ts';

/** Longest request target (path and query) served; longer is 414. Browsers and proxies stop near 8 KiB too. */
export const MAX_TARGET_BYTES = 8 * 1024;
/** Largest header section (names and values) served; larger is 431. Node's own default limit. */
export const MAX_HEADER_BYTES = 16 * 1024;
/**
 * A request body that stops arriving for this long is answered 408: before uWS's fixed 10 s idle
 * timeout, which would otherwise close the connection without a word.
 */
export const BODY_IDLE_TIMEOUT_MS = 8_000;

export interface RequestHead {
  /** path and query as received */
  readonly targetBytes: number;
  /** header names and values, as received */
  readonly headerBytes: number;
  /** lower-case names; a repeated field's values joined with ", " */
  readonly headers: Readonly<Record<string, string>>;
  /** Host given more than once */
  readonly hostRepeated: boolean;
}

// the socket layer ends these responses with closeConnection, and uWS then writes
// `Connection: close` itself: it is not repeated here
function refuse(code: ErrorCode, detail: string): ApiError {
  return new ApiError(code, detail);
}

/** The refusal a request head deserves, or null when it may go on to the request chain. */
export function checkRequestHead(head: RequestHead): ApiError | null {
  if (head.targetBytes > MAX_TARGET_BYTES) {
    return refuse(
      'uri_too_long',
      `The request target is ${head.targetBytes} bytes; this server reads at most ${MAX_TARGET_BYTES}.`,
    );
  }
  if (head.headerBytes > MAX_HEADER_BYTES) {
    return refuse(
      'headers_too_large',
      `The header section is ${head.headerBytes} bytes; this server reads at most ${MAX_HEADER_BYTES}.`,
    );
  }
  if (head.hostRepeated) return refuse('malformed_request', 'The request has more than one Host header.');
  const length = head.headers['content-length'];
  // a repeated Content-Length arrives joined ("5, 7"): not one number either
  if (length !== undefined && !/^\d{1,15}$/.test(length)) {
    return refuse('malformed_request', 'Content-Length must be one decimal number, given once.');
  }
  const coding = head.headers['transfer-encoding'];
  if (coding !== undefined) {
    if (length !== undefined)
      return refuse('malformed_request', 'A request must not carry both Content-Length and Transfer-Encoding.');
    const normalized = coding.trim().toLowerCase();
    if (normalized !== 'chunked') {
      return refuse(
        'not_implemented',
        `Transfer-Encoding ${JSON.stringify(normalized)} is not supported; send chunked or a Content-Length.`,
      );
    }
  }
  return null;
}

/** The refusal of a body that stopped arriving. */
export function bodyTimeout(): ApiError {
  return refuse(
    'request_timeout',
    `The request body stopped arriving for ${BODY_IDLE_TIMEOUT_MS / 1000} s; it was not processed.`,
  );
}
