// Every feed rule we check, each on a small file built from the real Caltrain schedule that breaks
// exactly that rule (test/support/feed-rule-files.ts), through `validate`'s engine with ct.zip as
// the schedule: the rule fires, no other does, and a poll's tally counts the same. The clean file
// fires none, alone, as a series and polled over HTTP with a clock; bodies that are no FeedMessage
// are T001 with a reason saying what they are.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import t from 'tap';
import { resolveSources, validateSources, type SnapshotReport } from '../cli/validate.ts';
import type { ScheduleIndex } from '../core/ports.ts';
import { decodeFeedMessage } from '../pipeline/decode.ts';
import { FeedQualityChecker } from '../pipeline/quality/checker.ts';
import { RULES } from '../pipeline/quality/rules.ts';
import { cleanMessage, encodeMessage, loadCaltrain, RULE_CASES, T } from './support/feed-rule-files.ts';
import { noRealFixtures } from './support/fixtures-real.ts';

const skip = noRealFixtures();

/** Serves bodies by path, for the rules that need this server's clock (a URL is polled now). */
async function serve(bodies: Map<string, Uint8Array>): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const body = bodies.get(req.url ?? '');
    if (!body) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

t.test('feed rules on files built from the Caltrain schedule', { skip }, async (t) => {
  const { schedule, db } = await loadCaltrain();
  t.teardown(() => db.close());
  const bodies = new Map<string, Uint8Array>();
  const { url, server } = await serve(bodies);
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));

  /** Writes the messages as files (or serves them, with a clock) and validates them in order. */
  async function run(
    dir: string,
    name: string,
    messages: Record<string, unknown>[],
    nowS?: number,
  ): Promise<SnapshotReport[]> {
    const reports: SnapshotReport[] = [];
    const args = messages.map((m, i) => {
      const bytes = encodeMessage(m);
      if (nowS !== undefined) {
        bodies.set(`/${name}-${i}.pb`, bytes);
        return `${url}/${name}-${i}.pb`;
      }
      const path = join(dir, `${name}-${i}.pb`);
      writeFileSync(path, bytes);
      return path;
    });
    await validateSources(resolveSources(args), {
      schedule,
      series: messages.length > 1,
      now: () => (nowS ?? 0) * 1000,
      onSnapshot: (r) => reports.push(r),
    });
    return reports;
  }
  const rulesOf = (r: SnapshotReport) => [...new Set(r.findings.map((f) => f.rule))];

  t.test('the clean snapshot breaks no rule: alone, as a series, and polled with a clock', async (t) => {
    const dir = t.testdir();
    const clean = cleanMessage(schedule);
    t.same(
      (await run(dir, 'alone', [clean])).flatMap((r) => r.findings),
      [],
    );
    const series = await run(dir, 'series', [clean, cleanMessage(schedule, T + 20), cleanMessage(schedule, T + 50)]);
    t.same(
      series.flatMap((r) => r.findings),
      [],
      'headers 20 and 30 s apart',
    );
    t.same(
      (await run(dir, 'polled', [clean], T + 30)).flatMap((r) => r.findings),
      [],
      'received 30 s after its header',
    );
    t.match((await run(dir, 'content', [clean]))[0], { content: '1 trip update, 1 vehicle, 1 alert', entities: 3 });
  });

  for (const c of RULE_CASES) {
    t.test(`${c.rule} fires alone on its file`, async (t) => {
      const messages = c.messages(schedule);
      const reports = await run(t.testdir(), c.rule, messages, c.now_s);
      const last = reports.at(-1)!;
      for (const before of reports.slice(0, -1))
        t.same(before.findings, [], `${before.source}: the snapshot before is clean`);
      t.same(rulesOf(last), [c.rule], `${c.rule} and nothing else: ${JSON.stringify(last.findings)}`);
      t.ok(
        last.findings.every((f) => f.reason.length > 10 && !f.reason.includes('\n')),
        'a one-line reason each',
      );

      // a poll's tally: the same rules, the same counts
      const checker = new FeedQualityChecker();
      let counts = {};
      messages.forEach((m, i) => {
        const decoded = decodeFeedMessage(encodeMessage(m));
        if (!decoded.ok) throw new Error(decoded.error);
        counts = checker.check('f', decoded.message, {
          sha256: `body-${i}`,
          now_ms: c.now_s === undefined ? null : c.now_s * 1000,
          schedule,
          interval_s: 15,
        });
      });
      t.same(counts, { [c.rule]: { count: last.findings.length, example: last.findings[0]!.entity_id } });
    });
  }

  t.test('every rule of the registry has its file, but T001 (bodies that are no FeedMessage, below)', async (t) => {
    t.same(
      RULE_CASES.map((c) => c.rule),
      RULES.map((r) => r.id).filter((id) => id !== 'T001'),
    );
  });

  t.test('E029 is spared by a DETOUR alert for the trip, and needs shapes', async (t) => {
    const e029 = RULE_CASES.find((c) => c.rule === 'E029')!.messages(schedule)[0]!;
    const entities = e029.entity as Record<string, unknown>[];
    entities.push({
      id: 'detour',
      alert: { effect: 4, informed_entity: [{ trip: { trip_id: '501' } }], active_period: [{ start: T - 60 }] },
    });
    t.same(
      (await run(t.testdir(), 'detour', [e029])).flatMap((r) => r.findings),
      [],
    );
    const noShapes: ScheduleIndex = { ...schedule, tripShape: undefined };
    const reports: SnapshotReport[] = [];
    const path = join(t.testdir(), 'no-shapes.pb');
    writeFileSync(path, encodeMessage(RULE_CASES.find((c) => c.rule === 'E029')!.messages(schedule)[0]!));
    await validateSources(resolveSources([path]), { schedule: noShapes, onSnapshot: (r) => reports.push(r) });
    t.same(reports[0]!.findings, [], 'no shapes: not evaluated');
  });

  t.test('without a schedule the rules that need one are not evaluated', async (t) => {
    for (const rule of ['E003', 'E004', 'E011', 'E016', 'E024', 'E028', 'E029', 'E035']) {
      const c = RULE_CASES.find((x) => x.rule === rule)!;
      const path = join(t.testdir(), `${rule}.pb`);
      writeFileSync(path, encodeMessage(c.messages(schedule)[0]!));
      const reports: SnapshotReport[] = [];
      await validateSources(resolveSources([path]), { onSnapshot: (r) => reports.push(r) });
      t.same(reports[0]!.findings, [], `${rule} needs the schedule`);
    }
  });
});

