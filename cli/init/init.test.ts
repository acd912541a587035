// `runInit` in this process against feeds served by a local HTTP server: what it checks, what it
// refuses (and that a refusal leaves nothing behind), what it writes, and --force.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { findKeysByHashes, hashKey, listKeys } from '../../accounts/keys.ts';
import { loadConfig } from '../../core/config.ts';
import { Db } from '../../store/db.ts';
import { listSchedules } from '../../store/schedule-index.ts';
import { feedZip, writeFeedFolder } from '../../test/support/gtfs-fixture.ts';
import { encodeFeed, header } from '../../test/support/pipeline-fakes.ts';
import { tempDir } from '../../test/support/service-process.ts';
import { gtfsDate, smallGtfs, smallGtfsZip } from '../../test/support/small-gtfs.ts';
import { UsageError } from '../../core/usage-error.ts';
import { describeBody } from './sniff.ts';
import { firstAgencyName, slug } from './gtfs-check.ts';
import { CONFIG_NAME, runInit, type InitOptions } from './run.ts';

const SECRET_HEADER = 'k-123-secret-header-value';
const nowS = () => Math.floor(Date.now() / 1000);
const today = () => new Date().toISOString().slice(0, 10).replaceAll('-', '');

function vehicles(): Uint8Array {
  return encodeFeed({
    header: header(nowS() - 5),
    entity: [
      {
        id: 'v1',
        vehicle: {
          trip: { trip_id: 'R1-1', start_date: today() },
          vehicle: { id: 'bus-1' },
          position: { latitude: 41.05, longitude: -87.05 },
          timestamp: nowS() - 5,
        },
      },
      {
        id: 'v2',
        vehicle: {
          trip: { trip_id: 'NOPE-9', start_date: today() },
          vehicle: { id: 'bus-2' },
          position: { latitude: 41.05, longitude: -87.05 },
          timestamp: nowS() - 5,
        },
      },
    ],
  });
}

function tripUpdates(): Uint8Array {
  return encodeFeed({
    header: header(nowS() - 3),
    entity: [
      {
        id: 't1',
        trip_update: {
          trip: { trip_id: 'L1-1', start_date: today() },
          stop_time_update: [{ stop_sequence: 2, stop_id: 'S2', arrival: { delay: 60 } }],
        },
      },
    ],
  });
}

const ALERTS_JSON = JSON.stringify({
  timestamp: new Date().toISOString(),
  alerts: [{ id: 'a1', header: 'Elevator out', informed_entities: [{ route_id: 'L1' }] }],
});

interface Served {
  url: string;
  hits: Map<string, number>;
}

/** Paths → bodies; paths under /keyed/ answer 401 without the header. */
async function serve(
  t: Test,
  routes: Record<string, { body: Uint8Array | string; type?: string; status?: number }>,
): Promise<Served> {
  const hits = new Map<string, number>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = req.url ?? '/';
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const route = routes[path];
    if (!route) return void res.writeHead(404).end('not found');
    if (path.startsWith('/keyed/') && req.headers['x-api-key'] !== SECRET_HEADER) {
      return void res.writeHead(401, { 'content-type': 'text/plain' }).end('missing key');
    }
    res.writeHead(route.status ?? 200, { 'content-type': route.type ?? 'application/octet-stream' });
    res.end(route.body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits };
}

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return {
    io: { out: (l: string) => void out.push(l), err: (l: string) => void err.push(l) },
    out,
    err,
    text: () => [...out, ...err].join('\n'),
  };
}

const base = (dir: string, over: Partial<InitOptions>): InitOptions => ({
  gtfs: '',
  feeds: {},
  headers: [],
  dir,
  port: 8080,
  force: false,
  ...over,
});

