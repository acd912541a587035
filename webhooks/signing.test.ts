import t from 'tap';
import { Webhook } from 'standardwebhooks';
import { generateSecret, secretKey, signHeaders, signOne } from './signing.ts';

t.test('generated secrets are whsec_ + base64 of 32 random bytes', async (t) => {
  const a = generateSecret();
  const b = generateSecret();
  t.match(a, /^whsec_[A-Za-z0-9+/]+=*$/);
  t.equal(secretKey(a).length, 32);
  t.not(a, b);
});

t.test('signatures verify with the standardwebhooks package', async (t) => {
  const secret = generateSecret();
  const body = JSON.stringify({ type: 'alert.created', timestamp: '2026-01-01T00:00:00.000Z', data: { id: 'a:1' } });
  const ts = Math.floor(Date.now() / 1000);
  const headers = signHeaders([secret], 'msg_1', ts, body);
  t.same(new Webhook(secret).verify(body, { ...headers }), JSON.parse(body));
  // the package's own signer agrees byte for byte
  t.equal(headers['webhook-signature'], new Webhook(secret).sign('msg_1', new Date(ts * 1000), body));
  t.throws(
    () => new Webhook(secret).verify(`${body} `, { ...headers }),
    /No matching signature/,
    'a changed body fails',
  );
  t.throws(
    () => new Webhook(generateSecret()).verify(body, { ...headers }),
    /No matching signature/,
    'another secret fails',
  );
  const forgedId = { ...headers, 'webhook-id': 'msg_2' };
  t.throws(() => new Webhook(secret).verify(body, forgedId), /No matching signature/, 'a changed id fails');
});

t.test('during a rotation both secrets sign and either verifies', async (t) => {
  const oldSecret = generateSecret();
  const newSecret = generateSecret();
  const body = '{"type":"export.ready","timestamp":"2026-01-01T00:00:00.000Z","data":{}}';
  const ts = Math.floor(Date.now() / 1000);
  const headers = signHeaders([newSecret, oldSecret], 'msg_rot', ts, body);
  t.equal(headers['webhook-signature'].split(' ').length, 2);
  t.ok(new Webhook(newSecret).verify(body, { ...headers }));
  t.ok(new Webhook(oldSecret).verify(body, { ...headers }));
  t.equal(headers['webhook-signature'].split(' ')[0], signOne(newSecret, 'msg_rot', ts, body));
});

t.test('bad inputs are refused', async (t) => {
  t.throws(() => secretKey('abc'), /whsec_/);
  t.throws(() => secretKey('whsec_AAAA'), /24 bytes/);
  t.throws(() => signHeaders([], 'm', 1, ''), /at least one secret/);
  t.throws(() => signHeaders([generateSecret()], 'm', 1.5, ''), /whole seconds/);
});
