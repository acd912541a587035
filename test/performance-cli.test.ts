// `transit-api performance`: the CLI (from the sources) against a database file as operators run
// it. Data: test/support/performance-data.ts on the reliability test schedule.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import t from 'tap';
import { Db } from '../store/db.ts';
import { childEnv, cliArgv } from './support/cli.ts';
import { seedStopEvents } from './support/performance-data.ts';
import { FIRST_DAY, LAST_FINALIZED, seedReliability } from './support/reliability-data.ts';

t.test('the CLI prints the table, or the JSON document', async (t) => {
  const dbPath = join(t.testdir(), 'transit.duckdb');
  const db = await Db.open(dbPath);
  await seedStopEvents(db);
  await seedReliability(db);
  await db.close();
  const run = (...args: string[]) => {
    const r = spawnSync(process.execPath, cliArgv('performance', ...args), {
      encoding: 'utf8',
      env: childEnv({ TRANSIT_DB: dbPath }),
      timeout: 60_000,
    });
    return { code: r.status, out: r.stdout, err: r.stderr };
  };

  const period = run('--route', '39', '--from', FIRST_DAY, '--to', LAST_FINALIZED, '--group', 'period');
  t.equal(period.code, 0, period.err);
  t.match(
    period.out,
    /^bus route 39, 2024-04-20 to 2024-04-30, by period \(America\/New_York; on time -60 to \+300 s;/m,
  );
  t.match(period.out, /^period\s+events\s+on time %\s+early %\s+late %\s+headway\s+sched\s+hw ok %\s+bunched %/m);
  t.match(
    period.out,
    /^2024-04-20\/2024-04-30\s+66\s+50\.0\s+0\.0\s+50\.0\s+126:10\s+120:00\s+100\.0\s+0\.0\s+185\s+20:00\s+20:00\s+30\s+100\/-\/-\/-\s+yes$/m,
  );

  const json = run('--route', '39', '--from', LAST_FINALIZED, '--to', LAST_FINALIZED, '--json');
  t.equal(json.code, 0, json.err);
  const doc = JSON.parse(json.out);
  t.match(doc, { mode: 'bus', route_id: '39', rows: [{ period: LAST_FINALIZED, on_time_pct: null }] });
  t.match(doc.rows[0].notes[0], /fewer than the 10 needed/);

  const missing = run('--from', FIRST_DAY);
  t.equal(missing.code, 2, 'a usage error');
  t.match(missing.err, /performance needs --route <id>/);
  const unknown = run('--route', 'nope');
  t.equal(unknown.code, 1);
  t.match(unknown.err, /unknown bus route "nope"/);
});
