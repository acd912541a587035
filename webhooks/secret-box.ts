// Webhook signing secrets at rest: AES-256-GCM with a key derived (HKDF-SHA256) from the
// server's signing_secret, so a copy of the database (a backup, a stolen disk) holds no secret
// that can sign a delivery. The service needs the raw secret to sign, so it is sealed, not hashed.
//
// Stored form: `sealed:v1:<key id>:<base64url(iv ‖ ciphertext ‖ tag)>`. The key id (derived from
// the key, telling nothing about it) names the signing_secret that sealed a row, so after a
// change of signing_secret the rows sealed with a previous one are found and re-encrypted.
// The endpoint id is the additional data: a sealed value copied to another row does not open.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const PREFIX = 'sealed:v1:';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const SALT = Buffer.from('transit-api', 'utf8');

interface Key {
  id: string;
  bytes: Buffer;
}

function deriveKey(signingSecret: string): Key {
  const ikm = Buffer.from(signingSecret, 'utf8');
  const bytes = Buffer.from(hkdfSync('sha256', ikm, SALT, 'webhook endpoint secrets v1', 32));
  const id = Buffer.from(hkdfSync('sha256', ikm, SALT, 'webhook endpoint secrets v1 key id', 6)).toString('hex');
  return { id, bytes };
}

export function isSealed(stored: string): boolean {
  return stored.startsWith(PREFIX);
}

/** The key id a stored value was sealed with; null for anything else (plaintext, erased). */
export function sealedKeyId(stored: string): string | null {
  if (!isSealed(stored)) return null;
  const end = stored.indexOf(':', PREFIX.length);
  return end < 0 ? null : stored.slice(PREFIX.length, end);
}

export class SecretOpenError extends Error {
  override name = 'SecretOpenError';
}

export class SecretBox {
  private readonly current: Key;
  private readonly keys: Map<string, Key>;

  /** `current` seals; it and every one of `previous` open. */
  constructor(current: string, previous: readonly string[] = []) {
    this.current = deriveKey(current);
    this.keys = new Map([[this.current.id, this.current]]);
    for (const secret of previous) {
      const key = deriveKey(secret);
      if (!this.keys.has(key.id)) this.keys.set(key.id, key);
    }
  }

  /** Names the signing_secret that seals, as stored values carry it. */
  get keyId(): string {
    return this.current.id;
  }

  /** True when a stored value opens with one of this box's keys. */
  canOpen(stored: string): boolean {
    const id = sealedKeyId(stored);
    return id !== null && this.keys.has(id);
  }

  seal(secret: string, endpointId: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.current.bytes, iv);
    cipher.setAAD(Buffer.from(endpointId, 'utf8'));
    const body = Buffer.concat([iv, cipher.update(secret, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `${PREFIX}${this.current.id}:${body.toString('base64url')}`;
  }

  open(stored: string, endpointId: string): string {
    const id = sealedKeyId(stored);
    if (id === null) throw new SecretOpenError('the stored webhook secret is not encrypted');
    const key = this.keys.get(id);
    if (!key) {
      throw new SecretOpenError(
        `the webhook secret was encrypted with a signing_secret this server does not hold (key id ${id})`,
      );
    }
    const body = Buffer.from(stored.slice(PREFIX.length + id.length + 1), 'base64url');
    if (body.length < IV_BYTES + TAG_BYTES + 1) throw new SecretOpenError('the stored webhook secret is truncated');
    const decipher = createDecipheriv('aes-256-gcm', key.bytes, body.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(endpointId, 'utf8'));
    decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
    try {
      return Buffer.concat([
        decipher.update(body.subarray(IV_BYTES, body.length - TAG_BYTES)),
        decipher.final(),
      ]).toString('utf8');
    } catch {
      throw new SecretOpenError(`the stored webhook secret of ${endpointId} does not decrypt (altered or moved)`);
    }
  }

  /** `stored` sealed with the current key (the same value when it already is). */
  reseal(stored: string, endpointId: string): string {
    if (sealedKeyId(stored) === this.current.id) return stored;
    return this.seal(isSealed(stored) ? this.open(stored, endpointId) : stored, endpointId);
  }
}
