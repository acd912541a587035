import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { parseConfig } from '../core/config.ts';
import { InMemoryEventBus, type DomainEvent } from '../core/events.ts';
import { claimManifests, enqueueManifests, getManifest, listManifests, manifestKeys, markReady } from './manifests.ts';
import { scheduleExports } from './export-cron.ts';
import { DAY, NEXT_DAY, TZ, openTempDb, seedDay } from '../test/support/exports.ts';
import { rawEvent } from '../test/support/events.ts';
import { captureLogs } from '../test/support/logs.ts';

const configFor = (dir: string, extra: Record<string, unknown> = {}) =>
  parseConfig({
    exports: { dir, ...extra },
    reliability: { timezone: TZ },
  });

function collect(bus: InMemoryEventBus): DomainEvent[] {
  const events: DomainEvent[] = [];
  bus.subscribe((batch) => events.push(...batch));
  return events;
}

const idsIn = async (db: Parameters<typeof listManifests>[0], state: 'ready' | 'pending' | 'failed') =>
  (await listManifests(db, { limit: 100, state })).items.map((m) => m.id).sort();

t.test(
  'start-up recovery: running rows re-queued, temp files deleted, ready rows without their file re-queued',
  async (t) => {
    const { db, exportsDir } = await openTempDb(t.teardown);
    const [crashed, vanished] = await enqueueManifests(db, manifestKeys('alerts', DAY, ['parquet', 'ndjson.gz']));
    await claimManifests(db, [crashed!, vanished!]);
    await markReady(db, vanished!, { rows: 1, bytes: 10, sha256: 'x', schema: [] });
    mkdirSync(join(exportsDir, 'alerts'), { recursive: true });
    const stray = join(exportsDir, 'alerts', `${crashed}.tmp-4242-0badc0de`);
    writeFileSync(stray, 'half a file');
    const unrelated = join(exportsDir, 'alerts', 'notes.txt');
    writeFileSync(unrelated, 'kept');

    const bus = new InMemoryEventBus();
    const job = await scheduleExports(db, bus, configFor(exportsDir), {
      runAtStart: false,
      now: () => new Date('2024-03-10T12:00:00Z'),
    });
    t.teardown(() => job.stop());
    t.same(job.recovered, { reset: [crashed], requeued: [vanished], removedTempFiles: [stray], tightened: [] });
    t.notOk(existsSync(stray));
    t.ok(existsSync(unrelated), 'only temporary export files are deleted');
    t.same(await idsIn(db, 'pending'), [crashed, vanished].sort());
    t.equal(job.timezone, TZ);
  },
);

t.test('the daily pass exports the last finished service day; reliability waits for finalize', async (t) => {
  const { db, exportsDir } = await openTempDb(t.teardown);
  await seedDay(db);
  const bus = new InMemoryEventBus();
  const events = collect(bus);
  let now = new Date('2024-03-11T12:00:00Z'); // 08:00 in New York: DAY is over
  const job = await scheduleExports(db, bus, configFor(exportsDir), { now: () => now });
  t.teardown(() => job.stop());

  t.equal((await idsIn(db, 'ready')).length, 10, 'the start-up pass exported DAY: 5 parts x 2 formats');
  t.ok((await idsIn(db, 'ready')).every((id) => id.includes(DAY)));

  now = new Date('2024-03-12T12:00:00Z');
  const results = await job.runOnce();
  t.same(
    results.map((r) => r.outcome),
    Array(6).fill('ready'),
    'realtime and alerts of NEXT_DAY',
  );
  t.same(
    await idsIn(db, 'pending'),
    [
      `reliability-${NEXT_DAY}.ndjson.gz`,
      `reliability-${NEXT_DAY}.parquet`,
      `stop_events-${NEXT_DAY}.ndjson.gz`,
      `stop_events-${NEXT_DAY}.parquet`,
    ],
    'reliability and stop events of NEXT_DAY wait in pending: the day is not finalized',
  );

  const readyAfterFinalize = new Promise<void>((resolve) => {
    bus.subscribe((batch) => {
      if (
        batch.some(
          (e) => e.type === 'export.ready' && (e.data as { id: string }).id === `reliability-${NEXT_DAY}.parquet`,
        )
      )
        resolve();
    });
  });
  await db.run(
    `INSERT INTO reliability_finalized (service_date, finalized_at, trips, routes) VALUES ($d, now(), 1, 1)`,
    { d: NEXT_DAY },
  );
  bus.publish(rawEvent('reliability.updated', { at_ms: now.getTime(), data: { service_date: NEXT_DAY, final: true } }));
  await readyAfterFinalize;
  t.same(await idsIn(db, 'pending'), []);
  t.match(await getManifest(db, `reliability-${NEXT_DAY}.parquet`), { state: 'ready', rows: 1 });

  t.same(await job.runOnce(), [], 'a later pass finds nothing to do');
  t.equal(events.filter((e) => e.type === 'export.ready').length, 20);
  t.equal(events.filter((e) => e.type === 'export.failed').length, 0);
});

