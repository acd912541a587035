// Schedule refresh on the real service: a GTFS zip served over loopback HTTP is changed and
// refreshed while 50 clients hammer the API. No request fails, none sees half a schedule (a
// route's scheduled trips are the old count or the new one, never anything else), today is
// re-expanded with the new version, an unchanged source imports nothing (the versions table
// says so), and a corrupt copy leaves the running version in place and shows on /status.json.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import t from 'tap';
import { startService } from '../app/serve.ts';
import { parseConfig } from '../core/config.ts';
import { createKey } from '../accounts/keys.ts';
import { FIXTURES_REAL, hasRealFixtures } from './support/pipeline-fakes.ts';
import { wallClock } from '../core/dates.ts';
import { listScheduleVersions } from '../store/schedule-versions.ts';
import { bearer } from './support/harness.ts';
import { gtfsDate, smallGtfsZip } from './support/small-gtfs.ts';
import { silentLogger } from './support/logs.ts';
import type { JsonBody } from './support/json.ts';

const TZ = 'America/Chicago';
const CLIENTS = 50;

interface ScheduleStatus {
  schedule_id: string;
  state: string;
  reason: string;
  version_id: number | null;
  last_check_outcome: string | null;
  last_error: string | null;
}

t.test('a schedule swapped under 50 concurrent clients: zero 5xx, reliability re-expanded', async (t) => {
  const dir = t.testdir();
  const range = { start: gtfsDate(-30), end: gtfsDate(60), timezone: TZ };
  let body: Buffer = smallGtfsZip({ trips: 3, ...range, feedVersion: 'v1' });
  const conditional: Array<string | undefined> = [];
  const source = createServer((req, res) => {
    conditional.push(req.headers['if-none-match']);
    const etag = `"${createHash('sha256').update(body).digest('hex').slice(0, 20)}"`;
    if (req.headers['if-none-match'] === etag) {
      res.writeHead(304).end();
      return;
    }
    res.writeHead(200, { etag, 'content-type': 'application/zip' }).end(body);
  });
  await new Promise<void>((r) => source.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => source.close(() => r())));
  const url = `http://127.0.0.1:${(source.address() as { port: number }).port}/gtfs.zip`;

  const service = await startService(
    parseConfig({
      host: '127.0.0.1',
      port: 0,
      db_path: join(dir, 'serve.duckdb'),
      schedules: [{ id: 'small', source: url, refresh_cron: '0 0 1 1 *' }],
      reliability: { timezone: TZ },
      exports: { enabled: false, dir: join(dir, 'exports') },
      snapshot: { enabled: false, path: join(dir, 'snapshot.duckdb') },
    }),
    { log: silentLogger },
  );
  t.teardown(() => service.close());
  const db = service.runtime.db;
  const keys = await Promise.all(Array.from({ length: 10 }, () => createKey(db, { plan: 'max', name: null })));
  const today = wallClock(new Date(), TZ).date;
  const get = async (path: string, key = keys[0]!.key): Promise<{ status: number; json: JsonBody }> => {
    const res = await fetch(`${service.url}${path}`, { headers: bearer(key) });
    return {
      status: res.status,
      json: res.headers.get('content-type')?.includes('json') ? await res.json() : await res.text(),
    };
  };
  const scheduledToday = async (key?: string): Promise<number> => {
    const r = await get(`/api/v1/bus/R1/reliability?from=${today}&to=${today}`, key);
    if (r.status !== 200) throw new Error(`reliability answered ${r.status}`);
    return (r.json.data as Array<{ scheduled: number }>)[0]!.scheduled;
  };
  // the status document is rebuilt on the collector's tick: wait for the change to show
  const statusOf = async (until: (s: ScheduleStatus) => boolean = () => true): Promise<ScheduleStatus> => {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const s = ((await get('/status.json')).json.schedules as ScheduleStatus[]).find(
        (x) => x.schedule_id === 'small',
      )!;
      if (until(s) || Date.now() > deadline) return s;
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  t.equal(await scheduledToday(), 3, 'version 1: three R1 trips today');
  t.match(await statusOf(), { state: 'operational', version_id: 1, last_check_outcome: 'imported' });
  t.equal((await listScheduleVersions(db, 'small')).length, 1);

  // an unchanged source costs nothing: a 304 to the ETag of the copy in use
  const same = await service.schedules.refreshSchedule('small');
  t.equal(same.outcome, 'not_modified');
  t.ok(conditional.at(-1)?.startsWith('"'), 'the refresh sent If-None-Match');
  t.equal((await listScheduleVersions(db, 'small')).length, 1, 'no new version row');

  // version 2: five trips per route; swapped while 50 clients read
  body = smallGtfsZip({ trips: 5, ...range, feedVersion: 'v2' });
  const statuses = new Map<number, number>();
  const seen = new Set<number>();
  const failures: string[] = [];
  let swapped = false;
  let refreshing = false;
  let during = 0;
  const paths = [
    '/api/v1/bus',
    `/api/v1/bus/R1/reliability?from=${today}&to=${today}`,
    '/api/v1/rail',
    '/api/v1/bus/realtime',
    '/status.json',
  ];
  const client = async (i: number): Promise<void> => {
    const key = keys[i % keys.length]!.key;
    // every client keeps going until the swap is over, then makes a few more requests
    for (let n = 0, after = 0; after < 3; n++) {
      if (swapped) after++;
      const path = paths[(i + n) % paths.length]!;
      try {
        const inSwap = refreshing;
        const r = await get(path, key);
        if (inSwap && refreshing) during++;
        statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
        if (r.status === 200 && path.includes('/reliability'))
          seen.add((r.json.data as Array<{ scheduled: number }>)[0]!.scheduled);
        if (
          r.status === 200 &&
          path === '/api/v1/bus' &&
          !(r.json.data as Array<{ route_id: string }>).some((x) => x.route_id === 'R1')
        ) {
          failures.push('the bus directory lost R1');
        }
      } catch (err) {
        failures.push(`${path}: ${(err as Error).message}`);
      }
    }
  };
  const clients = Array.from({ length: CLIENTS }, (_, i) => client(i));
  // every client is running before the refresh starts
  while ([...statuses.values()].reduce((a, b) => a + b, 0) < 2 * CLIENTS) await new Promise((r) => setTimeout(r, 10));
  refreshing = true;
  const result = await service.schedules.refreshSchedule('small');
  refreshing = false;
  swapped = true;
  await Promise.all(clients);
  t.equal(result.outcome, 'imported');
  t.equal(result.version?.version_id, 2);
  const total = [...statuses.values()].reduce((a, b) => a + b, 0);
  const serverErrors = [...statuses].filter(([s]) => s >= 500).reduce((a, [, n]) => a + n, 0);
  t.equal(
    serverErrors,
    0,
    `zero 5xx in ${total} requests (${JSON.stringify(Object.fromEntries(statuses))}), ${during} of them ` +
      `sent and answered while the refresh ran (${result.ms} ms)`,
  );
  t.ok(during > 0, 'requests overlapped the refresh');
  t.same(failures, [], 'no failed connection, no directory without the route');
  t.same(
    [...statuses.keys()].filter((s) => s !== 200),
    [],
    'every request answered 200',
  );
  t.same([...seen].sort(), [3, 5], 'reliability saw the old schedule, then the new one, and nothing in between');
  t.equal(await scheduledToday(), 5, 'today re-expanded with version 2');
  const days = await db.all<{ d: string; v: number }>(
    `SELECT strftime(service_date, '%Y-%m-%d') AS d, version_id AS v FROM schedule_days WHERE schedule_id = ` +
      `'small' ORDER BY 1`,
  );
  t.ok(
    days.filter((d) => d.d >= today).every((d) => Number(d.v) === 2),
    'today and later: version 2',
  );
  t.ok(
    days.filter((d) => d.d < today).every((d) => Number(d.v) === 1),
    'earlier days keep version 1',
  );
  t.equal(service.runtime.schedules.get('small')?.trip('R1-5')?.route_id, 'R1', 'the pipeline resolves the new trips');
  t.match(await statusOf((s) => s.version_id === 2), {
    state: 'operational',
    version_id: 2,
    last_check_outcome: 'imported',
  });

  // the same bytes without a usable ETag: hashed, unchanged, not imported
  conditional.length = 0;
  const again = await service.schedules.refreshSchedule('small', { force: false });
  t.equal(again.outcome, 'not_modified');
  t.equal((await listScheduleVersions(db, 'small')).length, 2, 'still two versions');

  // a corrupt copy: refused, version 2 keeps serving, /status.json says so
  body = hasRealFixtures()
    ? readFileSync(join(FIXTURES_REAL, 'bad', 'corrupted-gtfs.zip'))
    : Buffer.from('not a zip at all');
  const failed = await service.schedules.refreshSchedule('small');
  t.equal(failed.outcome, 'failed');
  t.match(failed.error, /ZIP/);
  t.equal((await listScheduleVersions(db, 'small')).length, 2, 'no version for a failed import');
  t.equal(await scheduledToday(), 5, 'the running version stays in place');
  const shown = await statusOf((s) => s.last_check_outcome === 'failed');
  t.match(shown, { state: 'degraded', version_id: 2, last_check_outcome: 'failed', last_error: /ZIP/ });
  t.match(shown.reason, /refresh failed: .*version 2 \(v2\) stays in place/);
  const status = (await get('/status.json')).json as { state: string };
  t.equal(status.state, 'degraded', 'the overall status shows it');
  const page = await get('/status');
  t.match(page.json, /Schedule small/, 'and the status page');
});
