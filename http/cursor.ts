// Opaque keyset cursors: base64url(JSON of the last row's sort key) + HMAC over it and the query
// it belongs to, so a cursor cannot be forged, altered, or replayed against other filters.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { ApiError } from '../core/errors.ts';

export type CursorValue = string | number | null;

const MAX_CURSOR_LENGTH = 2048;
const SIG_BYTES = 16;

function invalid(detail: string): ApiError {
  return new ApiError('invalid_cursor', detail, { errors: [{ parameter: 'cursor', detail }] });
}

export class CursorCodec {
  private readonly secret: Buffer;

  constructor(secret: string | Buffer) {
    this.secret = typeof secret === 'string' ? Buffer.from(secret, 'utf8') : secret;
    if (this.secret.length < 16) throw new Error('cursor secret must be at least 16 bytes');
  }

  /** `scope` names the route and its normalized filters; the cursor is valid only there. */
  encode(scope: string, key: readonly CursorValue[]): string {
    const payload = Buffer.from(JSON.stringify(key), 'utf8').toString('base64url');
    return `${payload}.${this.sign(scope, payload).toString('base64url')}`;
  }

  decode(scope: string, cursor: string): CursorValue[] {
    if (cursor.length === 0 || cursor.length > MAX_CURSOR_LENGTH) throw invalid('the cursor is empty or too long');
    const dot = cursor.indexOf('.');
    if (dot <= 0 || dot !== cursor.lastIndexOf('.')) throw invalid('the cursor is malformed');
    const payload = cursor.slice(0, dot);
    const given = Buffer.from(cursor.slice(dot + 1), 'base64url');
    const expected = this.sign(scope, payload);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw invalid('the cursor was altered, or belongs to another endpoint or other filters');
    }
    let key: unknown;
    try {
      key = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      throw invalid('the cursor is malformed');
    }
    if (!Array.isArray(key) || !key.every((v) => v === null || typeof v === 'string' || typeof v === 'number')) {
      throw invalid('the cursor is malformed');
    }
    return key as CursorValue[];
  }

  private sign(scope: string, payload: string): Buffer {
    return createHmac('sha256', this.secret).update(scope).update('\n').update(payload).digest().subarray(0, SIG_BYTES);
  }
}

/**
 * A decoded key that must be `count` strings (keysets kept by the store, like the webhook audit's
 * or the export manifests'): a signed cursor of another shape is refused like a malformed one.
 */
export function stringKey(key: readonly CursorValue[], count: number): string[] {
  if (key.length !== count || !key.every((v) => typeof v === 'string')) throw invalid('the cursor is malformed');
  return key as string[];
}

/** Orders cursor keys: null first, numbers before strings, then natural order. */
export function compareKeys(a: readonly CursorValue[], b: readonly CursorValue[]): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const c = compareValue(a[i]!, b[i]!);
    if (c !== 0) return c;
  }
  return a.length - b.length;
}

function compareValue(a: CursorValue, b: CursorValue): number {
  if (a === b) return 0;
  if (a === null) return -1;
  if (b === null) return 1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'number') return -1;
  if (typeof b === 'number') return 1;
  return a < b ? -1 : 1;
}
