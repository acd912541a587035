// The fresh-clone flow of docs/guides/own-agency.md on the Caltrain captures: `transit-api init`
// (child process) against the schedule and realtime files served over HTTP behind an API-key
// header → `serve` on the config it wrote (child process) → one request per route of the route
// table (app/catalog.ts) with the printed key, none answered 5xx → the printed curl and `status`.
// Every public response (every route asked without a key, the public pages and stream) is scanned
// for the secrets init configured: the signing secret, the feed header's value and the key.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import t from 'tap';
import { documentedRoutes } from '../app/catalog.ts';
import { loadConfig } from '../core/config.ts';
import { withDocs } from '../docs/routes.ts';
import type { RouteDef } from '../http/types.ts';
import { runCli } from './support/cli.ts';
import { FIXTURES_REAL, noRealFixtures } from './support/fixtures-real.ts';
import { startServe, tempDir, waitFor } from './support/service-process.ts';

const HEADER_VALUE = 'agency-key-7f3c9b2e51d84a06';
const CALTRAIN = join(FIXTURES_REAL, 'caltrain');
const FILES: Record<string, string> = {
  '/gtfs/ct.zip': 'ct.zip',
  '/rt/vehicle-positions.pb': 'ct-vehicle-positions.pb',
  '/rt/trip-updates.pb': 'ct-trip-updates.pb',
  '/rt/service-alerts.pb': 'ct-service-alerts.pb',
};

interface Answer {
  route: string;
  status: number;
  text: string;
}

/** One request; a stream is read for its first chunk (or `streamMs`) and then dropped. */
async function ask(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
  streamMs = 1_500,
): Promise<{ status: number; text: string }> {
  const abort = new AbortController();
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body,
    signal: abort.signal,
  });
  const head = [...res.headers].map(([k, v]) => `${k}: ${v}`).join('\n');
  if (!(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    return { status: res.status, text: `${head}\n\n${await res.text()}` };
  }
  const reader = res.body!.getReader();
  const first = await Promise.race([
    reader.read().then((r) => (r.value ? Buffer.from(r.value).toString('utf8') : '')),
    new Promise<string>((r) => setTimeout(() => r(''), streamMs)),
  ]);
  abort.abort();
  await reader.cancel().catch(() => undefined);
  return { status: res.status, text: `${head}\n\n${first}` };
}

