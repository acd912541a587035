import t from 'tap';
import { downloadQuery, signDownload, verifyDownload } from './signed-url.ts';

const SECRET = 'a-signing-secret-of-32-characters!';
const ID = 'realtime-2024-03-10-arrivals.parquet';
const NOW = 1_710_000_000_000;
/** epoch seconds: the unit of `expires` */
const NOW_S = NOW / 1000;

const fromQuery = (id: string, query: string) => {
  const q = new URLSearchParams(query);
  return { manifestId: id, expires: q.get('expires'), signature: q.get('signature') };
};

t.test('a signed link verifies until it expires', async (t) => {
  const signed = signDownload(SECRET, ID, NOW_S + 60);
  t.match(
    downloadQuery(signed),
    /^expires=1710000060&signature=[A-Za-z0-9_-]{43}$/,
    'epoch seconds, like every epoch value (issue 15)',
  );
  t.same(verifyDownload(SECRET, fromQuery(ID, downloadQuery(signed)), NOW), {
    ok: true,
    manifestId: ID,
    expiresS: NOW_S + 60,
  });
  t.same(
    verifyDownload(SECRET, { manifestId: ID, expires: NOW_S + 60, signature: signed.signature }, NOW + 59_999).ok,
    true,
  );
  t.same(verifyDownload(SECRET, fromQuery(ID, downloadQuery(signed)), NOW + 60_000), { ok: false, reason: 'expired' });
  t.same(verifyDownload(SECRET, fromQuery(ID, downloadQuery(signed)), NOW + 3_600_000), {
    ok: false,
    reason: 'expired',
  });
  t.equal(
    verifyDownload(Buffer.from(SECRET), fromQuery(ID, downloadQuery(signed)), NOW).ok,
    true,
    'a Buffer secret works the same',
  );
});

t.test('tampering is refused', async (t) => {
  const signed = signDownload(SECRET, ID, NOW_S + 60);
  const good = { manifestId: ID, expires: String(signed.expiresS), signature: signed.signature };
  const bad = (given: Partial<typeof good>, reason: string, what: string) =>
    t.same(verifyDownload(SECRET, { ...good, ...given }, NOW), { ok: false, reason }, what);

  bad({ manifestId: 'realtime-2024-03-10-vehicle_positions.parquet' }, 'bad_signature', 'another file');
  bad({ expires: String(signed.expiresS + 1) }, 'bad_signature', 'a later expiry');
  bad({ expires: String(NOW_S + 86_400) }, 'bad_signature', 'an extended expiry');
  // every single-character change of the signature, including the last one's spare bits
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  let refused = 0;
  let tried = 0;
  for (let i = 0; i < signed.signature.length; i++) {
    for (const ch of [
      alphabet[(alphabet.indexOf(signed.signature[i]!) + 1) % 64]!,
      alphabet[(alphabet.indexOf(signed.signature[i]!) + 63) % 64]!,
    ]) {
      const altered = signed.signature.slice(0, i) + ch + signed.signature.slice(i + 1);
      tried++;
      if (!verifyDownload(SECRET, { ...good, signature: altered }, NOW).ok) refused++;
    }
  }
  t.equal(refused, tried, `all ${tried} altered signatures refused`);
  t.same(
    verifyDownload('another-secret-of-enough-length', good, NOW),
    { ok: false, reason: 'bad_signature' },
    'another secret',
  );
  bad({ signature: `${signed.signature}A` }, 'malformed', 'a longer signature');
  bad({ signature: signed.signature.slice(1) }, 'malformed', 'a shorter signature');
  bad({ signature: undefined }, 'malformed', 'no signature');
  bad({ expires: undefined }, 'malformed', 'no expiry');
  bad({ expires: '1e13' }, 'malformed', 'an expiry in exponent form');
  bad({ expires: '-5' }, 'malformed', 'a negative expiry');
  bad({ expires: ' 1710000060' }, 'malformed', 'padding');
  bad({ expires: '99999999999999999' }, 'malformed', 'an expiry past safe integers');
  bad({ expires: '1710000060000' }, 'malformed', 'milliseconds are not seconds');
  bad({ manifestId: '../../etc/passwd' }, 'malformed', 'a path instead of an id');
  bad({ manifestId: 42 as never }, 'malformed', 'a non-string id');
});

t.test('signing refuses what it cannot sign safely', async (t) => {
  t.throws(() => signDownload('short', ID, NOW_S), /at least 16 bytes/);
  t.throws(() => signDownload(SECRET, 'a/b', NOW_S), /not a manifest id/);
  t.throws(() => signDownload(SECRET, ID, NOW), /epoch seconds/, 'an epoch-ms value is refused');
  t.throws(() => signDownload(SECRET, ID, 0), /positive integer/);
  t.throws(() => signDownload(SECRET, ID, 1.5), /positive integer/);
  t.throws(
    () => verifyDownload('short', { manifestId: ID, expires: '1', signature: 'x'.repeat(43) }),
    /at least 16 bytes/,
  );
});

// issue 15: links used to carry epoch ms; one of those, signed as it was (v1), must not verify
t.test('a link of the earlier millisecond form is refused', async (t) => {
  const { createHmac } = await import('node:crypto');
  const expiresMs = NOW + 60_000;
  const v1 = createHmac('sha256', Buffer.from(SECRET))
    .update(`export-download.v1\n${ID}\n${expiresMs}`)
    .digest('base64url');
  t.notOk(verifyDownload(SECRET, { manifestId: ID, expires: String(expiresMs), signature: v1 }, NOW).ok);
  const asSeconds = Math.floor(expiresMs / 1000);
  t.same(verifyDownload(SECRET, { manifestId: ID, expires: String(asSeconds), signature: v1 }, NOW), {
    ok: false,
    reason: 'bad_signature',
  });
});
