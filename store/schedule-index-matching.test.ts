// The schedule index's lookups for trip matching: trip spans, trips by first departure, trips by
// NYCT origin and path, built from schedules imported through DuckDB.
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nyctKey } from '../core/nyct-trip-id.ts';
import { nyctColumnGtfs, nyctEmbeddedGtfs } from '../test/support/nyct-gtfs.ts';
import { Db } from './db.ts';
import { importGtfs } from './gtfs-import.ts';
import { loadScheduleIndex } from './schedule-index.ts';
import { writeFeedFolder } from '../test/support/gtfs-fixture.ts';

const dir = mkdtempSync(join(tmpdir(), 'schedule-index-matching-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

t.test('spans and trips by first departure', async (t) => {
  const db = await Db.open(':memory:');
  t.teardown(() => db.close());
  await importGtfs(db, 'n', writeFeedFolder(join(dir, 'embedded'), nyctEmbeddedGtfs()));
  const index = await loadScheduleIndex(db, 'n');
  t.same(index.tripSpan('B44-late'), { start_s: 88_200, end_s: 88_800 }, '24:30:00 → 24:40:00, past the day');
  t.equal(index.tripSpan('nope'), undefined);
  const ids = (list: readonly { trip_id: string }[]) => list.map((x) => x.trip_id).sort();
  t.same(ids(index.tripsStartingAt('B44', 0, 88_200)), ['B44-late']);
  t.same(ids(index.tripsStartingAt('B44', null, 88_200)), ['B44-late'], 'either direction');
  t.same(ids(index.tripsStartingAt('B44', 1, 88_200)), [], 'the other direction');
  t.same(ids(index.tripsStartingAt('2', null, 21_630)), [
    'AFA24GEN-2043-Weekday-00_036050_2..S07R',
    'AFA24GEN-2043-Weekday-00_036050_2..S08R',
  ]);
  t.same(ids(index.tripsStartingAt('B44', 0, 1_800)), [], '00:30 of the day is not 24:30 of the day before');
});

for (const [name, files, ids] of [
  [
    'ids that embed origin and path',
    nyctEmbeddedGtfs(),
    [
      'AFA24GEN-2043-Weekday-00_036050_2..S07R',
      'AFA24GEN-2043-Weekday-00_036050_2..S08R',
      'AFA24GEN-1037-Weekday-00_145000_1..N03R',
    ],
  ],
  ['an mta_trip_id column', nyctColumnGtfs(), ['2-0600-a', '2-0600-b', '1-2410']],
] as const) {
  t.test(`NYCT lookups from ${name}`, async (t) => {
    const db = await Db.open(':memory:');
    t.teardown(() => db.close());
    await importGtfs(db, 'n', writeFeedFolder(join(dir, name.replace(/\W+/g, '-')), files));
    const index = await loadScheduleIndex(db, 'n');
    const isColumnShape = name.includes('column');
    const found = (key: string) =>
      index
        .nyctTrips(key)
        .map((c) => [c.trip.trip_id, c.path])
        .sort();
    t.same(
      found(nyctKey(36050, '2', 'S')),
      [
        [ids[0], '07R'],
        [ids[1], '08R'],
      ],
      '06:00:30, two paths',
    );
    t.same(found(nyctKey(145000, '1', 'N')), [[ids[2], '03R']], '24:10:00 stays on its service day');
    t.same(found(nyctKey(36050, '2', 'N')), [], 'the other direction');
    t.same(
      index.nyctRouteTrips('1', 'N').map((c) => [c.trip.trip_id, c.start_s, c.path]),
      [
        [isColumnShape ? '1-0610' : 'AFA24GEN-1037-Weekday-00_037000_1..N03R', 22_200, '03R'],
        [ids[2], 87_000, '03R'],
      ],
      'by route and direction, in order of first departure (24:10:00 after 06:10:00)',
    );
    t.same(index.nyctRouteTrips('1', 'S'), []);
    t.same(found(nyctKey(36050, 'B44', 'S')), []);
    const column = await db.all<{ trip_id: string; mta_trip_id: string | null }>(
      `SELECT trip_id, mta_trip_id FROM gtfs_trips WHERE mta_trip_id IS NOT NULL ORDER BY trip_id`,
    );
    t.equal(column.length, name.includes('column') ? 4 : 0, 'the extra trips.txt column is imported');
  });
}
