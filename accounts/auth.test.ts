import t, { type Test } from 'tap';
import { Db } from '../store/db.ts';
import { KeyStore } from './auth.ts';
import { createKey, generateKey, revokeKey } from './keys.ts';
import { logInto } from '../test/support/logs.ts';
import { appendUsageBuckets, keyPartition } from './store.ts';

async function setup(t: Test) {
  const db = await Db.open(':memory:');
  let queries = 0;
  const sqls: string[] = [];
  /** how many key ids each statement asked about (a list parameter), else 0 */
  const idsAsked: number[] = [];
  const all = db.all.bind(db);
  db.all = ((sql: string, params?: never) => {
    queries++;
    sqls.push(sql);
    const list = Array.isArray(params) ? (params[0] as { items?: unknown[] } | undefined) : undefined;
    idsAsked.push(list?.items?.length ?? 0);
    return all(sql, params);
  }) as typeof db.all;
  const clock = { now: 1_000_000 };
  const store = new KeyStore(db, { recheckMs: 1_000, clock: () => clock.now, negativeTtlMs: 500 });
  t.teardown(async () => {
    await store.close();
    await db.close();
  });
  /** the statements run while `during` runs */
  const statements = async (during: () => Promise<unknown>): Promise<string[]> => {
    const from = sqls.length;
    await during();
    return sqls.slice(from);
  };
  /** the key ids read back while `during` runs */
  const idsReadBack = async (during: () => Promise<unknown>): Promise<number> => {
    const from = idsAsked.length;
    await during();
    return idsAsked.slice(from).reduce((a, b) => a + b, 0);
  };
  return { db, store, clock, queries: () => queries, statements, idsReadBack };
}

t.test('a known key is looked up once, then served from memory', async (t) => {
  const { db, store, clock, queries } = await setup(t);
  const created = await createKey(db, { plan: 'regular', test: true });
  const before = queries();
  const [a, b] = await Promise.all([
    store.authenticate(created.key, clock.now),
    store.authenticate(created.key, clock.now),
  ]);
  t.equal(queries() - before, 1, 'concurrent first uses share one query');
  t.same(a, { id: created.id, plan: 'regular', test: true, prefix: created.prefix });
  t.equal(a, b);
  const sync = store.authenticate(created.key, clock.now);
  t.notOk(sync instanceof Promise, 'a cached key answers synchronously');
  t.equal(queries() - before, 1);
});

t.test('malformed and unknown keys', async (t) => {
  const { store, clock, queries } = await setup(t);
  t.equal(store.authenticate('nope', clock.now), null, 'malformed keys never reach the database');
  t.equal(store.authenticate(`tk_live_${'x'.repeat(31)}`, clock.now), null);
  const unknown = generateKey(false);
  const before = queries();
  t.equal(await store.authenticate(unknown, clock.now), null);
  t.equal(await store.authenticate(unknown, clock.now), null);
  t.equal(queries() - before, 1, 'an unknown key is remembered for a moment');
  clock.now += 600;
  t.equal(await store.authenticate(unknown, clock.now), null);
  t.equal(queries() - before, 2, 'and asked again after that');
});

t.test('revocations reach the cache through the recheck, or at once with invalidate', async (t) => {
  const { db, store, clock } = await setup(t);
  const a = await createKey(db, { plan: 'free' });
  const b = await createKey(db, { plan: 'max' });
  t.ok(await store.authenticate(a.key, clock.now));
  t.ok(await store.authenticate(b.key, clock.now));
  await revokeKey(db, a.id);
  t.ok(store.authenticate(a.key, clock.now), 'still cached until the recheck');
  await store.recheck();
  t.equal(store.authenticate(a.key, clock.now), null, 'revoked after the recheck');
  t.ok(store.authenticate(b.key, clock.now), 'others untouched');
  store.invalidate(b.id);
  await revokeKey(db, b.id);
  t.equal(await store.authenticate(b.key, clock.now), null, 'invalidate drops the cached answer at once');
});

// A recheck read every cached key back (~25 µs of main-thread time each): with 1,200 keys a 30 ms
// stall every two seconds. Now it asks the table's fingerprints, one per sixteenth of the keys, and
// reads back the cached keys of a sixteenth only when it moved.
const readsKeyRows = (sql: string) => /\bSELECT\s+id, key_hash/.test(sql);

