// `transit-api validate` as an operator runs it: no database, no service, no config. Exit 1 when an
// error-level rule fired, 0 on warnings alone, 2 when an argument cannot be read; a body that is
// no feed is a finding and the run goes on; --json is one document; a URL is polled once.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { copyFileSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { runCli } from './support/cli.ts';
import { FIXTURES_REAL, noRealFixtures } from './support/fixtures-real.ts';

const real = (path: string) => join(FIXTURES_REAL, path);

t.test('validate on the real captures', { skip: noRealFixtures() }, async (t) => {
  const cwd = t.testdir();

  t.test('warnings only: exit 0, each finding on its line, a summary per rule', async (t) => {
    const r = await runCli(
      ['validate', '--schedule', real('caltrain/ct.zip'), real('caltrain/ct-vehicle-positions.pb')],
      {
        cwd,
      },
    );
    t.equal(r.code, 0, r.stderr);
    t.match(r.stdout, /ct-vehicle-positions\.pb: 14 vehicles, header 2023-11-08T01:05:59\.000Z\n/);
    t.match(r.stdout, /\n {2}W009 warning entity 124: trip without schedule_relationship\n/);
    t.equal(r.stdout.match(/^ {2}W009 warning entity /gm)?.length, 14, 'every finding printed');
    t.match(r.stdout, /validated 1 snapshot: 1 with findings, 0 errors, 14 warnings/);
    t.match(
      r.stdout,
      /\n {2}W009 warning +14 +1 {2}schedule_relationship not populated \(.*ct-vehicle-positions\.pb, entity 124\)/,
    );
    t.same(readdirSync(cwd), [], 'nothing written');
  });

  t.test('an error-level rule: exit 1; a body that is no feed is a finding and the run goes on', async (t) => {
    const dir = t.testdir({ 'page.html': '<html><head><title>Login</title></head></html>' });
    copyFileSync(real('bart/example.pb'), join(dir, 'z-example.pb'));
    const r = await runCli(['validate', '--schedule', real('bart/bart-rt.zip'), dir], { cwd });
    t.equal(r.code, 1, r.stderr);
    t.match(r.stdout, /page\.html: not a GTFS-Realtime message\n {2}T001 error {3}\(body\): an HTML page \(<html>/);
    t.match(r.stdout, /z-example\.pb: 26 trip updates, header 2019-05-28T02:02:58\.000Z\n/);
    t.match(
      r.stdout,
      / {2}E022 error {3}entity 2251935WKDY: stop_sequence 9 at 2019-05-28T02:41:18Z is not after the stop before/,
    );
    t.match(r.stdout, /validated 2 snapshots: 2 with findings, 2 errors, 78 warnings/);
  });

  t.test('--json: one document with every snapshot, the summary and the exit code', async (t) => {
    const r = await runCli(['validate', real('bad'), '--json'], { cwd });
    t.equal(r.code, 1, r.stderr);
    const doc = JSON.parse(r.stdout) as {
      snapshots: {
        source: string;
        findings: { rule: string; severity: string; entity_id: string | null; reason: string }[];
      }[];
      summary: { snapshots: number; errors: number; rules: { rule: string; findings: number }[] };
      exit_code: number;
    };
    t.equal(doc.exit_code, 1);
    t.equal(doc.summary.snapshots, readdirSync(real('bad')).length, 'zips included: each a finding');
    const ms = doc.snapshots.find((s) => s.source.endsWith('header-timestamp-in-ms.pb'))!;
    t.same(ms.findings, [
      {
        rule: 'E001',
        severity: 'error',
        entity_id: null,
        reason: 'header timestamp 1699405801000 is not POSIX seconds (milliseconds?)',
      },
    ]);
    const zip = doc.snapshots.find((s) => s.source.endsWith('corrupted-gtfs.zip'))!;
    t.match(zip.findings, [{ rule: 'T001' }]);
    t.match(doc.summary.rules, [{ rule: 'T001' }, { rule: 'E001' }, { rule: 'E026' }, { rule: 'W009' }]);
  });

  t.test('--series: each file against the one before (the header going back is E018)', async (t) => {
    const dir = t.testdir();
    copyFileSync(real('sound-transit/vehicle_position_1683740798.pb'), join(dir, 'a.pb'));
    copyFileSync(real('sound-transit/vehicle_position_1683740698.pb'), join(dir, 'b.pb'));
    const alone = await runCli(['validate', dir], { cwd });
    t.equal(alone.code, 0, 'alone, both are clean');
    const series = await runCli(['validate', '--series', dir], { cwd });
    t.equal(series.code, 1);
    t.match(
      series.stdout,
      /b\.pb: .*\n {2}E018 error {3}\(header\): header timestamp 2023-05-10T17:44:58Z is before the previous one/,
    );
  });

  t.test('a URL is polled once, with this clock: an old snapshot is W008', async (t) => {
    const body = readFileSync(real('caltrain/ct-trip-updates.pb'));
    const seen: (string | undefined)[] = [];
    const server = createServer((req, res) => {
      seen.push(req.headers['x-api-key'] as string | undefined);
      if (req.url === '/tu.pb') res.writeHead(200).end(body);
      else res.writeHead(404).end('no');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const r = await runCli(['validate', '--header', 'X-Api-Key: k1', `${url}/tu.pb`], { cwd });
    t.equal(r.code, 0, r.stderr);
    t.match(
      r.stdout,
      /tu\.pb: 19 trip updates, header 2023-11-08T01:05:34\.000Z\n {2}W008 warning \(header\): header timestamp 2023-11-08T01:05:34Z is \d+ s old/,
    );
    t.same(seen, ['k1'], 'the header sent');
    const missing = await runCli(['validate', `${url}/nothing.pb`], { cwd });
    t.equal(missing.code, 2);
    t.match(missing.stderr, /cannot read http:\/\/127\.0\.0\.1:\d+\/nothing\.pb: HTTP 404/);
  });
});

t.test('unreadable arguments: exit 2 and the reason, before anything is validated', async (t) => {
  const cwd = t.testdir();
  const feed = join(cwd, 'feed.pb');
  writeFileSync(feed, 'x');
  const none = await runCli(['validate'], { cwd });
  t.equal(none.code, 2);
  t.match(none.stderr, /validate needs at least one GTFS-Realtime file, folder or URL/);
  const missing = await runCli(['validate', feed, join(cwd, 'nope.pb')], { cwd });
  t.equal(missing.code, 2);
  t.match(missing.stderr, `no such file or folder: ${join(cwd, 'nope.pb')}`);
  t.equal(missing.stdout, '', 'nothing validated');
  const schedule = await runCli(['validate', '--schedule', join(cwd, 'nope.zip'), feed], { cwd });
  t.equal(schedule.code, 2);
  t.match(schedule.stderr, /--schedule .*nope\.zip: /);
  const header = await runCli(['validate', '--header', 'nocolon', feed], { cwd });
  t.equal(header.code, 2);
});
