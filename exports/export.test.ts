import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { InMemoryEventBus, type DomainEvent } from '../core/events.ts';
import { exportClaimed, runExport } from './job.ts';
import { contentTypeFor, exportFilePath } from './files.ts';
import { DATASETS, EXPORT_DATASETS } from './datasets.ts';
import {
  claimManifests,
  enqueueManifests,
  getManifest,
  listManifests,
  manifestKeys,
  type ExportManifest,
} from './manifests.ts';
import {
  DAY,
  EXPECTED_DAY_ROWS,
  LATER,
  NEXT_DAY,
  TZ,
  expectedArrowType,
  normalizeRow,
  openTempDb,
  parquetRows,
  readNdjsonGz,
  readParquetFile,
  seedDay,
  stableKey,
} from '../test/support/exports.ts';
import type { Db } from '../store/db.ts';

const sortRows = (rows: Record<string, unknown>[]) => rows.map(stableKey).sort();

// What each part of DAY must hold, written out here rather than taken from the dataset SQL.
const SOURCE_OF_DAY: Record<string, string> = {
  trip_outcomes: `SELECT * FROM trip_outcomes WHERE service_date = DATE '${DAY}'`,
  arrivals: `SELECT * FROM arrivals WHERE trip_id IN ('T1', 'T2', 'T5')`,
  vehicle_positions: `SELECT * FROM vehicle_positions WHERE vehicle_id IN ('v"1''é', 'v2', 'v3', 'v6')`,
  alert_versions: `SELECT * FROM alert_versions WHERE alert_id = 'feed-1:a1'`,
};

t.test('every file of two service days reads back through parquet-wasm and gunzip + JSON.parse', async (t) => {
  const { db, exportsDir } = await openTempDb(t.teardown);
  await seedDay(db);
  const bus = new InMemoryEventBus();
  const events: DomainEvent[] = [];
  bus.subscribe((batch) => events.push(...batch));

  const summary = await runExport(db, {
    dataset: ['reliability', 'realtime', 'alerts'],
    from: DAY,
    to: NEXT_DAY,
    dir: exportsDir,
    timezone: TZ,
    now: () => LATER,
    bus,
  });
  t.equal(summary.timezone, TZ);
  const outcomes = Object.fromEntries(summary.files.map((f) => [f.id, f.outcome]));
  t.equal(outcomes[`reliability-${NEXT_DAY}.parquet`], 'not_ready', 'an unfinalized reliability day is not exported');
  t.match(summary.files.find((f) => f.outcome === 'not_ready')?.reason, /not finalized/);
  const ready = summary.files.filter((f) => f.outcome === 'ready');
  t.equal(ready.length, 14, '8 files of DAY (4 parts x 2 formats) and 6 of NEXT_DAY');

  await new Promise((r) => setImmediate(r));
  t.equal(events.filter((e) => e.type === 'export.ready').length, 14, 'one export.ready event per file');
  t.match(events[0], { type: 'export.ready', modes: [], routes: [], data: { sha256: /^[0-9a-f]{64}$/ } });

  const manifests = (await listManifests(db, { limit: 100, state: 'ready' })).items;
  t.equal(manifests.length, 14);
  const byPart = new Map<string, Record<string, ExportManifest>>();
  for (const m of manifests) {
    const path = join(exportsDir, m.file_path);
    const bytes = readFileSync(path);
    t.equal(bytes.length, m.bytes, `${m.id}: byte count as the manifest says`);
    t.equal(createHash('sha256').update(bytes).digest('hex'), m.sha256, `${m.id}: sha256 as the manifest says`);
    t.ok(m.schema && m.schema.length > 0 && m.created_at, `${m.id}: schema and created_at recorded`);
    if (m.format === 'parquet') {
      const table = readParquetFile(path);
      t.equal(table.numRows, m.rows, `${m.id}: row count`);
      t.same(
        table.schema.fields.map((f) => `${f.name}: ${String(f.type)}`),
        m.schema!.map((c) => `${c.name}: ${expectedArrowType(c.type)}`),
        `${m.id}: column names and types as the manifest says`,
      );
    } else {
      const { lines, rows } = readNdjsonGz(path);
      t.equal(lines.length, m.rows, `${m.id}: one line per row`);
      for (const row of rows)
        t.same(
          Object.keys(row),
          m.schema!.map((c) => c.name),
          `${m.id}: keys in schema order`,
        );
    }
    if (m.service_date === DAY) byPart.set(m.part, { ...byPart.get(m.part), [m.format]: m });
  }

  for (const [part, formats] of byPart) {
    const parquet = formats.parquet!;
    const schema = parquet.schema!;
    t.same(formats['ndjson.gz']!.schema, schema, `${part}: both formats record one schema`);
    t.equal(parquet.rows, EXPECTED_DAY_ROWS[part as keyof typeof EXPECTED_DAY_ROWS], `${part}: rows of the day only`);
    const fromParquet = parquetRows(readParquetFile(join(exportsDir, parquet.file_path))).map((r) =>
      normalizeRow(r, schema),
    );
    const fromNdjson = readNdjsonGz(join(exportsDir, formats['ndjson.gz']!.file_path)).rows.map((r) =>
      normalizeRow(r, schema),
    );
    const fromDb = (await db.all(SOURCE_OF_DAY[part]!)).map((r) => normalizeRow(r, schema));
    t.same(sortRows(fromParquet), sortRows(fromDb), `${part}: Parquet rows equal the database rows`);
    t.same(sortRows(fromNdjson), sortRows(fromDb), `${part}: NDJSON rows equal the database rows`);
  }
  t.same(
    readdirSync(join(exportsDir, 'realtime')).filter((n) => n.includes('.tmp-')),
    [],
    'no temporary files left',
  );
});

