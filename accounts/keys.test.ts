import t from 'tap';
import { Db } from '../store/db.ts';
import {
  createKey,
  findKeysByHashes,
  generateKey,
  hashKey,
  KEY_PATTERN,
  keyStates,
  listKeys,
  revokeKey,
} from './keys.ts';

t.test('keys are random, well-formed and stored only as hashes', async (t) => {
  const db = await Db.open(':memory:');
  t.teardown(() => db.close());
  const a = await createKey(db, { plan: 'regular', name: 'app one' });
  const b = await createKey(db, { plan: 'max', test: true });
  t.match(a.key, KEY_PATTERN);
  t.match(a.key, /^tk_live_/);
  t.match(b.key, /^tk_test_/);
  t.not(a.key, b.key);
  t.equal(a.prefix, a.key.slice(0, 12));
  t.match(a, { plan: 'regular', test: false, name: 'app one', revoked_at: null });
  const stored = await db.all<{ key_hash: string }>('SELECT key_hash FROM api_keys');
  t.notOk(JSON.stringify(stored).includes(a.key), 'the key itself is not stored');
  const unknown = hashKey(generateKey(false));
  const found = await findKeysByHashes(db, [hashKey(a.key), unknown]);
  t.equal(found.get(hashKey(a.key))!.id, a.id);
  t.equal(found.has(unknown), false);
  const listed = await listKeys(db);
  t.same(listed.map((k) => k.id).sort(), [a.id, b.id].sort());
  t.notOk('key' in listed[0]!, 'listing never shows keys');
  const states = await keyStates(db, [a.id, b.id, 'key_missing']);
  t.same([...states.keys()].sort(), [a.id, b.id].sort());
  t.same(await keyStates(db, []), new Map());
  await t.rejects(createKey(db, { plan: 'gold' as never }), /unknown plan/);
  await t.rejects(createKey(db, { plan: 'free', name: 'x'.repeat(201) }), /longer than 200/);
});

t.test('generated keys use the whole alphabet evenly enough', async (t) => {
  const counts = new Map<string, number>();
  for (let i = 0; i < 400; i++) for (const c of generateKey(false).slice(8)) counts.set(c, (counts.get(c) ?? 0) + 1);
  t.equal(counts.size, 62);
  const values = [...counts.values()];
  t.ok(Math.min(...values) > 100 && Math.max(...values) < 320, 'no character is much more likely than another');
});

t.test('revoke by id or unique prefix', async (t) => {
  const db = await Db.open(':memory:');
  t.teardown(() => db.close());
  const a = await createKey(db, { plan: 'free' });
  const b = await createKey(db, { plan: 'free' });
  const revoked = await revokeKey(db, a.id);
  t.ok(revoked.revoked_at);
  const again = await revokeKey(db, a.id);
  t.equal(again.revoked_at, revoked.revoked_at, 'revoking twice keeps the first time');
  t.ok((await revokeKey(db, b.key.slice(0, 12))).revoked_at, 'by prefix');
  const c = await createKey(db, { plan: 'max' });
  t.equal((await revokeKey(db, c.key)).id, c.id, 'by the full key');
  await t.rejects(revokeKey(db, 'key_nope'), { name: 'KeyNotFoundError' });
  await t.rejects(revokeKey(db, 'tk_live_'), /keys start with|no key/, 'a prefix naming several keys is refused');
  t.same((await listKeys(db, { includeRevoked: false })).length, 0);
  await t.rejects(revokeKey(db, generateKey(true)), { name: 'KeyNotFoundError' });
  t.equal((await keyStates(db, [a.id])).get(a.id)!.revoked_at, revoked.revoked_at);
});
