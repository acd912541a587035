// import-gtfs with no service running: the CLI opens the database file itself and imports a new
// schedule version, expanding the days around today, as it does through a running service.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { Db } from '../../store/db.ts';
import { listScheduleVersions } from '../../store/schedule-versions.ts';
import { gtfsDate, writeSmallGtfsZip } from '../../test/support/small-gtfs.ts';
import { operate } from '../../cli/run-operation.ts';

t.test('import-gtfs on the file: each run is a version', async (t) => {
  const dir = t.testdir();
  const configPath = join(dir, 'transit.json');
  writeFileSync(
    configPath,
    JSON.stringify({
      db_path: join(dir, 'transit.duckdb'),
      reliability: { timezone: 'America/Chicago', horizon_days: 2 },
    }),
  );
  const zip = writeSmallGtfsZip(join(dir, 'small.zip'), {
    trips: 2,
    start: gtfsDate(-10),
    end: gtfsDate(10),
    feedVersion: 'v1',
  });
  const run = async (json: boolean) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await operate(
      'import-gtfs',
      { values: { id: 'small', config: configPath, json }, positionals: [zip] },
      { out: (l) => out.push(l), err: (l) => err.push(l) },
    );
    return { code, out: out.join('\n'), err: err.join('\n') };
  };
  const first = await run(false);
  t.equal(first.code, 0, first.err);
  t.match(first.out, /^imported schedule small from /);
  t.match(
    first.out,
    /version 1, sha256 [0-9a-f]{12}…, service \d{4}-\d\d-\d\d to \d{4}-\d\d-\d\d; scheduled trips expanded /,
  );
  const second = await run(true);
  t.equal(second.code, 0, second.err);
  t.match(
    JSON.parse(second.out),
    { schedule_id: 'small', feed_version: 'v1', version: { version_id: 2, trips: 4 }, expanded: { to: String } },
    'an operator import always makes a version, even of the same bytes',
  );
  const db = await Db.open(join(dir, 'transit.duckdb'));
  t.teardown(() => db.close());
  t.equal((await listScheduleVersions(db, 'small')).length, 2);
});

t.test('import-gtfs says which served ids a schedule sharing ids changes, and how', async (t) => {
  const dir = t.testdir();
  const configPath = join(dir, 'transit.json');
  writeFileSync(
    configPath,
    JSON.stringify({
      db_path: join(dir, 'transit.duckdb'),
      reliability: { timezone: 'America/Chicago', horizon_days: 2 },
      schedules: [{ id: 'north', source: 'unused.zip', id_prefix: 'n' }],
    }),
  );
  const zip = writeSmallGtfsZip(join(dir, 'small.zip'), { trips: 2, start: gtfsDate(-10), end: gtfsDate(10) });
  const run = async (id: string, json = false) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await operate(
      'import-gtfs',
      { values: { id, config: configPath, json }, positionals: [zip] },
      { out: (l) => out.push(l), err: (l) => err.push(l) },
    );
    return { code, out: out.join('\n'), err: err.join('\n') };
  };
  const first = await run('north');
  t.equal(first.code, 0, first.err);
  t.notMatch(first.out, /served ids/, 'one schedule: its ids are served as they are');
  // the same routes, stops and trips under another id: every id is shared now
  const second = await run('south');
  t.equal(second.code, 0, second.err);
  t.match(second.out, /served ids change: ids two schedules share are served as <prefix>:<id>/);
  t.match(
    second.out,
    'schedule north: 2 route ids now served otherwise (also listed by south): L1 → n:L1, R1 → n:R1',
    'id_prefix names the prefix',
  );
  t.match(second.out, 'schedule north: 2 stop ids now served otherwise (also listed by south): S1 → n:S1, S2 → n:S2');
  t.match(second.out, /schedule north: 4 trip ids now served otherwise \(also listed by south\): L1-1 → n:L1-1, /);
  t.match(
    second.out,
    'schedule north: ids no schedule lists (vehicles, added trips) are now served as n:<id> (were <id>)',
  );
  // the new schedule's ids were never served bare: nothing of south changes
  t.notMatch(second.out, /^\s*schedule south/m);
  const again = JSON.parse((await run('south', true)).out) as { ids: unknown[] };
  t.same(again.ids, [], 'a new version of the same bytes changes nothing');
});