t.test('columns are typed: instants as TIMESTAMPTZ, ids and enums as VARCHAR, lists and structs native', async (t) => {
  const { db, exportsDir } = await openTempDb(t.teardown);
  await seedDay(db);
  await runExport(db, { dataset: 'alerts', from: DAY, dir: exportsDir, timezone: TZ, now: () => LATER });
  const [ndjson, parquet] = (await listManifests(db, { limit: 10, dataset: 'alerts' })).items;
  const types = Object.fromEntries(parquet!.schema!.map((c) => [c.name, c.type]));
  t.match(types, {
    alert_id: 'VARCHAR',
    status: 'VARCHAR',
    impact: 'VARCHAR',
    version: 'INTEGER',
    modes: 'VARCHAR[]',
    header: 'STRUCT("language" VARCHAR, "text" VARCHAR)[]',
    updated_at: 'TIMESTAMP WITH TIME ZONE',
    active_periods: 'STRUCT(start_at TIMESTAMP WITH TIME ZONE, end_at TIMESTAMP WITH TIME ZONE)[]',
  });
  const { rows } = readNdjsonGz(join(exportsDir, ndjson!.file_path));
  const second = rows.find((r) => r.version === 2)!;
  t.equal(second.updated_at, '2024-03-10T10:00:00.500000Z', 'top-level instants are ISO 8601 UTC with microseconds');
  t.same(
    second.active_periods,
    [
      { start_at: '2024-03-10T06:00:00.000000Z', end_at: '2024-03-10T10:00:00.000000Z' },
      { start_at: null, end_at: '2024-03-12T00:00:00.000000Z' },
    ],
    'nested instants render the same way',
  );
  t.same(
    (rows.find((r) => r.version === 1)!.header as unknown[])[0],
    {
      language: 'en',
      text: 'Line 1: "no" service\nthrough \'Main\'',
    },
    'quotes and newlines survive as structured JSON, not a JSON string',
  );
});

t.test('a second run keeps ready files unless forced; force rewrites them', async (t) => {
  const { db, exportsDir } = await openTempDb(t.teardown);
  await seedDay(db);
  const opts = {
    dataset: 'realtime' as const,
    from: DAY,
    dir: exportsDir,
    timezone: TZ,
    formats: ['parquet' as const],
    now: () => LATER,
  };
  const first = await runExport(db, opts);
  t.same(
    first.files.map((f) => f.outcome),
    ['ready', 'ready'],
  );
  const again = await runExport(db, opts);
  t.same(
    again.files.map((f) => f.outcome),
    ['already_ready', 'already_ready'],
  );
  await db.run(`INSERT INTO vehicle_positions (feed_id, vehicle_id, lat, lon, position_at, observed_at)
    VALUES ('feed-1', 'late', 1, 1, '2024-03-10T12:00:00Z', '2024-03-10T12:00:00Z')`);
  const forced = await runExport(db, { ...opts, force: true });
  t.same(
    forced.files.map((f) => f.outcome),
    ['ready', 'ready'],
  );
  const positions = forced.files.find((f) => f.part === 'vehicle_positions')!.manifest!;
  t.equal(positions.rows, 5, 'the rewrite includes the new row');
  t.equal(positions.attempts, 2);
  t.equal(readParquetFile(join(exportsDir, positions.file_path)).numRows, 5);
});

