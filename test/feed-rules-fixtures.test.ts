// Every real capture in ../shared/fixtures-real through the feed rules, with the agency's own
// schedule where the folder has one: the findings per rule per file are the figures below, which
// docs/guides/feed-quality.md lists (the README of that folder is not ours to edit). Both paths
// count alike: `validate` (every finding, with reasons) and a poll's tally.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { resolveSources, validateSources } from '../cli/validate.ts';
import type { ScheduleIndex } from '../core/ports.ts';
import { decodeFeedMessage } from '../pipeline/decode.ts';
import { FeedQualityChecker } from '../pipeline/quality/checker.ts';
import { RULES } from '../pipeline/quality/rules.ts';
import { Db } from '../store/db.ts';
import { importGtfs } from '../store/gtfs-import.ts';
import { loadScheduleIndex } from '../store/schedule-index.ts';
import { FIXTURES_REAL, noRealFixtures } from './support/fixtures-real.ts';
import { REPO_ROOT } from './support/pipeline-fakes.ts';

/** The schedule each folder's captures are checked against (none: no static feed that matches). */
const SCHEDULES: Record<string, string | null> = {
  caltrain: 'caltrain/ct.zip',
  bart: 'bart/bart-rt.zip',
  'sound-transit': 'sound-transit/st.zip',
  mbta: null,
  bad: null,
};

/** Findings per rule of every capture: the figures of the guide's table. */
export const EXPECTED: Record<string, Record<string, number>> = {
  'caltrain/ct-service-alerts.pb': {},
  'caltrain/ct-trip-updates.pb': {},
  'caltrain/ct-vehicle-positions.pb': { W009: 14 },
  'bart/bart-alerts.pb': {},
  'bart/bart-trip-updates.pb': { E002: 1, E003: 18, E036: 8, W001: 91, W002: 91, W009: 91 },
  'bart/example.pb': { E022: 1, W001: 26, W002: 26, W009: 26 },
  'sound-transit/TripUpdate-DUPLICATED-1690679342.pb': { E022: 9, E036: 10, E037: 10, W009: 15 },
  'sound-transit/trip_update_1683740698.pb': { E022: 1, W009: 14 },
  'sound-transit/trip_update_1683740798.pb': { E025: 1, E043: 18, W009: 14 },
  'sound-transit/vehicle_position_1683740698.pb': {},
  'sound-transit/vehicle_position_1683740798.pb': {},
  'mbta/alerts.pb': {},
  'mbta/tripupdates-2022-02-01-canceled.pb': { E022: 92, E043: 846, W001: 354, W002: 282, W009: 1338 },
  'mbta/tripupdates.pb': { E039: 49, W001: 49 },
  'mbta/vehiclepositions.pb': { E039: 48 },
  'bad/base64-instead-of-binary.pb64': { T001: 1 },
  'bad/header-timestamp-in-ms.pb': { E001: 1 },
  'bad/latitude-out-of-range.pb': { E026: 1, W009: 1 },
  'bad/not-protobuf.pb': { T001: 1 },
};

const order = new Map<string, number>(RULES.map((r, i) => [r.id, i]));
/** "E022 9, E036 10 …" in the registry's order; "none" when clean. */
export const figures = (counts: Record<string, number>): string =>
  Object.entries(counts)
    .sort(([a], [b]) => order.get(a)! - order.get(b)!)
    .map(([rule, n]) => `${rule} ${n.toLocaleString('en-US')}`)
    .join(', ') || 'none';

t.test('every real capture: its findings per rule', { skip: noRealFixtures() }, async (t) => {
  const captures = Object.keys(SCHEDULES).flatMap((dir) =>
    readdirSync(join(FIXTURES_REAL, dir))
      .filter((f) => /\.pb(64)?$/.test(f))
      .map((f) => `${dir}/${f}`),
  );
  t.same(captures.sort(), Object.keys(EXPECTED).sort(), 'every capture of the folder has its figures');

  const db = await Db.open(':memory:');
  t.teardown(() => db.close());
  const schedules = new Map<string, ScheduleIndex>();
  for (const zip of Object.values(SCHEDULES)) {
    if (!zip) continue;
    await importGtfs(db, zip, join(FIXTURES_REAL, zip));
    schedules.set(zip, await loadScheduleIndex(db, zip));
  }
  const guide = readFileSync(join(REPO_ROOT, 'docs', 'guides', 'feed-quality.md'), 'utf8');

  for (const capture of captures) {
    const zip = SCHEDULES[capture.split('/')[0]!] ?? null;
    const schedule = zip ? schedules.get(zip) : undefined;
    const path = join(FIXTURES_REAL, capture);
    const counted: Record<string, number> = {};
    await validateSources(resolveSources([path]), {
      schedule,
      onSnapshot: (r) => {
        for (const f of r.findings) counted[f.rule] = (counted[f.rule] ?? 0) + 1;
      },
    });
    t.same(counted, EXPECTED[capture], `${capture}: ${figures(counted)}`);

    const decoded = decodeFeedMessage(readFileSync(path));
    if (decoded.ok) {
      const tally = new FeedQualityChecker().check('f', decoded.message, {
        sha256: 'x',
        now_ms: null,
        schedule,
        interval_s: 30,
      });
      t.same(
        Object.fromEntries(Object.entries(tally).map(([rule, n]) => [rule, n.count])),
        counted,
        `${capture}: a poll's tally counts the same`,
      );
    }
    const row = `| ${capture} | ${zip ? zip.split('/')[1] : '—'} | ${figures(EXPECTED[capture]!)} |`;
    t.ok(guide.includes(row), `docs/guides/feed-quality.md lists ${row}`);
  }
});
