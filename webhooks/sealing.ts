// At start, before any delivery: every stored webhook secret is brought under the current
// signing_secret. Plaintext secrets (a database from before encryption at rest) are sealed, those
// sealed with a previous signing_secret (`previous_signing_secrets`) are re-encrypted, and a
// replaced secret whose overlap is over is erased, as it never signs again. Secrets no configured
// signing_secret opens stop the start: deliveries would go out unsigned or not at all.
import type { Db } from '../store/db.ts';
import { isSealed, sealedKeyId, type SecretBox } from './secret-box.ts';

export interface SealingSummary {
  /** endpoints whose secrets were stored in plaintext, now encrypted */
  sealed: number;
  /** endpoints whose secrets were encrypted with a previous signing_secret, now with the current one */
  resealed: number;
}

export class UnreadableSecretsError extends Error {
  override name = 'UnreadableSecretsError';
  constructor(
    readonly endpointIds: string[],
    readonly keyIds: string[],
  ) {
    super(
      `${endpointIds.length} webhook endpoint${endpointIds.length === 1 ? '' : 's'} ` +
        `(${endpointIds.slice(0, 5).join(', ')}` +
        `${endpointIds.length > 5 ? ', …' : ''}) hold signing secrets encrypted with a signing_secret this ` +
        `server does not ` +
        `hold (key id ${keyIds.join(', ')}). Set signing_secret back to that secret, or list it in ` +
        `previous_signing_secrets ` +
        'beside the new one so they are re-encrypted at start (docs/guides/operating.md, Files and permissions). A ' +
        'secret the service ' +
        'generated is kept in <db_path>.secret, and `transit-api backup` copies it beside the backup.',
    );
  }
}

interface Row {
  endpoint_id: string;
  secret: string;
  previous_secret: string | null;
  previous_until_ms: number | bigint | null;
}

export async function sealStoredSecrets(db: Db, box: SecretBox, nowMs = Date.now()): Promise<SealingSummary> {
  const rows = await db.all<Row>(
    `SELECT endpoint_id, secret, previous_secret, epoch_ms(previous_secret_until) AS previous_until_ms
     FROM webhook_endpoints WHERE secret <> '' OR previous_secret IS NOT NULL ORDER BY endpoint_id`,
  );
  const live = (r: Row) =>
    r.previous_secret !== null && r.previous_until_ms !== null && Number(r.previous_until_ms) > nowMs;
  const unreadable = new Map<string, Set<string>>();
  const blocked = (r: Row, value: string | null) => {
    if (!value || !isSealed(value) || box.canOpen(value)) return;
    const ids = unreadable.get(r.endpoint_id) ?? new Set<string>();
    ids.add(sealedKeyId(value) ?? '?');
    unreadable.set(r.endpoint_id, ids);
  };
  for (const r of rows) {
    blocked(r, r.secret);
    if (live(r)) blocked(r, r.previous_secret);
  }
  if (unreadable.size) {
    const keyIds = [...new Set([...unreadable.values()].flatMap((s) => [...s]))].sort();
    throw new UnreadableSecretsError([...unreadable.keys()], keyIds);
  }
  const summary: SealingSummary = { sealed: 0, resealed: 0 };
  const changes: Array<[string, string, string | null]> = [];
  for (const r of rows) {
    const secret = r.secret === '' ? '' : box.reseal(r.secret, r.endpoint_id);
    const previous = live(r) ? box.reseal(r.previous_secret!, r.endpoint_id) : null;
    if (secret === r.secret && previous === r.previous_secret) continue;
    const wasPlain = (v: string | null) => !!v && !isSealed(v);
    if (wasPlain(r.secret) || (live(r) && wasPlain(r.previous_secret))) summary.sealed++;
    else if (secret !== r.secret || previous !== null) summary.resealed++;
    changes.push([r.endpoint_id, secret, previous]);
  }
  if (changes.length === 0) return summary;
  await db.transaction(async (conn) => {
    for (const [id, secret, previous] of changes) {
      await conn.run(
        `UPDATE webhook_endpoints SET secret = $2, previous_secret = $3,
           previous_secret_until = CASE WHEN $4 THEN previous_secret_until END
         WHERE endpoint_id = $1`,
        [id, secret, previous, previous !== null],
      );
    }
  });
  return summary;
}
