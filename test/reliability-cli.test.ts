// `transit-api reliability`: the CLI (from the sources) against a database file as operators run it, and
// the report's cases in process. Data: test/support/reliability-data.ts.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import t from 'tap';
import { runCommand } from '../cli/command.ts';
import { UsageError } from '../core/usage-error.ts';
import { reliabilityCommand } from '../cli/commands/reliability.ts';
import { printReliabilityReport, type ReportOptions } from '../admin/operations/reliability-report.ts';
import { Db } from '../store/db.ts';
import { childEnv, cliArgv } from './support/cli.ts';
import { insertSchedule } from './support/reliability-builders.ts';
import { seedReliability } from './support/reliability-data.ts';

const settings = { service_day_end: '04:00' };

t.test('the CLI prints the table', async (t) => {
  const dbPath = join(t.testdir(), 'transit.duckdb');
  const db = await Db.open(dbPath);
  await seedReliability(db);
  await db.close();
  const run = (...args: string[]) => {
    const r = spawnSync(process.execPath, cliArgv('reliability', ...args), {
      encoding: 'utf8',
      env: childEnv({ TRANSIT_DB: dbPath }),
      timeout: 60_000,
    });
    return { code: r.status, out: r.stdout, err: r.stderr };
  };

  const week = run('--route', '39', '--from', '2024-04-22', '--to', '2024-04-28', '--group', 'week');
  t.equal(week.code, 0, week.err);
  t.match(
    week.out,
    /^bus 39, 2024-04-22 to 2024-04-28, by week \(America\/New_York; days over through \d{4}-\d\d-\d\d\)$/m,
  );
  t.match(
    week.out,
    new RegExp(
      String.raw`^route\s+week\s+scheduled\s+delivered\s+canceled\s+partial\s+unobserved\s+pending\s+added\s+deli` +
        String.raw`vered %\s+of observed %\s+final$`,
      'm',
    ),
  );
  // 21 of the 28 trips were seen (7 never): 14 of those 21 ran
  t.match(week.out, /^39\s+2024-W17\s+28\s+14\s+7\s+7\s+7\s+0\s+0\s+50\.00\s+66\.67\s+yes$/m);

  // a rail line without --mode: the line's own mode, not an empty bus table
  const line = run('--route', 'Red', '--from', '2024-04-22', '--to', '2024-04-22');
  t.equal(line.code, 0, line.err);
  t.match(line.out, /^rail Red, 2024-04-22 to 2024-04-22, by day/m);
  t.match(line.out, /^Red\s+2024-04-22\s+1\s+0\s+0\s+0\s+1\s/m);
  t.match(
    line.out,
    /^note: More than half of the scheduled trips were never observed in the row \(Red 2024-04-22: 1 of 1\)/m,
  );
  const json = run('--route', 'Red', '--from', '2024-04-22', '--to', '2024-04-22', '--json');
  t.equal(json.code, 0, json.err);
  t.match(JSON.parse(json.out), {
    mode: 'rail',
    rows: [{ route_id: 'Red', observed: 0, delivered_pct_of_observed: null }],
  });
});