t.test('T001: bodies that are no FeedMessage, each with what it is instead; validate goes on', async (t) => {
  const dir = t.testdir({
    'a.html': '<!DOCTYPE html><html><head><title>Sign in</title></head><body>…</body></html>',
    'b.json': '{"header":{"gtfs_realtime_version":"2.0"},"entity":[]}',
    'c.txt': 'not valid pb data',
    'e.b64': Buffer.from(encodeMessage({ header: { gtfs_realtime_version: '2.0', timestamp: T } })).toString('base64'),
  });
  const feed = encodeMessage({
    header: { gtfs_realtime_version: '2.0', incrementality: 0, timestamp: T },
    entity: Array.from({ length: 20 }, (_, i) => ({
      id: `v${i}`,
      vehicle: { vehicle: { id: `v${i}` }, position: { latitude: 37.5, longitude: -122.3 }, timestamp: T },
    })),
  });
  writeFileSync(join(dir, 'd.pb'), feed.subarray(0, feed.length - 7));
  writeFileSync(join(dir, 'f.gz'), gzipSync(Buffer.from('{"not": "a feed"}')));
  writeFileSync(join(dir, 'g.pb.gz'), gzipSync(feed));
  writeFileSync(join(dir, 'h.gz'), Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0x01, 0x02]));
  const reports: SnapshotReport[] = [];
  const summary = await validateSources(resolveSources([dir]), { onSnapshot: (r) => reports.push(r) });
  const reason = (name: string) => {
    const r = reports.find((x) => x.source.endsWith(name))!;
    t.same(
      r.findings.map((f) => [f.rule, f.entity_id]),
      [['T001', null]],
      `${name}: T001 about the body`,
    );
    return r.findings[0]!.reason;
  };
  t.match(reason('a.html'), /^an HTML page \(<!DOCTYPE html>/);
  t.match(reason('b.json'), /^JSON \(\{"header"/);
  t.match(reason('c.txt'), /^text \(not valid pb data\)/);
  t.match(reason('d.pb'), /^cut short: body ends inside a field/);
  t.match(reason('e.b64'), /base64 text of a FeedMessage/);
  t.match(reason('f.gz'), /^gzip-compressed, and inside it: JSON/);
  t.match(reason('h.gz'), /^a gzip stream that does not inflate/);
  const inflated = reports.find((r) => r.source.endsWith('g.pb.gz'))!;
  t.match(inflated, { content: '20 vehicles', findings: [] }, 'a gzip of a feed is read');
  t.equal(summary.snapshots, 8, 'every file validated');
  t.match(summary.rules, [{ rule: 'T001', severity: 'error', findings: 7, snapshots: 7 }]);
});