t.test('a day the deployment never served gets no files, and a file queued for it is dropped', async (t) => {
  // a deployment started on NEXT_DAY: nothing was polled or stored for DAY, which is over
  const { db, exportsDir } = await openTempDb(t.teardown);
  const logs = captureLogs('info');
  const bus = new InMemoryEventBus();
  const events = collect(bus);
  const job = await scheduleExports(db, bus, configFor(exportsDir), {
    now: () => new Date('2024-03-11T12:00:00Z'),
    log: logs.logger,
  });
  t.teardown(() => job.stop());
  t.same((await listManifests(db, { limit: 100 })).items, [], 'no manifest row for the day');
  t.notOk(existsSync(exportsDir), 'no file, not even the folder');
  t.match(logs.messages('exports'), [
    /^no service data for service day 2024-03-10: no feed was read during it and no history row belongs to it: no export files$/,
  ]);

  // a row queued before (an older version, or a day whose rows were pruned since) is dropped, not left pending
  await enqueueManifests(db, manifestKeys('alerts', DAY, ['parquet']));
  t.same(
    (await job.runOnce()).map((r) => [r.id, r.outcome]),
    [[`alerts-${DAY}.parquet`, 'no_data']],
  );
  t.same((await listManifests(db, { limit: 100 })).items, []);
  t.same(events, [], 'no export event');
});

t.test('failed files are retried by later passes until max_attempts', async (t) => {
  const { db, root } = await openTempDb(t.teardown);
  await seedDay(db);
  const bus = new InMemoryEventBus();
  const events = collect(bus);
  const blocked = join(root, 'transit.duckdb'); // a file where the export folder should be
  const job = await scheduleExports(
    db,
    bus,
    configFor(blocked, { datasets: ['alerts'], formats: ['parquet'], max_attempts: 2 }),
    {
      now: () => new Date('2024-03-11T12:00:00Z'),
    },
  );
  t.teardown(() => job.stop());
  t.match(await getManifest(db, `alerts-${DAY}.parquet`), { state: 'failed', attempts: 1, error: /EEXIST|ENOTDIR/ });
  t.same(
    (await job.runOnce()).map((r) => r.outcome),
    ['failed'],
    'retried once more',
  );
  t.match(await getManifest(db, `alerts-${DAY}.parquet`), { state: 'failed', attempts: 2 });
  t.same(await job.runOnce(), [], 'no attempts left');
  await new Promise((r) => setImmediate(r));
  t.equal(events.filter((e) => e.type === 'export.failed').length, 2);
});

t.test('an invalid cron expression is refused', async (t) => {
  const { db, exportsDir } = await openTempDb(t.teardown);
  t.throws(
    () => configFor(exportsDir, { cron: 'every day' }),
    /exports\.cron: not a valid cron/,
    'refused by the config schema',
  );
  // and by the scheduler itself, for an expression that did not come through the schema
  const config = configFor(exportsDir);
  const bad = { ...config, exports: { ...config.exports, cron: 'every day' } };
  await t.rejects(scheduleExports(db, new InMemoryEventBus(), bad), /not a valid cron/);
});

t.test('exports.enabled false: recovery only, no pass until asked', async (t) => {
  const { db, exportsDir } = await openTempDb(t.teardown);
  await seedDay(db);
  const [crashed] = await enqueueManifests(db, manifestKeys('alerts', DAY, ['parquet']));
  await claimManifests(db, [crashed!]);
  const job = await scheduleExports(db, new InMemoryEventBus(), configFor(exportsDir, { enabled: false }), {
    now: () => new Date('2024-03-11T12:00:00Z'),
  });
  t.same(job.recovered.reset, [crashed]);
  t.same(await idsIn(db, 'ready'), [], 'no start-up pass');
  t.equal((await job.runOnce()).length, 10, 'a pass on demand still works');
  await job.stop();
});
