// Signed, expiring download links for export files: HMAC-SHA256 over the manifest id and the
// expiry, so a link names exactly one file until one instant. Checked in constant time.
import { createHmac, timingSafeEqual } from 'node:crypto';

export interface SignedDownload {
  manifestId: string;
  /** epoch ms after which the link is refused */
  expiresMs: number;
  /** base64url HMAC-SHA256 */
  signature: string;
}

export type DownloadVerdict =
  | { ok: true; manifestId: string; expiresMs: number }
  | { ok: false; reason: 'malformed' | 'expired' | 'bad_signature' };

const MIN_SECRET_BYTES = 16;
const MANIFEST_ID_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;
const SIGNATURE_RE = /^[A-Za-z0-9_-]{43}$/;

function keyOf(secret: string | Buffer): Buffer {
  const key = typeof secret === 'string' ? Buffer.from(secret, 'utf8') : secret;
  if (key.length < MIN_SECRET_BYTES) throw new RangeError(`signing secret must be at least ${MIN_SECRET_BYTES} bytes`);
  return key;
}

function mac(key: Buffer, manifestId: string, expiresMs: number): Buffer {
  // a purpose prefix keeps these signatures from being valid anywhere else the secret signs
  return createHmac('sha256', key).update(`export-download.v1\n${manifestId}\n${expiresMs}`).digest();
}

/** `expiresMs` is the absolute expiry instant (epoch ms), e.g. now + exports.url_ttl_s * 1000. */
export function signDownload(secret: string | Buffer, manifestId: string, expiresMs: number): SignedDownload {
  if (!MANIFEST_ID_RE.test(manifestId)) throw new RangeError(`not a manifest id: ${JSON.stringify(manifestId)}`);
  if (!Number.isSafeInteger(expiresMs) || expiresMs <= 0) throw new RangeError('expiresMs must be a positive integer (epoch ms)');
  return { manifestId, expiresMs, signature: mac(keyOf(secret), manifestId, expiresMs).toString('base64url') };
}

/** Query string for a download link: `expires=<epoch ms>&signature=<base64url>`. */
export function downloadQuery(signed: SignedDownload): string {
  return `expires=${signed.expiresMs}&signature=${signed.signature}`;
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
  if (typeof expiresText !== 'string' || !/^[1-9]\d{0,15}$/.test(expiresText)) return { ok: false, reason: 'malformed' };
  const expiresMs = Number(expiresText);
  if (!Number.isSafeInteger(expiresMs)) return { ok: false, reason: 'malformed' };
  // compare the text, not decoded bytes: base64 has spare bits, and an altered character must fail
  const expected = Buffer.from(mac(keyOf(secret), manifestId, expiresMs).toString('base64url'), 'utf8');
  const actual = Buffer.from(signature, 'utf8');
  if (actual.length !== expected.length || !timingSafeEqual(actual, expected)) return { ok: false, reason: 'bad_signature' };
  if (nowMs >= expiresMs) return { ok: false, reason: 'expired' };
  return { ok: true, manifestId, expiresMs };
}