t.test('a recheck of an unchanged key table reads no key row, and keeps every cached key fresh', async (t) => {
  const { db, store, clock, statements, idsReadBack } = await setup(t);
  const created: Awaited<ReturnType<typeof createKey>>[] = [];
  for (let i = 0; i < 30; i++) created.push(await createKey(db, { plan: i % 2 ? 'regular' : 'max' }));
  for (const c of created) t.ok(await store.authenticate(c.key, clock.now));
  t.equal(await idsReadBack(() => store.recheck()), 30, 'the first recheck reads every cached key back');
  for (let round = 0; round < 5; round++) {
    clock.now += 1_000;
    const run = await statements(() => store.recheck());
    t.equal(run.length, 1, `recheck ${round + 2}: one statement`);
    t.notOk(run.some(readsKeyRows), 'and no key row read');
  }
  // five intervals on, past three recheck intervals: the entries would be stale had the rechecks not vouched for them
  for (const c of created) t.notOk(store.authenticate(c.key, clock.now) instanceof Promise, 'answered from memory');

  const samePartition = (id: string) => created.filter((c) => keyPartition(c.id) === keyPartition(id)).length;
  await db.run("UPDATE api_keys SET plan = 'free' WHERE id = $1", [created[0]!.id]);
  t.equal(
    await idsReadBack(() => store.recheck()),
    samePartition(created[0]!.id),
    'a plan changed by SQL reads back the cached keys of its partition, and only those',
  );
  t.equal((store.authenticate(created[0]!.key, clock.now) as { plan: string }).plan, 'free');
  await db.run('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [created[1]!.id]);
  await store.recheck();
  t.equal(store.authenticate(created[1]!.key, clock.now), null, 'a revocation by SQL too');
  const added = await createKey(db, { plan: 'free' });
  const cachedThere = created.filter((c, i) => i !== 1 && keyPartition(c.id) === keyPartition(added.id)).length;
  t.equal(await idsReadBack(() => store.recheck()), cachedThere, 'a key created: the cached keys of its partition');
});

t.test('a key looked up while a recheck reads its changed partition is read back by the next one', async (t) => {
  const { db, store, clock, statements, idsReadBack } = await setup(t);
  const a = await createKey(db, { plan: 'free' });
  // keys of a's partition, so that each change below moves the fingerprint that b depends on
  const inPartitionOfA = async () => {
    for (;;) {
      const k = await createKey(db, { plan: 'free' });
      if (keyPartition(k.id) === keyPartition(a.id)) return k;
    }
  };
  const b = await inPartitionOfA();
  t.ok(await store.authenticate(a.key, clock.now));
  await store.recheck();
  await inPartitionOfA();
  // b's lookup may read the table before the running recheck's fingerprint, which then stands
  // for a table b's state may predate (a revocation in between): it cannot vouch for b
  const running = store.recheck();
  t.ok(await store.authenticate(b.key, clock.now));
  await running;
  t.equal(await idsReadBack(() => store.recheck()), 1, 'the next recheck reads b back, alone');
  t.equal((await statements(() => store.recheck())).length, 1, 'after which the fingerprints suffice');
});

t.test('revocation listeners hear of invalidate and of a recheck that finds a revoked key, once', async (t) => {
  const { db, store, clock } = await setup(t);
  const heard: string[] = [];
  const stop = store.onRevoked((keyId) => heard.push(keyId));
  store.onRevoked(() => {
    throw new Error('a broken listener');
  });
  const a = await createKey(db, { plan: 'free' });
  const b = await createKey(db, { plan: 'max' });
  t.ok(await store.authenticate(a.key, clock.now));
  t.ok(await store.authenticate(b.key, clock.now));
  await store.recheck();
  t.same(heard, [], 'nothing revoked, nothing told');
  // revoked by SQL: only the recheck can know
  await db.run('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [a.id]);
  await store.recheck();
  t.same(heard, [a.id], 'the recheck tells of the revoked key; a throwing listener stops no other');
  await store.recheck();
  t.same(heard, [a.id], 'a key already known revoked is not told again');
  store.invalidate(b.id);
  t.same(heard, [a.id, b.id], 'invalidate tells at once');
  stop();
  store.invalidate(b.id);
  t.equal(heard.length, 2, 'unsubscribed');
});

t.test('a cache entry older than three recheck intervals is not trusted', async (t) => {
  const { db, store, clock, queries } = await setup(t);
  const a = await createKey(db, { plan: 'regular' });
  await store.authenticate(a.key, clock.now);
  clock.now += 3_001;
  const before = queries();
  const again = store.authenticate(a.key, clock.now);
  t.ok(again instanceof Promise, 'falls back to the database');
  t.ok(await again);
  t.equal(queries() - before, 1);
});

t.test('the background recheck runs on its timer and survives failures', async (t) => {
  const db = await Db.open(':memory:');
  const logged: string[] = [];
  // a frozen clock keeps entries fresh, so only the timer can change the answer
  const now = 5_000;
  const store = new KeyStore(db, { recheckMs: 20, clock: () => now, log: logInto((m) => logged.push(m)) }).start();
  const a = await createKey(db, { plan: 'free' });
  t.ok(await store.authenticate(a.key, now));
  await revokeKey(db, a.id);
  const deadline = Date.now() + 5_000;
  while (store.authenticate(a.key, now) !== null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  t.equal(store.authenticate(a.key, now), null, 'the timer applied the revocation');
  const b = await createKey(db, { plan: 'free' });
  t.ok(await store.authenticate(b.key, now));
  store.start();
  await db.close();
  while (logged.length === 0 && Date.now() < deadline + 5_000) await new Promise((r) => setTimeout(r, 10));
  t.match(logged, ['api key recheck failed']);
  t.ok(store.authenticate(b.key, now), 'a failed recheck keeps the cached answers');
  await store.close();
});

t.test('a key first seen while a recheck is running is not mistaken for a revoked one', async (t) => {
  const { db, store, clock } = await setup(t);
  const a = await createKey(db, { plan: 'free' });
  const b = await createKey(db, { plan: 'free' });
  t.ok(await store.authenticate(a.key, clock.now));
  // b's lookup is queued first and lands while the recheck's query (which did not ask about b) runs
  const fresh = store.authenticate(b.key, clock.now);
  const recheck = store.recheck();
  await recheck;
  t.ok(await fresh);
  t.ok(store.authenticate(b.key, clock.now), 'still valid after the recheck finished');
});

// issue 15: the lookup by SHA-256 is the protection; the cache used to compare the stored hash
// with itself in timingSafeEqual, which could never fail
t.test('a key one character away from a cached key is refused; no self-comparison in the hot path', async (t) => {
  const { db, store, clock } = await setup(t);
  const created = await createKey(db, { plan: 'max', test: false });
  t.ok(await store.authenticate(created.key, clock.now), 'cached');
  const last = created.key.at(-1)!;
  const near = `${created.key.slice(0, -1)}${last === 'A' ? 'B' : 'A'}`;
  t.equal(await store.authenticate(near, clock.now), null);
  const { readFileSync } = await import('node:fs');
  const source = readFileSync(new URL('./auth.ts', import.meta.url), 'utf8');
  t.notMatch(source, /timingSafeEqual\(/, 'no constant-time compare of a hash with itself');
});

// issue 28 pt 4: a token already matched is answered without hashing it again; what reaches
// the entries by hash (a recheck's verdict, invalidate, going stale) reaches it too
t.test('tokens remembered as they came follow every revocation path, within their bound', async (t) => {
  const db = await Db.open(':memory:');
  const clock = { now: 1_000_000 };
  const store = new KeyStore(db, { recheckMs: 1_000, clock: () => clock.now, maxTokenEntries: 1 });
  t.teardown(async () => {
    await store.close();
    await db.close();
  });
  const a = await createKey(db, { plan: 'free' });
  const b = await createKey(db, { plan: 'max' });
  t.ok(await store.authenticate(a.key, clock.now));
  t.ok(await store.authenticate(b.key, clock.now));
  for (let i = 0; i < 3; i++) {
    // one token remembered at a time: the other is found by its hash, synchronously
    t.equal((store.authenticate(a.key, clock.now) as { id: string }).id, a.id);
    t.equal((store.authenticate(b.key, clock.now) as { id: string }).id, b.id);
  }
  await db.run('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [b.id]);
  await store.recheck();
  t.equal(store.authenticate(b.key, clock.now), null, 'a recheck reaches the remembered token');
  store.invalidate(a.id);
  await revokeKey(db, a.id);
  const again = store.authenticate(a.key, clock.now);
  t.ok(again instanceof Promise, 'invalidate forgets the token too: the database is asked');
  t.equal(await again, null);
});

t.test('a remembered token whose entry went stale is served by the fresh lookup, and revoked with it', async (t) => {
  const { db, store, clock } = await setup(t);
  const a = await createKey(db, { plan: 'regular' });
  t.ok(await store.authenticate(a.key, clock.now));
  t.ok(store.authenticate(a.key, clock.now), 'remembered');
  clock.now += 3_001;
  const fresh = store.authenticate(a.key, clock.now);
  t.ok(fresh instanceof Promise, 'stale: looked up again');
  t.ok(await fresh);
  t.notOk(store.authenticate(a.key, clock.now) instanceof Promise, 'then answered from memory');
  await db.run('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [a.id]);
  await store.recheck();
  t.equal(store.authenticate(a.key, clock.now), null, 'the recheck of the new entry reaches the token');
});

t.test('start() loads the keys used in the last day, so their first request answers from memory', async (t) => {
  const db = await Db.open(':memory:');
  t.teardown(() => db.close());
  const now = Date.now();
  const used = await createKey(db, { plan: 'regular' });
  const usedTest = await createKey(db, { plan: 'free', test: true });
  const usedLongAgo = await createKey(db, { plan: 'max' });
  const usedRevoked = await createKey(db, { plan: 'max' });
  const unused = await createKey(db, { plan: 'max' });
  const bucket = (keyId: string, atMs: number) => ({
    keyId,
    plan: 'max',
    unit: 'request',
    method: 'GET',
    endpoint: '/api/v1/alerts',
    status: 200,
    second: Math.floor(atMs / 1000),
    calls: 1,
    quantity: 1,
    latencyTotal: 1,
    latencyMax: 1,
  });
  await appendUsageBuckets(db, false, [
    bucket(used.id, now - 60_000),
    bucket(usedRevoked.id, now - 60_000),
    bucket(usedLongAgo.id, now - 3 * 86_400_000),
  ]);
  await appendUsageBuckets(db, true, [bucket(usedTest.id, now - 1_000)]);
  await revokeKey(db, usedRevoked.id);

  const store = new KeyStore(db, { recheckMs: 60_000, clock: () => now });
  t.teardown(() => store.close());
  t.equal(await store.warm(), 2, 'the live and the test key used today');
  for (const k of [used, usedTest]) {
    const answer = store.authenticate(k.key, now);
    t.notOk(answer instanceof Promise, 'answered from memory');
    t.equal((answer as { id: string }).id, k.id);
  }
  for (const k of [usedLongAgo, unused]) {
    const answer = store.authenticate(k.key, now);
    t.ok(answer instanceof Promise, 'looked up');
    t.equal(((await answer) as { id: string }).id, k.id);
  }
  t.equal(await store.authenticate(usedRevoked.key, now), null, 'a revoked key is not loaded, and stays refused');
  t.equal(await store.warm(1), 0, 'keys already cached are not loaded again');

  const started = new KeyStore(db, { recheckMs: 60_000, clock: () => now, warmKeys: 1 }).start();
  await started.close();
  t.notOk(started.authenticate(usedTest.key, now) instanceof Promise, 'start() loads the most recently used first');
  const beyond = started.authenticate(used.key, now);
  t.ok(beyond instanceof Promise, 'within warmKeys');
  await beyond;
});

t.test('first uses of many keys at once are read in a few batched queries, not one query each', async (t) => {
  const { db, store, clock, queries } = await setup(t);
  const created: Awaited<ReturnType<typeof createKey>>[] = [];
  for (let i = 0; i < 50; i++) created.push(await createKey(db, { plan: i % 2 ? 'max' : 'free' }));
  const unknownKey = generateKey(false);
  const before = queries();
  const answers = await Promise.all([
    ...created.map((c) => store.authenticate(c.key, clock.now)),
    store.authenticate(unknownKey, clock.now),
  ]);
  t.equal(queries() - before, 1, '51 first uses in one turn: one query');
  t.same(
    answers.map((a) => (a as { id: string } | null)?.id ?? null),
    [...created.map((c) => c.id), null],
    'each gets its own key, the unknown one null',
  );
  for (const c of created) t.notOk(store.authenticate(c.key, clock.now) instanceof Promise, 'then cached');
});