t.test('checks each feed once, imports, writes a private commented config and prints a working key', async (t) => {
  const gtfs = smallGtfsZip({ trips: 2, start: gtfsDate(-30), end: gtfsDate(60) });
  const s = await serve(t, {
    '/gtfs.zip': { body: gtfs, type: 'application/zip' },
    '/keyed/vp.pb': { body: vehicles() },
    '/keyed/tu.pb': { body: tripUpdates() },
    '/keyed/alerts.json': { body: ALERTS_JSON, type: 'application/json' },
  });
  const dir = join(tempDir(t.teardown, 'init-'), 'agency');
  const c = capture();
  const options = base(dir, {
    gtfs: `${s.url}/gtfs.zip`,
    feeds: {
      vehicles: `${s.url}/keyed/vp.pb`,
      'trip-updates': `${s.url}/keyed/tu.pb`,
      alerts: `${s.url}/keyed/alerts.json`,
    },
    headers: [`X-Api-Key: ${SECRET_HEADER}`],
  });
  t.equal(await runInit(options, c.io), 0, c.text());
  t.same(c.err, []);
  for (const path of ['/gtfs.zip', '/keyed/vp.pb', '/keyed/tu.pb', '/keyed/alerts.json'])
    t.equal(s.hits.get(path), 1, `${path} fetched once`);
  const text = c.text();
  t.match(text, /schedule small \(Small\)/, 'the schedule is named after agency.txt');
  t.match(text, /2 entities \(2 vehicle positions, 0 trip updates, 0 alerts\)/);
  t.match(text, /trips matched to the schedule: 1 of 2 \(50\.0 %\)/, 'an unknown trip is counted as unmatched');
  t.match(text, /feed small-trip-updates[\s\S]*trips matched to the schedule: 1 of 1/);
  t.match(
    text,
    /JSON alerts \(pipeline\/ALERTS-JSON\.md\)[\s\S]*1 entity/,
    'JSON alerts in the documented format are a feed',
  );
  t.match(text, /snapshot time \S+: \d+ s old/);
  t.notMatch(text, /serve will refuse/, 'fresh snapshots raise no warning');
  t.notMatch(text, new RegExp(SECRET_HEADER), 'the header value is not printed');

  const configPath = join(dir, CONFIG_NAME);
  t.equal(statSync(configPath).mode & 0o777, 0o600, 'config 0600');
  t.equal(statSync(dir).mode & 0o777, 0o700, 'folder 0700');
  const raw = readFileSync(configPath, 'utf8');
  t.match(raw, /^\/\/ transit-api configuration for Small/, 'commented');
  const config = loadConfig(configPath, {});
  t.equal(config.host, '127.0.0.1');
  t.equal(config.db_path, join(dir, 'transit.duckdb'));
  t.equal(config.exports.dir, join(dir, 'exports'));
  t.equal(config.snapshot.path, join(dir, 'snapshot.duckdb'));
  t.ok(config.signing_secret && config.signing_secret.length >= 40, 'a generated signing secret');
  t.same(
    config.feeds.map((f) => [f.id, f.kind, f.interval_s, f.schedule_id, f.headers['X-Api-Key']]),
    [
      ['small-vehicles', 'gtfs-rt', 15, 'small', SECRET_HEADER],
      ['small-trip-updates', 'gtfs-rt', 15, 'small', SECRET_HEADER],
      ['small-alerts', 'alerts-json', 60, 'small', SECRET_HEADER],
    ],
  );
  t.same(
    config.schedules,
    [{ id: 'small', source: `${s.url}/gtfs.zip`, refresh_cron: '41 3 * * *' }],
    'the URL, not the download, is the source',
  );

  const keys = text.match(/tk_live_[A-Za-z0-9]{32}/g) ?? [];
  t.equal(new Set(keys).size, 1, 'one key');
  t.match(
    text,
    new RegExp(
      `Next:\\n  npx transit-api serve --config \\S+\\n  curl -H "Authorization: Bearer ${keys[0]}" ` +
        `http://127.0.0.1:8080/api/v1/\\w+/realtime\\n  npx transit-api status --config`,
    ),
  );
  const db = await Db.open(config.db_path);
  try {
    const printed = hashKey(keys[0]!);
    t.equal(
      (await findKeysByHashes(db, [printed])).get(printed)?.plan,
      'max',
      'the printed key is a Max key in the database',
    );
    t.same(
      (await listSchedules(db)).map((x) => x.schedule_id),
      ['small'],
    );
  } finally {
    await db.close();
  }

  // idempotence: an existing config is never overwritten without --force
  const again = capture();
  t.equal(await runInit(options, again.io), 1);
  t.match(again.err.join('\n'), /exists[\s\S]*--force/);
  t.equal(readFileSync(configPath, 'utf8'), raw, 'the config is untouched');
  const forced = capture();
  t.equal(await runInit({ ...options, force: true }, forced.io), 0, forced.text());
  const rewritten = loadConfig(configPath, {});
  t.not(rewritten.signing_secret, config.signing_secret, 'a new secret');
  const db2 = await Db.open(config.db_path);
  t.teardown(() => db2.close());
  t.equal((await listKeys(db2)).length, 2, 'the database is reused: another key beside the first');
});

