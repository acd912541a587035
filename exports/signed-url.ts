// Signed, expiring download links for export files: HMAC-SHA256 over the manifest id and the
// expiry, so a link names exactly one file until one instant. Checked in constant time. The
// expiry is epoch seconds, like every other epoch value of the API (X-RateLimit-Reset, webhook
// timestamps); links of the earlier millisecond form were signed under another purpose (v1) and
// are refused, so none of them can be read as a date thousands of years away.
import { createHmac, timingSafeEqual } from 'node:crypto';

export interface SignedDownload {
  manifestId: string;
  /** epoch seconds from which the link is refused */
  expiresS: number;
  /** base64url HMAC-SHA256 */
  signature: string;
}

export type DownloadVerdict =
  | { ok: true; manifestId: string; expiresS: number }
  | { ok: false; reason: 'malformed' | 'expired' | 'bad_signature' };

const MIN_SECRET_BYTES = 16;
const MANIFEST_ID_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;
const SIGNATURE_RE = /^[A-Za-z0-9_-]{43}$/;
/** 2286-11-20: anything later is not epoch seconds (an epoch-ms value has 13 digits) */
const MAX_EXPIRES_S = 9_999_999_999;

function keyOf(secret: string | Buffer): Buffer {
  const key = typeof secret === 'string' ? Buffer.from(secret, 'utf8') : secret;
  if (key.length < MIN_SECRET_BYTES) throw new RangeError(`signing secret must be at least ${MIN_SECRET_BYTES} bytes`);
  return key;
}

function mac(key: Buffer, manifestId: string, expiresS: number): Buffer {
  // a purpose prefix keeps these signatures from being valid anywhere else the secret signs;
  // v2: the expiry is in seconds (v1 signed milliseconds)
  return createHmac('sha256', key).update(`export-download.v2\n${manifestId}\n${expiresS}`).digest();
}

/** `expiresS` is the absolute expiry instant (epoch seconds), e.g. now + exports.url_ttl_s. */
export function signDownload(secret: string | Buffer, manifestId: string, expiresS: number): SignedDownload {
  if (!MANIFEST_ID_RE.test(manifestId)) throw new RangeError(`not a manifest id: ${JSON.stringify(manifestId)}`);
  if (!Number.isSafeInteger(expiresS) || expiresS <= 0 || expiresS > MAX_EXPIRES_S) {
    throw new RangeError('expiresS must be a positive integer (epoch seconds)');
  }
  return { manifestId, expiresS, signature: mac(keyOf(secret), manifestId, expiresS).toString('base64url') };
}

/** Query string for a download link: `expires=<epoch seconds>&signature=<base64url>`. */
export function downloadQuery(signed: SignedDownload): string {
  return `expires=${signed.expiresS}&signature=${signed.signature}`;
}

/**
 * Verifies a link as received: `expires` and `signature` straight from the query string.
 * Malformed input is refused, never thrown on; the signature is checked before the expiry so a
 * forged link learns nothing about timing.
 */
export function verifyDownload(
  secret: string | Buffer,
  given: { manifestId: unknown; expires: unknown; signature: unknown },
  nowMs: number = Date.now(),
): DownloadVerdict {
  const { manifestId, expires, signature } = given;
  if (typeof manifestId !== 'string' || !MANIFEST_ID_RE.test(manifestId)) return { ok: false, reason: 'malformed' };
  if (typeof signature !== 'string' || !SIGNATURE_RE.test(signature)) return { ok: false, reason: 'malformed' };
  const expiresText = typeof expires === 'number' ? String(expires) : expires;
  if (typeof expiresText !== 'string' || !/^[1-9]\d{0,9}$/.test(expiresText)) return { ok: false, reason: 'malformed' };
  const expiresS = Number(expiresText);
  // compare the text, not decoded bytes: base64 has spare bits, and an altered character must fail
  const expected = Buffer.from(mac(keyOf(secret), manifestId, expiresS).toString('base64url'), 'utf8');
  const actual = Buffer.from(signature, 'utf8');
  if (actual.length !== expected.length || !timingSafeEqual(actual, expected))
    return { ok: false, reason: 'bad_signature' };
  if (nowMs >= expiresS * 1000) return { ok: false, reason: 'expired' };
  return { ok: true, manifestId, expiresS };
}