t.test('the report', async (t) => {
  const db = await Db.open(':memory:');
  t.teardown(() => db.close());
  await seedReliability(db);
  const report = async (options: Partial<ReportOptions>) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await printReliabilityReport(
      db,
      { mode: 'bus', group: 'day', split: false, settings, ...options },
      {
        out: (text) => out.push(text),
        err: (line) => err.push(line),
      },
    );
    return { code, out: out.join(''), err: err.join('\n') };
  };

  t.test('days split by service day type; a day without trips has no percentage', async (t) => {
    const r = await report({ route: '66', from: '2024-04-26', to: '2024-04-27', split: true });
    t.equal(r.code, 0);
    t.match(r.out, /^66\s+2024-04-26\s+weekday\s+2\s+2\s+0\s+0\s+0\s+0\s+0\s+100\.00\s+100\.00\s+\S+\s+\S+\s+yes$/m);
    t.match(r.out, /^66\s+2024-04-27\s+saturday\s+0\s+0\s+0\s+0\s+0\s+0\s+0\s+-\s+-\s+\S+\s+\S+\s+yes$/m);
  });

  t.test('defaults: every route, the 28 days up to today in the agency zone', async (t) => {
    const r = await report({ mode: 'bus', group: 'period', now: new Date('2024-05-01T16:00:00Z') });
    t.equal(r.code, 0);
    t.match(r.out, /^bus all routes, 2024-04-04 to 2024-05-01, by period/m);
    t.match(r.out, /^39\s+2024-04-04\/2024-05-01\s/m);
    t.match(r.out, /^66\s+2024-04-04\/2024-05-01\s/m);
  });

  t.test('rail by line', async (t) => {
    const r = await report({ mode: 'rail', route: 'Red', from: '2024-04-22', to: '2024-04-22' });
    t.equal(r.code, 0);
    t.match(r.out, /^line\s+day\s/m);
    t.match(r.out, /^Red\s+2024-04-22\s+1\s+0\s+0\s+0\s+1\s/m, 'scheduled, never seen: unobserved');
  });

  t.test("without --mode: the route's own mode, or every mode with rows", async (t) => {
    const rail = await report({ mode: undefined, route: 'Red', from: '2024-04-22', to: '2024-04-22' });
    t.equal(rail.code, 0, rail.err);
    t.match(rail.out, /^rail Red, /m);
    const all = await report({ mode: undefined, group: 'period', from: '2024-04-22', to: '2024-04-28' });
    t.equal(all.code, 0, all.err);
    t.match(all.out, /^rail all routes, 2024-04-22 to 2024-04-28, by period/m);
    t.match(all.out, /^bus all routes, 2024-04-22 to 2024-04-28, by period/m);
    t.match(all.out, /^streetcar all routes, /m, 'every mode the schedule has, each with its rows');
    const json = await report({ mode: undefined, group: 'period', from: '2024-04-22', to: '2024-04-28', json: true });
    t.same(
      json.out
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line).mode),
      ['rail', 'bus', 'streetcar'],
      '--json: one document per mode, one per line',
    );
    const wrong = await report({ mode: 'bus', route: 'Red', from: '2024-04-22', to: '2024-04-22' });
    t.equal(wrong.code, 1);
    t.equal(wrong.err, 'no bus route "Red": it is a rail line (--mode rail)');
    const unknown = await report({ mode: undefined, route: 'Purple', from: '2024-04-22', to: '2024-04-22' });
    t.equal(unknown.code, 1);
    t.match(unknown.err, /unknown route or line "Purple": not in a schedule nor in the retained history of any mode/);
  });

  t.test('an id two modes share asks for --mode', async (t) => {
    const db = await Db.open(':memory:');
    t.teardown(() => db.close());
    await seedReliability(db);
    await insertSchedule(db, {
      schedule_id: 'other',
      timezone: 'America/New_York',
      routes: [{ route_id: '39', route_type: 2, mode: 'rail' }],
      trips: [],
    });
    await t.rejects(
      printReliabilityReport(
        db,
        { route: '39', group: 'day', split: false, settings, from: '2024-04-22', to: '2024-04-22' },
        { out: () => undefined, err: () => undefined },
      ),
      new UsageError('"39" is a rail line and a bus route: say which with --mode rail|bus'),
    );
    const out: string[] = [];
    const code = await printReliabilityReport(
      db,
      { mode: 'bus', route: '39', group: 'day', split: false, settings, from: '2024-04-22', to: '2024-04-22' },
      { out: (text) => out.push(text), err: () => undefined },
    );
    t.equal(code, 0);
    t.match(out.join(''), /^bus 39, /m);
  });

  t.test('mistakes', async (t) => {
    const unknown = await report({ route: '999', from: '2024-04-22', to: '2024-04-28' });
    t.equal(unknown.code, 1);
    t.match(unknown.err, /unknown bus route "999"/);
    t.equal(unknown.out, '');
    await t.rejects(
      report({ route: '39', from: '2024-04-28', to: '2024-04-21' }),
      new UsageError('--to: must not be before from'),
    );
    await t.rejects(
      report({ route: '39', from: '2024-13-01', to: '2024-04-21' }),
      new UsageError('--from: a YYYY-MM-DD date'),
    );
    await t.rejects(report({ route: '39', to: 'soon' }), new UsageError('--to must be a date as YYYY-MM-DD'));
    // option checks come before the database is opened
    await t.rejects(
      runCommand(reliabilityCommand, ['--group', 'month']),
      new UsageError('--group must be one of day, week, period'),
    );
    await t.rejects(
      runCommand(reliabilityCommand, ['--mode', 'ferry']),
      new UsageError('--mode must be one of rail, bus, streetcar'),
    );
    await t.rejects(runCommand(reliabilityCommand, ['--routes', '39']), { message: /Unknown option '--routes'/ });
  });
});