t.test('a day without service data gets no file; a day a feed was read gets its empty files', async (t) => {
  const { db, exportsDir } = await openTempDb(t.teardown);
  const opts = { dataset: ['realtime', 'alerts'] as const, from: DAY, dir: exportsDir, timezone: TZ, now: () => LATER };
  const none = await runExport(db, { ...opts, dataset: [...opts.dataset] });
  t.same(
    none.files.map((f) => f.outcome),
    ['no_data', 'no_data', 'no_data', 'no_data', 'no_data', 'no_data'],
  );
  t.match(none.files[0]!.reason, /^no service data for service day 2024-03-10: no feed was read during it/);
  t.same((await listManifests(db, { limit: 10 })).items, [], 'no manifest row');
  t.notOk(existsSync(join(exportsDir, 'realtime')), 'no folder, no file');

  // a failed poll is not service data; a successful one is, though it stored nothing
  const poll = (status: string, at: string) =>
    db.run(
      `INSERT INTO feed_polls (feed_id, polled_at, status, bytes, duration_ms, entities, vehicles, trip_updates, alerts,
        stored, rejected, rejected_by_reason) VALUES ('feed-1', $at::TIMESTAMPTZ, $status, 0, 1, 0, 0, 0, 0, 0, 0, [])`,
      {
        at,
        status,
      },
    );
  await poll('timeout', '2024-03-10T12:00:00Z');
  t.equal((await runExport(db, { ...opts, dataset: 'alerts' })).files[0]!.outcome, 'no_data');
  await poll('unchanged', '2024-03-10T12:00:30Z');
  const read = await runExport(db, { ...opts, dataset: 'alerts' });
  t.same(
    read.files.map((f) => [f.outcome, f.manifest?.rows]),
    [
      ['ready', 0],
      ['ready', 0],
    ],
    'the feed was read and carried no alert: the empty file says so',
  );

  // a ready file whose rows are gone (pruned) is never replaced by an empty one, even forced
  await seedDay(db);
  t.equal((await runExport(db, { ...opts, dataset: 'realtime', formats: ['parquet'] })).files[0]!.outcome, 'ready');
  await db.run(`DELETE FROM feed_polls`);
  for (const table of ['arrivals', 'vehicle_positions', 'alert_versions', 'trip_outcomes'])
    await db.run(`DELETE FROM ${table}`);
  const pruned = await runExport(db, { ...opts, dataset: 'realtime', formats: ['parquet'], force: true });
  t.same(
    pruned.files.map((f) => [f.outcome, f.manifest?.state, f.manifest?.rows]),
    [
      ['no_data', 'ready', 3],
      ['no_data', 'ready', 4],
    ],
  );
  t.match(pruned.files[0]!.reason, /the ready file is kept$/);
  t.ok(existsSync(join(exportsDir, 'realtime', `realtime-${DAY}-vehicle_positions.parquet`)));
});

t.test('a day that is not over yet is not exported', async (t) => {
  const { db, exportsDir } = await openTempDb(t.teardown);
  await seedDay(db);
  const summary = await runExport(db, {
    dataset: 'alerts',
    from: NEXT_DAY,
    dir: exportsDir,
    timezone: TZ,
    now: () => new Date('2024-03-12T07:59:00Z'),
  });
  t.same(
    summary.files.map((f) => f.outcome),
    ['not_ready', 'not_ready'],
  );
  t.match(summary.files[0]!.reason, /runs until 2024-03-12T08:00:00.000Z/);
  t.same((await listManifests(db, { limit: 10 })).items, [], 'no manifest row for it');
  t.notOk(existsSync(join(exportsDir, 'alerts')));
});

t.test('bad requests are refused before anything is written', async (t) => {
  const { db, exportsDir } = await openTempDb(t.teardown);
  const base = { dataset: 'alerts' as const, from: DAY, dir: exportsDir, timezone: TZ };
  await t.rejects(runExport(db, { ...base, dataset: 'bogus' as never }), RangeError);
  await t.rejects(runExport(db, { ...base, dataset: [] }), RangeError);
  await t.rejects(runExport(db, { ...base, formats: ['csv' as never] }), /format must be one of/);
  await t.rejects(runExport(db, { ...base, from: '2024-02-30' }), /from must be a date/);
  await t.rejects(runExport(db, { ...base, to: 'tomorrow' }), /to must be a date/);
  await t.rejects(runExport(db, { ...base, to: '2024-03-01' }), /not be before/);
  await t.rejects(runExport(db, { ...base, from: '2023-01-01', to: '2024-12-31' }), /at most 400 days/);
  await t.rejects(runExport(db, { ...base, serviceDayEnd: '25:00' }), RangeError);
  t.same((await listManifests(db, { limit: 10 })).items, []);
});

