// Thousands of random paths, query strings, headers, bodies and cursors, over raw sockets and
// through inject(): no 5xx, no crash, no internal error logged, every error valid problem+json.
import t from 'tap';
import { bearer, startHarness } from './support/harness.ts';
import { loadValidator } from './support/client.ts';
import { rawRequest } from './support/raw-http.ts';

const SEED = Number(process.env.FUZZ_SEED ?? 20240501);
const SOCKET_REQUESTS = Number(process.env.FUZZ_SOCKET_REQUESTS ?? 1_000);
const INJECT_REQUESTS = Number(process.env.FUZZ_INJECT_REQUESTS ?? 6_000);

function rng(seed: number) {
  let s = seed >>> 0;
  const next = () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
  return {
    next,
    int: (n: number) => Math.floor(next() * n),
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!,
    chance: (p: number) => next() < p,
  };
}

const TEMPLATES = [
  '/api/v1/rail',
  '/api/v1/rail/realtime',
  '/api/v1/rail/alerts',
  '/api/v1/bus',
  '/api/v1/bus/realtime',
  '/api/v1/bus/alerts',
  '/api/v1/bus/{route_id}/realtime',
  '/api/v1/streetcar',
  '/api/v1/streetcar/realtime',
  '/api/v1/streetcar/alerts',
  '/api/v1/streetcar/{route_id}/realtime',
  '/api/v1/alerts',
  '/openapi.yaml',
  '/docs',
  '/llms.txt',
  '/api/v1/rail/{line}/reliability',
  '/api/v1/events/stream',
  '/api/v2/alerts',
  '/',
  '/api',
  '/api/v1',
  '/status',
];
const NAMES = [
  'limit',
  'cursor',
  'mode',
  'status',
  'route',
  'line',
  'station',
  'source',
  'impact',
  'direction',
  'delay_state',
  'format',
  'api_key',
  'last_event_id',
  'foo',
  '',
  'LIMIT',
  'route[]',
  '__proto__',
  'constructor',
  'toString',
];
const WEIRD = [
  '',
  '0',
  '-1',
  '1e3',
  '20',
  '21',
  '1000',
  '1001',
  '99999999999999999999',
  'NaN',
  'null',
  'true',
  '[]',
  '{}',
  'rail',
  'bus,rail',
  'streetcar,,',
  ',',
  'active',
  'upcoming,resolved',
  'Red',
  '39',
  'E',
  'sse',
  'json',
  'late,early',
  '%',
  '%zz',
  '%00',
  '%0d%0aX-Evil:%201',
  '\u00e9',
  '\u{1F68B}',
  '%F0%9F%9A%8B',
  '..%2F..%2Fetc%2Fpasswd',
  '<script>',
  "'; DROP TABLE api_keys; --",
  'a'.repeat(300),
  'x,'.repeat(80),
];

