// Standard Webhooks signatures (https://www.standardwebhooks.com/): the receiver recomputes
// HMAC-SHA256 over "id.timestamp.body" with the secret's decoded bytes.
import { createHmac, randomBytes } from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';
const SECRET_BYTES = 32;

/** A new endpoint secret, `whsec_` + base64 of 32 random bytes (the spec allows 24 to 64). */
export function generateSecret(): string {
  return SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64');
}

export function secretKey(secret: string): Buffer {
  if (!secret.startsWith(SECRET_PREFIX)) throw new Error('webhook secret must start with whsec_');
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
  if (key.length < 24) throw new Error('webhook secret must hold at least 24 bytes');
  return key;
}

/** One `v1,<base64>` signature. */
export function signOne(secret: string, msgId: string, timestampS: number, body: string): string {
  const mac = createHmac('sha256', secretKey(secret)).update(`${msgId}.${timestampS}.${body}`).digest('base64');
  return `v1,${mac}`;
}

export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/**
 * Headers for one attempt. During a secret rotation both the new and the old secret sign,
 * space-separated, so receivers can switch their secret at any time within the overlap.
 */
export function signHeaders(
  secrets: readonly string[],
  msgId: string,
  timestampS: number,
  body: string,
): SignedHeaders {
  if (secrets.length === 0) throw new Error('at least one secret is needed to sign');
  if (!Number.isInteger(timestampS)) throw new Error('webhook-timestamp must be whole seconds');
  return {
    'webhook-id': msgId,
    'webhook-timestamp': String(timestampS),
    'webhook-signature': secrets.map((s) => signOne(s, msgId, timestampS, body)).join(' '),
  };
}
