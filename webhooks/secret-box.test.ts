import t from 'tap';
import { isSealed, sealedKeyId, SecretBox, SecretOpenError } from './secret-box.ts';
import { generateSecret } from './signing.ts';

const A = 'signing-secret-a-0123456789';
const B = 'signing-secret-b-0123456789';

t.test('sealed, a secret opens again and shows nothing of itself', async (t) => {
  const box = new SecretBox(A);
  const secret = generateSecret();
  const stored = box.seal(secret, 'ep_1');
  t.ok(isSealed(stored));
  t.equal(sealedKeyId(stored), box.keyId);
  t.notMatch(stored, secret.slice('whsec_'.length, 20), 'no part of the secret in the stored form');
  t.not(box.seal(secret, 'ep_1'), stored, 'a fresh IV each time');
  t.equal(box.open(stored, 'ep_1'), secret);
  t.equal(new SecretBox(A).keyId, box.keyId, 'the key id depends on the signing secret only');
  t.not(new SecretBox(B).keyId, box.keyId);
});

t.test('bound to its endpoint and to its bytes', async (t) => {
  const box = new SecretBox(A);
  const stored = box.seal(generateSecret(), 'ep_1');
  t.throws(() => box.open(stored, 'ep_2'), SecretOpenError, 'copied to another endpoint, it does not open');
  const body = stored.slice(stored.lastIndexOf(':') + 1);
  const flipped = `${stored.slice(0, stored.lastIndexOf(':') + 1)}${body[0] === 'A' ? 'B' : 'A'}${body.slice(1)}`;
  t.throws(() => box.open(flipped, 'ep_1'), /does not decrypt/, 'an altered byte is detected');
  t.throws(() => box.open('whsec_plain', 'ep_1'), /not encrypted/);
  t.throws(() => box.open(`${stored.slice(0, stored.lastIndexOf(':') + 1)}AAAA`, 'ep_1'), /truncated/);
});

t.test('a signing secret not held does not open; a previous one does, and reseal moves it', async (t) => {
  const old = new SecretBox(A);
  const secret = generateSecret();
  const stored = old.seal(secret, 'ep_1');
  const stranger = new SecretBox(B);
  t.notOk(stranger.canOpen(stored));
  t.throws(() => stranger.open(stored, 'ep_1'), new RegExp(`does not hold \\(key id ${old.keyId}\\)`));
  const rotated = new SecretBox(B, [A]);
  t.ok(rotated.canOpen(stored));
  t.equal(rotated.open(stored, 'ep_1'), secret);
  const moved = rotated.reseal(stored, 'ep_1');
  t.equal(sealedKeyId(moved), rotated.keyId);
  t.equal(new SecretBox(B).open(moved, 'ep_1'), secret, 'after resealing, the new secret alone opens it');
  t.equal(rotated.reseal(moved, 'ep_1'), moved, 'already current: unchanged');
  t.equal(sealedKeyId(rotated.reseal(secret, 'ep_1')), rotated.keyId, 'plaintext is sealed');
});