t.test(
  'init with the Caltrain files → serve → every endpoint answers, no secret in public',
  { skip: noRealFixtures() },
  async (t) => {
    const headerSeen: string[] = [];
    const feeds = createServer((req, res) => {
      const file = FILES[req.url ?? ''];
      if (!file) return void res.writeHead(404).end();
      // the realtime files are behind the agency's key header, as a real agency's may be
      if (req.url!.startsWith('/rt/')) {
        headerSeen.push(String(req.headers['x-api-key']));
        if (req.headers['x-api-key'] !== HEADER_VALUE) return void res.writeHead(401).end('key required');
      }
      res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(readFileSync(join(CALTRAIN, file)));
    });
    await new Promise<void>((r) => feeds.listen(0, '127.0.0.1', r));
    t.teardown(() => new Promise<void>((r) => feeds.close(() => r())));
    const agency = `http://127.0.0.1:${(feeds.address() as AddressInfo).port}`;
    const dir = join(tempDir(t.teardown, 'own-'), 'agency');

    const init = await runCli([
      'init',
      '--gtfs',
      `${agency}/gtfs/ct.zip`,
      '--vehicles',
      `${agency}/rt/vehicle-positions.pb`,
      '--trip-updates',
      `${agency}/rt/trip-updates.pb`,
      '--alerts',
      `${agency}/rt/service-alerts.pb`,
      '--header',
      `X-Api-Key: ${HEADER_VALUE}`,
      '--dir',
      dir,
    ]);
    t.equal(init.code, 0, `init: ${init.stdout}${init.stderr}`);
    t.match(init.stdout, /schedule caltrain \(Caltrain\)[\s\S]*176 trips/);
    t.match(
      init.stdout,
      /feed caltrain-vehicles[\s\S]*14 entities \(14 vehicle positions[\s\S]*trips matched to the schedule: 14 of 14/,
    );
    t.match(init.stdout, /feed caltrain-trip-updates[\s\S]*19 entities[\s\S]*trips matched to the schedule: 19 of 19/);
    t.match(init.stdout, /feed caltrain-alerts[\s\S]*0 entities/);
    t.match(init.stdout, /snapshot time 2023-11-08T01:05:59Z: [\d.]+ years old/, 'the snapshot age');
    t.match(
      init.stdout,
      /warning: serve will refuse this snapshot as it is: [^\n]*allow_old_snapshots/,
      'an archived capture is called one',
    );
    t.ok(
      headerSeen.length === 3 && headerSeen.every((h) => h === HEADER_VALUE),
      'each feed fetched once, with the header',
    );
    const key = /^ {2}(tk_live_[A-Za-z0-9]{32})$/m.exec(init.stdout)?.[1];
    t.ok(key, 'the key is printed on a line of its own');
    const next = /Next:\n {2}(.+)\n {2}curl -H "Authorization: Bearer (\S+)" (\S+)\n {2}(.+)\n/.exec(init.stdout);
    t.ok(next, 'three next commands');
    t.match(next?.[1], /serve --config \S+transit\.jsonc$/);
    t.equal(next?.[2], key);
    t.match(next?.[3], /^http:\/\/127\.0\.0\.1:8080\/api\/v1\/rail\/realtime$/, 'Caltrain is a rail agency');
    t.match(next?.[4], /status --config \S+transit\.jsonc$/);

    const configPath = join(dir, 'transit.jsonc');
    const config = loadConfig(configPath, {});
    const secrets = { signing_secret: config.signing_secret!, header: HEADER_VALUE, key: key! };
    t.ok(secrets.signing_secret.length >= 40);

    // the port in the file is the operator's 8080; the test listens wherever is free
    const service = await startServe(configPath, ['--port', '0']);
    t.teardown(() => service.stop('SIGKILL'));
    t.match(service.output(), /listening on http:\/\/127\.0\.0\.1:/, 'loopback, as the config says');
    const base = service.url;
    const auth = { authorization: `Bearer ${key}` };
    await waitFor('a poll of every feed', async () => {
      const status = (await (await fetch(`${base}/status.json`)).json()) as {
        feeds: Array<{ last_poll_at: string | null }>;
      };
      return status.feeds.length === 3 && status.feeds.every((f) => f.last_poll_at !== null);
    });

    // ids the schedule gives, so the parameterised routes answer for something real
    const rail = (await (await fetch(`${base}/api/v1/rail`, { headers: auth })).json()) as {
      data: Array<{ line: string }>;
    };
    const bus = (await (await fetch(`${base}/api/v1/bus`, { headers: auth })).json()) as {
      data: Array<{ route_id: string }>;
    };
    t.ok(rail.data.length > 0, 'the rail lines of the imported schedule');
    const created = await fetch(`${base}/api/v1/webhooks/endpoints`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ url: 'https://example.org/transit-hook' }),
    });
    const endpointId = created.status === 201 ? ((await created.json()) as { id: string }).id : 'whk_unknown';
    const params: Record<string, string> = {
      line: rail.data[0]!.line,
      route_id: bus.data[0]?.route_id ?? 'none',
      endpoint_id: endpointId,
      delivery_id: 'dlv_unknown',
      export_id: 'exp_unknown',
    };
    const bodies: Record<string, string> = { POST: '{}', PATCH: '{"description":"init test"}' };
    const pathOf = (route: RouteDef, mode: string) =>
      route.path.replace(/\{(\w+)\}/g, (_, name: string) =>
        encodeURIComponent(name === 'route_id' && mode !== 'bus' ? 'none' : params[name]!),
      );

    const routes = withDocs(documentedRoutes());
    const keyed: Answer[] = [];
    const unkeyed: Answer[] = [];
    // DELETE last: the endpoint it removes is the one the other webhook routes ask about
    const ordered = [...routes.filter((r) => r.method !== 'DELETE'), ...routes.filter((r) => r.method === 'DELETE')];
    for (const route of ordered) {
      const mode = /^\/api\/v1\/(bus|rail|streetcar)\//.exec(route.path)?.[1] ?? '';
      const path = pathOf(route, mode);
      const label = `${route.method} ${path}`;
      const body = bodies[route.method];
      const without = await ask(base, route.method, path, {}, body);
      unkeyed.push({ route: label, ...without });
      if (route.auth === 'key') t.equal(without.status, 401, `${label} without a key: 401`);
      const withKey = await ask(base, route.method, path, auth, body);
      keyed.push({ route: label, ...withKey });
      t.ok(withKey.status < 500, `${label} with the key: ${withKey.status}`);
    }
    t.comment(keyed.map((a) => `${a.status} ${a.route}`).join('\n'));
    t.equal(keyed.length, routes.length, `${routes.length} routes asked`);
    t.ok(keyed.filter((a) => a.status === 200).length >= 20, 'most answer 200');

    // what anyone can read, and the keyed answers too for the two secrets no response may carry
    for (const answer of unkeyed) {
      for (const [name, value] of Object.entries(secrets)) {
        t.notOk(answer.text.includes(value), `${answer.route} (no key) does not show the ${name}`);
      }
    }
    for (const answer of keyed) {
      t.notOk(answer.text.includes(secrets.signing_secret), `${answer.route} does not show the signing secret`);
      t.notOk(answer.text.includes(secrets.header), `${answer.route} does not show the feed header`);
    }

    // the second and third of the printed commands
    const curl = await fetch(next![3]!.replace('http://127.0.0.1:8080', base), { headers: auth });
    t.equal(curl.status, 200, 'the printed curl answers');
    const status = await runCli(['status', '--config', configPath]);
    t.equal(status.code, 0, status.stderr);
    t.match(status.stdout, /service +running/);
    t.match(status.stdout, /caltrain-vehicles/);
    t.equal(await service.stop(), 0, 'serve stops cleanly');
  },
);