t.test('a feed that answers anything but a feed is refused with what it is, and nothing is written', async (t) => {
  const gtfs = smallGtfsZip({ trips: 1, start: gtfsDate(-30), end: gtfsDate(60) });
  const s = await serve(t, {
    '/gtfs.zip': { body: gtfs },
    '/login': {
      body: '<!DOCTYPE html><html><head><title>Sign in</title></head><body>…</body></html>',
      type: 'text/html',
    },
    '/json': { body: '{"header":{"gtfsRealtimeVersion":"2.0"},"entity":[]}', type: 'application/json' },
    '/text': { body: 'not valid pb data' },
    '/keyed/vp.pb': { body: vehicles() },
  });
  const dir = join(tempDir(t.teardown, 'init-'), 'agency');
  const c = capture();
  const code = await runInit(
    base(dir, {
      gtfs: `${s.url}/gtfs.zip`,
      feeds: { vehicles: `${s.url}/login`, 'trip-updates': `${s.url}/json`, alerts: `${s.url}/text` },
    }),
    c.io,
  );
  t.equal(code, 1);
  const err = c.err.join('\n');
  t.match(
    err,
    /--vehicles \S+\/login: not a GTFS-Realtime feed \(HTTP 200\): the body is an HTML page \(<!DOCTYPE html>/,
  );
  t.match(err, /--trip-updates \S+\/json: [^\n]*the body is JSON[^\n]*binary protobuf URL/);
  t.match(err, /--alerts \S+\/text: [^\n]*the body is text \(not valid pb data\)/);
  t.match(err, /nothing was written/);
  t.notOk(existsSync(dir), 'no folder, config or database');

  const keyed = capture();
  t.equal(
    await runInit(base(dir, { gtfs: `${s.url}/gtfs.zip`, feeds: { vehicles: `${s.url}/keyed/vp.pb` } }), keyed.io),
    1,
  );
  t.match(keyed.err.join('\n'), /HTTP 401: does the agency require a key\? pass it with --header/);

  const zip = capture();
  t.equal(await runInit(base(dir, { gtfs: `${s.url}/gtfs.zip`, feeds: { vehicles: `${s.url}/gtfs.zip` } }), zip.io), 1);
  t.match(zip.err.join('\n'), /a ZIP archive: the static GTFS goes to --gtfs/);
  t.notOk(existsSync(dir));
});

t.test('a schedule that is no GTFS is refused, and what init created is removed', async (t) => {
  const s = await serve(t, {
    '/gtfs-page': { body: '<html><body>Our GTFS moved</body></html>', type: 'text/html' },
    '/agency-only.zip': {
      body: feedZip({ 'agency.txt': 'agency_id,agency_name,agency_url,agency_timezone\nA,Only,https://x,UTC\n' }),
    },
  });
  const root = tempDir(t.teardown, 'init-');
  const dir = join(root, 'agency');
  const page = capture();
  t.equal(await runInit(base(dir, { gtfs: `${s.url}/gtfs-page` }), page.io), 1);
  t.match(page.err.join('\n'), /--gtfs \S+ is not a GTFS zip: it is an HTML page/);
  const partial = capture();
  t.equal(await runInit(base(dir, { gtfs: `${s.url}/agency-only.zip` }), partial.io), 1);
  t.match(partial.err.join('\n'), /missing required file\(s\): routes\.txt/);
  t.notOk(existsSync(dir), 'the folder init made for the database is gone again');
  const missing = capture();
  t.equal(await runInit(base(dir, { gtfs: join(root, 'nope.zip') }), missing.io), 1);
  t.match(missing.err.join('\n'), /GTFS source not found/);
});

t.test('a schedule alone (a folder, with --id): a config without feeds that the loader accepts', async (t) => {
  const root = tempDir(t.teardown, 'init-');
  const folder = writeFeedFolder(join(root, 'gtfs'), smallGtfs({ trips: 1, start: gtfsDate(-3), end: gtfsDate(3) }));
  const dir = join(root, 'agency');
  const c = capture();
  t.equal(await runInit(base(dir, { gtfs: folder, id: 'metro', port: 9090 }), c.io), 0, c.text());
  t.match(c.text(), /no realtime feed given/);
  t.match(c.text(), /http:\/\/127\.0\.0\.1:9090\/api\/v1\/rail\/realtime/);
  const config = loadConfig(join(dir, CONFIG_NAME), {});
  t.same(config.feeds, []);
  t.same(
    config.schedules.map((x) => [x.id, x.source]),
    [['metro', folder]],
  );
  t.equal(config.port, 9090);
});

t.test('argument mistakes are usage errors before anything is fetched', async (t) => {
  const dir = join(tempDir(t.teardown, 'init-'), 'agency');
  const usage = async (over: Partial<InitOptions>, message: RegExp) => {
    const err = await runInit(base(dir, { gtfs: 'x.zip', ...over }), capture().io).then(
      () => null,
      (e: unknown) => e,
    );
    t.ok(err instanceof UsageError, `${message} is a usage error`);
    t.match((err as Error).message, message);
  };
  await usage({ headers: ['no colon'] }, /--header takes 'Name: value'/);
  await usage({ headers: ['X-Key:'] }, /--header takes 'Name: value'/);
  await usage({ id: 'has space' }, /--id takes letters, digits/);
  await usage({ port: Number.NaN }, /--port must be an integer/);
  await usage({ gtfs: 'ftp://example.org/x.zip' }, /--gtfs must be an http\(s\) URL/);
  await usage({ feeds: { vehicles: 'ftp://example.org/vp' } }, /--vehicles must be an http\(s\) URL/);
  t.notOk(existsSync(dir));
});

t.test('bodies are described in words; agency names become ids', async (t) => {
  t.equal(describeBody(new Uint8Array())?.kind, 'empty');
  t.equal(describeBody(Buffer.from('\uFEFF  <?xml version="1.0"?><feed/>'))?.kind, 'xml');
  t.equal(describeBody(Buffer.from('<HTML><BODY>x'))?.kind, 'html');
  t.equal(
    describeBody(Uint8Array.from([0x0a, 0x0d, 0x0a, 0x03, 0x32, 0x2e, 0x30, 0x10, 0x00, 0x18, 0xff, 0x01])),
    null,
    'binary of no known kind',
  );
  t.equal(
    firstAgencyName('\uFEFFagency_id,"agency_name",agency_url\r\nA,"Metro ""Blue"", Inc.",https://x\r\n'),
    'Metro "Blue", Inc.',
  );
  t.equal(firstAgencyName('agency_id,agency_url\nA,https://x\n'), null);
  t.equal(slug('Société de transport (STM)'), 'societe-de-transport-stm');
  t.equal(slug('***'), null);
});
