import t from 'tap';
import { addDays } from '../core/dates.ts';
import {
  claimManifests,
  enqueueManifests,
  getManifest,
  listManifests,
  manifestKeys,
  markFailed,
  markReady,
  resetRunning,
  type ExportManifest,
  type ManifestQuery,
} from './manifests.ts';
import { openTempDb } from '../test/support/exports.ts';

const FILE = { rows: 10, bytes: 123, sha256: 'ab'.repeat(32), schema: [{ name: 'a', type: 'VARCHAR' }] };

async function pageThrough(db: Parameters<typeof listManifests>[0], query: Omit<ManifestQuery, 'cursor'>) {
  const seen: ExportManifest[] = [];
  let cursor: ManifestQuery['cursor'];
  let pages = 0;
  do {
    const page = await listManifests(db, { ...query, cursor });
    seen.push(...page.items);
    cursor = page.next_cursor ?? undefined;
    pages++;
  } while (cursor && pages < 100);
  return { seen, pages };
}

t.test('the state machine: pending → running → ready | failed, and only from the right state', async (t) => {
  const { db } = await openTempDb(t.teardown);
  const keys = manifestKeys('realtime', '2024-03-10', ['parquet', 'ndjson.gz']);
  const ids = await enqueueManifests(db, [...keys, keys[0]!], { now: new Date('2024-03-11T00:00:00Z') });
  t.same(
    ids,
    [
      'realtime-2024-03-10-arrivals.parquet',
      'realtime-2024-03-10-arrivals.ndjson.gz',
      'realtime-2024-03-10-vehicle_positions.parquet',
      'realtime-2024-03-10-vehicle_positions.ndjson.gz',
    ],
    'one row per file, even when a key is repeated',
  );
  t.match(await getManifest(db, ids[0]!), {
    state: 'pending',
    attempts: 0,
    dataset: 'realtime',
    part: 'arrivals',
    service_date: '2024-03-10',
    format: 'parquet',
    file_path: 'realtime/realtime-2024-03-10-arrivals.parquet',
    queued_at: '2024-03-11T00:00:00.000Z',
    rows: null,
    created_at: null,
  });
  t.same(await enqueueManifests(db, keys), ids, 'queuing again keeps pending rows pending');

  const claimed = await claimManifests(db, ids.slice(0, 3));
  t.same(
    claimed.map((m) => m.state),
    ['running', 'running', 'running'],
  );
  t.same(await claimManifests(db, ids.slice(0, 3)), [], 'a running row cannot be claimed twice');
  t.same(await enqueueManifests(db, keys.slice(0, 1), { force: true }), [], 'running rows are never re-queued');

  const ready = await markReady(db, ids[0]!, FILE, new Date('2024-03-11T01:00:00Z'));
  t.match(ready, {
    state: 'ready',
    rows: 10,
    bytes: 123,
    sha256: FILE.sha256,
    schema: FILE.schema,
    created_at: '2024-03-11T01:00:00.000Z',
    attempts: 1,
  });
  await t.rejects(markReady(db, ids[0]!, FILE), /is not running/, 'ready only from running');
  await t.rejects(markReady(db, ids[3]!, FILE), /is not running/, 'a pending row cannot become ready');
  t.match(await markFailed(db, ids[1]!, 'disk full'), { state: 'failed', error: 'disk full' });
  t.equal(await markFailed(db, ids[1]!, 'again'), null, 'failed only from running');

  t.same(await resetRunning(db), [ids[2]], 'recovery resets the row left running');
  t.same(await enqueueManifests(db, keys), [ids[1], ids[2], ids[3]], 'failed rows are re-queued, ready ones kept');
  t.match(await getManifest(db, ids[1]!), { state: 'pending', error: null, attempts: 1 });
  t.same(await enqueueManifests(db, keys.slice(0, 1), { force: true }), [ids[0]], 'force re-queues a ready row');
  t.equal(await getManifest(db, 'nope.parquet'), null);
});

t.test('listManifests: filters, newest day first, keyset pages stable under inserts', async (t) => {
  const { db } = await openTempDb(t.teardown);
  for (let i = 0; i < 10; i++) {
    const date = addDays('2024-03-01', i);
    await enqueueManifests(db, [
      ...manifestKeys('alerts', date, ['parquet', 'ndjson.gz']),
      ...manifestKeys('realtime', date, ['parquet']),
    ]);
  }
  const all = await pageThrough(db, { limit: 7 });
  t.equal(all.seen.length, 40);
  t.equal(all.pages, 6);
  t.equal(new Set(all.seen.map((m) => m.id)).size, 40, 'no row twice');
  t.equal(all.seen[0]!.service_date, '2024-03-10', 'newest service day first');
  t.same(
    all.seen.slice(0, 4).map((m) => m.id),
    [
      'alerts-2024-03-10.ndjson.gz',
      'alerts-2024-03-10.parquet',
      'realtime-2024-03-10-arrivals.parquet',
      'realtime-2024-03-10-vehicle_positions.parquet',
    ],
  );

  const filtered = await pageThrough(db, {
    limit: 3,
    dataset: 'alerts',
    format: 'parquet',
    from: '2024-03-03',
    to: '2024-03-05',
  });
  t.same(
    filtered.seen.map((m) => m.id),
    ['alerts-2024-03-05.parquet', 'alerts-2024-03-04.parquet', 'alerts-2024-03-03.parquet'],
  );
  t.equal(filtered.pages, 1, 'an exactly full page has no next cursor');

  // rows added while paging (a newer day and an older one) never shift what later pages hold
  const first = await listManifests(db, { limit: 5, dataset: 'realtime' });
  await enqueueManifests(db, manifestKeys('realtime', '2024-03-20', ['parquet']));
  await enqueueManifests(db, manifestKeys('realtime', '2024-02-01', ['parquet']));
  const rest = await pageThrough(db, { limit: 100, dataset: 'realtime' });
  const second = await listManifests(db, { limit: 100, dataset: 'realtime', cursor: first.next_cursor! });
  t.same(
    second.items.map((m) => m.id),
    rest.seen
      .filter(
        (m) => m.service_date < '2024-03-08' || (m.service_date === '2024-03-08' && m.part === 'vehicle_positions'),
      )
      .map((m) => m.id),
  );
  t.equal(second.next_cursor, null);

  const claimed = await claimManifests(db, ['alerts-2024-03-01.parquet']);
  t.equal(claimed.length, 1);
  t.same(
    (await listManifests(db, { limit: 10, state: 'running' })).items.map((m) => m.id),
    ['alerts-2024-03-01.parquet'],
  );
});

t.test('listManifests refuses malformed queries', async (t) => {
  const { db } = await openTempDb(t.teardown);
  const bad: [Partial<ManifestQuery>, RegExp][] = [
    [{ limit: 0 }, /limit/],
    [{ limit: 1001 }, /limit/],
    [{ limit: 1.5 }, /limit/],
    [{ dataset: 'nope' as never }, /dataset/],
    [{ format: 'csv' as never }, /format/],
    [{ state: 'done' as never }, /state/],
    [{ from: '2024-13-01' }, /from/],
    [{ to: 'x' }, /to/],
    [{ cursor: ['2024-03-01'] as never }, /cursor/],
    [{ cursor: ['yesterday', 'a'] }, /cursor/],
    [{ cursor: ['2024-03-01', ''] }, /cursor/],
  ];
  for (const [query, message] of bad) {
    await t.rejects(listManifests(db, { limit: 10, ...query }), message, JSON.stringify(query));
  }
});