t.test('a file that cannot be written ends failed with its error and an export.failed event', async (t) => {
  const { db, root } = await openTempDb(t.teardown);
  await seedDay(db);
  const bus = new InMemoryEventBus();
  const events: DomainEvent[] = [];
  bus.subscribe((batch) => events.push(...batch));
  // the export folder is a file, so creating the dataset folder fails
  const dir = join(root, 'transit.duckdb');
  const summary = await runExport(db, { dataset: 'alerts', from: DAY, dir, timezone: TZ, now: () => LATER, bus });
  t.same(
    summary.files.map((f) => f.outcome),
    ['failed', 'failed'],
  );
  t.match(summary.files[0], { manifest: { state: 'failed', error: /EEXIST|ENOTDIR/, attempts: 1, rows: null } });
  await new Promise((r) => setImmediate(r));
  t.same(
    events.map((e) => e.type),
    ['export.failed', 'export.failed'],
  );
  t.match(events[0]!.data, { id: /^alerts-2024-03-10/, error: /EEXIST|ENOTDIR/, attempts: 1 });
});

t.test('download helpers: only ready files, never outside the export folder', async (t) => {
  const { db, exportsDir } = await openTempDb(t.teardown);
  await seedDay(db);
  await runExport(db, {
    dataset: 'alerts',
    from: DAY,
    dir: exportsDir,
    timezone: TZ,
    now: () => LATER,
    formats: ['parquet'],
  });
  const readyExport = async (db: Db, dir: string, id: string) => {
    const manifest = await getManifest(db, id);
    return manifest?.state === 'ready' ? { manifest, path: exportFilePath(dir, manifest) } : null;
  };
  const found = await readyExport(db, exportsDir, `alerts-${DAY}.parquet`);
  t.equal(found?.path, join(exportsDir, 'alerts', `alerts-${DAY}.parquet`));
  t.equal(found?.manifest.state, 'ready');
  t.equal(await readyExport(db, exportsDir, `alerts-${DAY}.ndjson.gz`), null, 'no row');
  await runExport(db, { dataset: 'realtime', from: '2999-01-01', dir: exportsDir, timezone: TZ, formats: ['parquet'] });
  t.equal(await readyExport(db, exportsDir, 'missing.parquet'), null);
  t.throws(() => exportFilePath(exportsDir, { file_path: '../transit.duckdb' }), /escapes/);
  t.throws(() => exportFilePath(exportsDir, { file_path: '/etc/passwd' }), /escapes/);
  t.equal(contentTypeFor('parquet'), 'application/vnd.apache.parquet');
  t.equal(contentTypeFor('ndjson.gz'), 'application/gzip');
  // the public surface resolves as one module
  const api = await import('./index.ts');
  t.type(api.listManifests, 'function');
  t.type(api.signDownload, 'function');
  t.type(api.scheduleExports, 'function');
});

t.test('when no export connection can be opened, claimed files end failed rather than stay running', async (t) => {
  const { db, exportsDir } = await openTempDb(t.teardown);
  const ids = await enqueueManifests(db, manifestKeys('alerts', DAY, ['parquet', 'ndjson.gz']));
  const claimed = await claimManifests(db, ids);
  const broken = new Proxy(db, {
    get: (target, prop) =>
      prop === 'connect' ? () => Promise.reject(new Error('no connections left')) : Reflect.get(target, prop, target),
  });
  const steps: string[] = [];
  const results = await exportClaimed(
    {
      db: broken,
      dir: exportsDir,
      timezone: TZ,
      serviceDayEnd: '04:00',
      onProgress: (p) => steps.push(`${p.step} ${p.done}/${p.total}`),
    },
    claimed,
  );
  t.same(
    results.map((r) => [r.outcome, r.reason]),
    [
      ['failed', 'no connections left'],
      ['failed', 'no connections left'],
    ],
  );
  t.same(steps, ['failed 1/2', 'failed 2/2']);
  t.same(
    (await listManifests(db, { limit: 10 })).items.map((m) => m.state),
    ['failed', 'failed'],
  );
});