t.test('fuzz', async (t) => {
  const h = await startHarness({ quiet: true });
  t.teardown(() => h.close());
  const validator = await loadValidator(h);
  const r = rng(SEED);
  const keys = {
    max: await Promise.all([1, 2, 3, 4].map(() => h.key('max'))),
    free: await h.key('free'),
    regular: await h.key('regular'),
    test: await h.key('regular', { test: true }),
  };
  // real cursors to tamper with
  const page = (await (await fetch(`${h.url}/api/v1/alerts?limit=2`, { headers: bearer(keys.max[0]!) })).json()) as {
    meta: { next_cursor: string };
  };
  const cursor = page.meta.next_cursor;

  const value = (): string => {
    switch (r.int(6)) {
      case 0:
        return r.pick(WEIRD);
      case 1:
        return String(r.int(3000) - 10);
      case 2:
        return (
          cursor.slice(0, r.int(cursor.length)) +
          r.pick(['', 'A', '.', '..', '%2E', '=']) +
          cursor.slice(r.int(cursor.length))
        );
      case 3:
        return Buffer.from(Array.from({ length: r.int(40) }, () => r.int(256))).toString('base64url');
      case 4:
        return encodeURIComponent(
          String.fromCodePoint(...Array.from({ length: r.int(8) + 1 }, () => r.int(0x2fff) + 1)),
        );
      default:
        return r.pick(WEIRD) + (r.chance(0.5) ? `,${r.pick(WEIRD)}` : '');
    }
  };
  const path = (): string => {
    let p = r
      .pick(TEMPLATES)
      .replace(/\{[^}]+\}/g, () =>
        r.pick(['39', 'E', 'Red', 'nope', '%2F', '..', '%', '%E0%A4%A', encodeURIComponent(value())]),
      );
    if (r.chance(0.1)) p += '/';
    if (r.chance(0.05)) p = p.replace('/v1/', '//v1/');
    if (r.chance(0.05)) p += `/${value()}`;
    if (r.chance(0.03)) p = `/${'seg/'.repeat(r.int(200))}`;
    return p;
  };
  const query = (): string => {
    const n = r.chance(0.2) ? 0 : r.int(5) + 1;
    const parts = Array.from({ length: n }, () => (r.chance(0.1) ? r.pick(NAMES) : `${r.pick(NAMES)}=${value()}`));
    if (r.chance(0.05)) parts.push('&&&==&');
    return parts.length ? `?${parts.join('&')}` : '';
  };
  const headers = (): Record<string, string> => {
    const out: Record<string, string> = {};
    const auth = r.int(10);
    if (auth < 7) out.authorization = `Bearer ${r.pick(keys.max)}`;
    else if (auth === 7) out.authorization = `Bearer ${r.pick([keys.free, keys.regular, keys.test])}`;
    else if (auth === 8)
      out.authorization = r.pick([
        'Bearer',
        'Bearer ',
        'bearer tk_live_x',
        'Basic Zm9vOmJhcg==',
        `Bearer ${'tk_live_'.padEnd(40, 'A')}`,
        'Bearer a b c',
        `Bearer ${'x'.repeat(5000)}`,
      ]);
    if (r.chance(0.2))
      out.accept = r.pick(['text/event-stream', '*/*', 'application/json', 'text/html', 'garbage/;;', '']);
    if (r.chance(0.2)) out['if-none-match'] = r.pick(['*', '"abc"', 'W/"abc"', '"', ',,,', value()]);
    if (r.chance(0.1)) out['last-event-id'] = value();
    if (r.chance(0.1))
      out['content-type'] = r.pick(['application/json', 'text/plain', 'application/json; charset=utf-8', '']);
    if (r.chance(0.05)) out['x-request-id'] = value();
    return out;
  };
  const method = () =>
    r.pick([
      'GET',
      'GET',
      'GET',
      'GET',
      'GET',
      'GET',
      'GET',
      'GET',
      'GET',
      'HEAD',
      'POST',
      'PUT',
      'DELETE',
      'PATCH',
      'OPTIONS',
      'TRACE',
      'get',
      'FOO',
    ]);

  const stats = { total: 0, byStatus: new Map<number, number>(), problems: 0, closed: 0 };
  const failures: string[] = [];
  const check = (
    where: string,
    m: string,
    status: number,
    contentType: string | undefined,
    body: string,
    head: boolean,
  ) => {
    stats.total++;
    stats.byStatus.set(status, (stats.byStatus.get(status) ?? 0) + 1);
    if (status >= 500) failures.push(`${where}: ${status} ${body.slice(0, 200)}`);
    if (status >= 400 && !head && m.toUpperCase() !== 'HEAD') {
      const result = validator.checkProblem(new Headers({ 'content-type': contentType ?? '' }), body);
      if (!result.ok) failures.push(`${where}: ${status} not a problem document: ${result.errors.join('; ')}`);
      else {
        stats.problems++;
        if ((JSON.parse(body) as { status: number }).status !== status)
          failures.push(`${where}: problem status differs from ${status}`);
      }
    }
  };

  t.test(`${SOCKET_REQUESTS} raw socket requests (seed ${SEED})`, async (t) => {
    let next = 0;
    const worker = async () => {
      while (next < SOCKET_REQUESTS) {
        next++;
        const m = method();
        const target = `${path()}${query()}`;
        const hs = headers();
        let body = '';
        if (['POST', 'PUT', 'PATCH'].includes(m) && r.chance(0.7))
          body = r.pick(['{}', '{"url":1}', '[', 'null', 'x'.repeat(r.int(3000)), JSON.stringify({ a: value() })]);
        // a raw space would end the request target; spaces in values are sent encoded
        const head = [
          `${m} ${target.replace(/ /g, '%20')} HTTP/1.1`,
          'Host: 127.0.0.1',
          'Connection: close',
          ...Object.entries(hs).map(([k, v]) => `${k}: ${v.replace(/[\r\n]/g, '')}`),
          ...(body ? [`Content-Length: ${Buffer.byteLength(body)}`] : []),
        ];
        const res = await rawRequest(h.server.port, `${head.join('\r\n')}\r\n\r\n${body}`, {
          head: m.toUpperCase() === 'HEAD',
        });
        if (!res) {
          // uWS itself drops requests it cannot parse; that is not a response of ours
          stats.closed++;
          continue;
        }
        check(`${m} ${target}`, m, res.status, res.headers['content-type'], res.body, m.toUpperCase() === 'HEAD');
      }
    };
    await Promise.all(Array.from({ length: 16 }, worker));
    // malformed requests at the HTTP level
    for (const garbage of [
      'GARBAGE\r\n\r\n',
      'GET /api/v1/alerts?x=a b HTTP/1.1\r\nHost: x\r\n\r\n',
      'GET\r\n\r\n',
      'GET /api/v1/alerts HTTP/1.1\r\nBroken header\r\n\r\n',
      `GET /${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`,
      'POST /api/v1/alerts HTTP/1.1\r\nContent-Length: 99999999\r\n\r\nabc',
      '\x00\x01\x02\r\n\r\n',
    ]) {
      await rawRequest(h.server.port, garbage, { timeoutMs: 2_000 }).catch(() => null);
    }
    t.same(failures.slice(0, 20), [], 'no 5xx, every error a valid problem document');
    t.ok(stats.problems > SOCKET_REQUESTS / 4, `${stats.problems} problem documents checked`);
    const alive = await fetch(`${h.url}/api/v1/alerts`, { headers: bearer(keys.max[0]!) });
    t.equal(alive.status, 200, 'the server still answers');
  });

  t.test(`${INJECT_REQUESTS} requests through inject()`, async (t) => {
    failures.length = 0;
    for (let i = 0; i < INJECT_REQUESTS; i++) {
      const m = method();
      const url = `${path()}${query()}`;
      const res = await h.api.handler.inject({
        method: m,
        url,
        headers: headers(),
        ...(r.chance(0.1) ? { body: Buffer.from(Array.from({ length: r.int(200) }, () => r.int(256))) } : {}),
      });
      res.stream?.close();
      check(`${m} ${url}`, m, res.status, res.headers['content-type'], res.body, m.toUpperCase() === 'HEAD');
    }
    t.same(failures.slice(0, 20), [], 'no 5xx, every error a valid problem document');
  });

  t.test('nothing was logged as an internal failure', async (t) => {
    t.same(h.errors, []);
    t.comment(
      `statuses: ${JSON.stringify(Object.fromEntries([...stats.byStatus].sort((a, b) => a[0] - b[0])))}; closed by ` +
        `uWS: ${stats.closed}`,
    );
  });
});