t.test('stop events: a file per finalized service day, the same rows in both formats', async (t) => {
  const { db, exportsDir } = await openTempDb(t.teardown);
  await seedDay(db); // finalizes DAY, not NEXT_DAY
  const event = (trip: string, day: string, seq: number, relationship: string, errors: string) => {
    const scheduled = relationship === 'scheduled';
    const times = scheduled ? `TIMESTAMPTZ '${day}T12:01:00Z', TIMESTAMPTZ '${day}T12:01:40.5Z'` : 'NULL, NULL';
    const figures = scheduled ? `'vp', 'vp', 'vp', 60, 70, 40, 300, 240, 420, 600` : Array(10).fill('NULL').join(', ');
    return `('feed-1', 'ct', DATE '${day}', '${trip}', NULL, 'R1', 'bus', 0, 'S${seq}', 'ST${seq}', ${seq}, 'v1',
      TIMESTAMPTZ '${day}T12:00:00Z', TIMESTAMPTZ '${day}T12:00:30Z', ${times}, ${figures},
      '${relationship}', true, ${seq === 1}, false, ${errors}, TIMESTAMPTZ '${day}T12:02:00Z')`;
  };
  const errors =
    "[{'horizon': '0-3', 'error_s': -20, 'samples': 4}, " + "{'horizon': '12-30', 'error_s': 95, 'samples': 1}]";
  await db.run(`INSERT INTO stop_events VALUES
    ${event('T1', DAY, 1, 'scheduled', errors)},
    ${event('T1', DAY, 2, 'skipped', 'NULL')},
    ${event('T2', DAY, 1, 'canceled', 'NULL')},
    ${event('T3', NEXT_DAY, 1, 'scheduled', 'NULL')}`);
  const summary = await runExport(db, {
    dataset: 'stop_events',
    from: DAY,
    to: NEXT_DAY,
    dir: exportsDir,
    timezone: TZ,
    now: () => LATER,
  });
  t.same(
    summary.files.map((f) => [f.id, f.outcome]).sort(),
    [
      [`stop_events-${DAY}.ndjson.gz`, 'ready'],
      [`stop_events-${DAY}.parquet`, 'ready'],
      [`stop_events-${NEXT_DAY}.ndjson.gz`, 'not_ready'],
      [`stop_events-${NEXT_DAY}.parquet`, 'not_ready'],
    ],
    'a day is exported once finalized (trips past midnight and closed by timeout are written late)',
  );
  const manifests = (await listManifests(db, { limit: 10, dataset: 'stop_events', state: 'ready' })).items;
  const parquet = manifests.find((m) => m.format === 'parquet')!;
  const schema = parquet.schema!;
  t.match(Object.fromEntries(schema.map((c) => [c.name, c.type])), {
    service_date: 'DATE',
    actual_arrival_at: 'TIMESTAMP WITH TIME ZONE',
    dwell_s: 'INTEGER',
    prediction_errors: 'STRUCT(horizon VARCHAR, error_s INTEGER, samples INTEGER)[]',
  });
  const fromDb = (await db.all(`SELECT * FROM stop_events WHERE service_date = DATE '${DAY}'`)).map((r) =>
    normalizeRow(r, schema),
  );
  t.equal(fromDb.length, 3);
  const fromParquet = parquetRows(readParquetFile(join(exportsDir, parquet.file_path))).map((r) =>
    normalizeRow(r, schema),
  );
  const ndjson = manifests.find((m) => m.format === 'ndjson.gz')!;
  const fromNdjson = readNdjsonGz(join(exportsDir, ndjson.file_path)).rows.map((r) => normalizeRow(r, schema));
  t.same(sortRows(fromParquet), sortRows(fromDb), 'Parquet rows equal the database rows');
  t.same(sortRows(fromNdjson), sortRows(fromDb), 'NDJSON rows equal the database rows');
});

t.test('every dataset carries the schedule its ids belong to (ids across agencies)', async (t) => {
  // two schedules' route `1` are told apart by (schedule_id, route_id): never the API's prefixed form
  for (const dataset of EXPORT_DATASETS)
    for (const part of DATASETS[dataset].parts)
      t.ok(
        part.columns.some((c) => c.name === 'schedule_id'),
        `${dataset}/${part.part} has schedule_id`,
      );
});
