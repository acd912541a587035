// Authentication, revocation, the sliding window and its headers on a real server.
import t from 'tap';
import { revokeKey, listKeys } from '../accounts/keys.ts';
import { WINDOW_MS } from '../accounts/plans.ts';
import { StreamReply, type StreamProvider } from '../http/types.ts';
import { bearer, startHarness } from './support/harness.ts';
import { checker, loadValidator } from './support/client.ts';

const QUOTA_TYPE = 'https://iana.org/assignments/http-problem-types#quota-exceeded';

// the SSE provider (http/sse-routes.ts) plugs in here; this one sends the reset event only
const streams: StreamProvider = {
  open: (request) =>
    new StreamReply((sink) => {
      void request.render().then((body) => sink.write(Buffer.from(`event: reset\ndata: ${JSON.stringify(body)}\n\n`)));
    }),
};

t.test('keys and limits', async (t) => {
  const h = await startHarness({ streams, config: { api: { key_recheck_ms: 100 } } });
  t.teardown(() => h.close());
  const call = checker(t, h, await loadValidator(h));

  t.test('no key, malformed header, unknown key: 401 with a Bearer challenge', async (t) => {
    const none = await call('/api/v1/alerts');
    t.equal(none.status, 401);
    t.equal(none.headers.get('www-authenticate'), 'Bearer realm="transit-api"');
    t.match(none.json, { code: 'unauthorized', status: 401, instance: '/api/v1/alerts' });
    t.equal(none.headers.get('x-meter-unit'), 'request');
    t.ok(none.headers.get('x-api-version'));
    const basic = await call('/api/v1/alerts', { authorization: 'Basic dXNlcjpwdw==' });
    t.match(basic.headers.get('www-authenticate'), /error="invalid_request"/);
    const unknown = await call('/api/v1/alerts', bearer(`tk_live_${'A'.repeat(32)}`));
    t.match(unknown.headers.get('www-authenticate'), /error="invalid_token"/);
    t.equal((await call('/api/v1/alerts', bearer('not-a-key'))).status, 401);
    t.equal((await call('/api/v1/nope')).status, 401, 'unknown API paths need a key too');
  });

  t.test('a key revoked in the database (as by the CLI) stops working', async (t) => {
    const key = await h.key('regular', { name: 'to revoke' });
    t.equal((await call('/api/v1/rail', bearer(key))).status, 200);
    const id = (await listKeys(h.db)).find((k) => k.name === 'to revoke')!.id;
    await revokeKey(h.db, id);
    const deadline = Date.now() + 5_000;
    let status = 200;
    while (status === 200 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      status = (await fetch(`${h.url}/api/v1/rail`, { headers: bearer(key) })).status;
    }
    t.equal(status, 401, 'rejected after the recheck interval');
    const r = await call('/api/v1/rail', bearer(key));
    t.match(r.json, { code: 'unauthorized' });
  });

  t.test('Free key: request 21 in the window gets 429 with the right headers', async (t) => {
    const key = bearer(await h.key('free'));
    for (let i = 1; i <= 20; i++) {
      const r = await call('/api/v1/alerts', key);
      t.equal(r.status, 200, `request ${i}`);
      t.equal(r.headers.get('x-ratelimit-remaining'), String(20 - i));
      t.equal(r.headers.get('ratelimit'), `"5m";r=${20 - i};t=300`);
    }
    const r = await call('/api/v1/alerts', key);
    t.equal(r.status, 429);
    t.equal(r.headers.get('retry-after'), '300');
    t.equal(r.headers.get('x-ratelimit-limit'), '20');
    t.equal(r.headers.get('x-ratelimit-remaining'), '0');
    t.equal(r.headers.get('x-ratelimit-policy'), '20;w=300');
    t.equal(r.headers.get('ratelimit-policy'), '"5m";q=20;w=300');
    t.equal(r.headers.get('ratelimit'), '"5m";r=0;t=300');
    t.equal(r.headers.get('x-ratelimit-reset'), String(Math.ceil((h.clock.now + WINDOW_MS) / 1000)));
    t.equal(r.headers.get('x-meter-unit'), 'request');
    t.match(r.json, { type: QUOTA_TYPE, code: 'rate_limited', status: 429, 'violated-policies': ['5m'] });
    t.equal((await call('/api/v1/nope', key)).status, 429, 'the window covers every path');

    h.clock.now += 60_000;
    const later = await call('/api/v1/alerts', key);
    t.equal(later.headers.get('retry-after'), '240', 'the window slides: the first request frees up in 4 minutes');
    h.clock.now += WINDOW_MS - 60_000;
    t.equal((await call('/api/v1/alerts', key)).status, 200, 'allowed once the first request left the window');
  });

  // issue 15: one rule for what counts; it used to depend on the endpoint (exports' 403 and
  // limit_exceeds_plan counted, a stream's 403 did not, a revalidation past the limit got 429)
  t.test(
    'every answer to a keyed, metered request counts, refusals and streams too; only a 304 is free, ' +
      'even past the limit',
    async (t) => {
      const free = bearer(await h.key('free'));
      const remaining = async (path: string, headers: Record<string, string> = {}) => {
        const r = await fetch(`${h.url}${path}`, { headers: { ...free, ...headers } });
        await r.arrayBuffer();
        return [r.status, Number(r.headers.get('x-ratelimit-remaining'))];
      };
      t.same(await remaining('/api/v1/alerts'), [200, 19]);
      t.same(await remaining('/api/v1/alerts?limit=100'), [400, 18], '400 limit_exceeds_plan counts');
      t.same(await remaining('/api/v1/bus/nope/realtime'), [404, 17], '404 counts');
      t.same(await remaining('/api/v1/alerts?format=sse'), [403, 16], 'a stream refused to the plan (403) counts');
      t.same(await remaining('/api/v1/alerts', { accept: 'text/event-stream' }), [403, 15], 'either way of asking');
      const first = await fetch(`${h.url}/api/v1/alerts`, { headers: free });
      await first.arrayBuffer();
      const etag = first.headers.get('etag')!;
      t.equal(first.headers.get('x-ratelimit-remaining'), '14');
      t.same(await remaining('/api/v1/alerts', { 'if-none-match': etag }), [304, 14], 'a 304 is given back');
      for (let left = 13; left >= 0; left--) t.same(await remaining('/api/v1/rail'), [200, left]);
      t.same(await remaining('/api/v1/alerts'), [429, 0], 'the window is used up');
      const revalidated = await fetch(`${h.url}/api/v1/alerts`, { headers: { ...free, 'if-none-match': etag } });
      t.equal(revalidated.status, 304, 'past the limit, a revalidation still gets its 304: it would not have counted');
      t.equal(revalidated.headers.get('x-ratelimit-remaining'), '0');
      t.equal(revalidated.headers.get('retry-after'), null);
      const changed = await fetch(`${h.url}/api/v1/alerts`, { headers: { ...free, 'if-none-match': '"stale"' } });
      t.equal(changed.status, 429, 'a revalidation that is not a 304 is refused like any request');
      t.ok(changed.headers.get('retry-after'));
      t.match(await changed.json(), { code: 'rate_limited' });
      const refused = await fetch(`${h.url}/api/v1/alerts?limit=100`, { headers: { ...free, 'if-none-match': etag } });
      t.equal(refused.status, 429, 'past the limit a conditional request that fails otherwise is 429, not its 400');
      await refused.arrayBuffer();
      h.clock.now += WINDOW_MS;
    },
  );

  t.test('50 concurrent clients on one Regular key get exactly 600 successes', async (t) => {
    const key = bearer(await h.key('regular'));
    const counts = { ok: 0, limited: 0, other: 0 };
    const client = async () => {
      for (;;) {
        const r = await fetch(`${h.url}/api/v1/alerts?limit=5`, { headers: key });
        await r.arrayBuffer();
        if (r.status === 200) counts.ok++;
        else if (r.status === 429) {
          counts.limited++;
          return;
        } else {
          counts.other++;
          console.error('unexpected', r.status, r.headers.get('x-request-id'));
          return;
        }
      }
    };
    await Promise.all(Array.from({ length: 50 }, client));
    t.same(counts, { ok: 600, limited: 50, other: 0 });
  });

  t.test('test keys work like live keys', async (t) => {
    const key = await h.key('regular', { test: true });
    t.match(key, /^tk_test_/);
    const r = await call('/api/v1/bus/realtime', bearer(key));
    t.equal(r.status, 200);
    t.equal(r.headers.get('x-ratelimit-limit'), '600');
  });

  t.test('api_key is accepted for event streams only', async (t) => {
    const key = await h.key('regular');
    const res = await fetch(`${h.url}/api/v1/alerts?format=sse&mode=rail&api_key=${key}`);
    t.equal(res.status, 200);
    t.equal(res.headers.get('content-type'), 'text/event-stream');
    t.equal(res.headers.get('x-meter-unit'), 'connection-minute');
    t.equal(res.headers.get('cache-control'), 'no-store');
    const reader = res.body!.getReader();
    let text = '';
    while (!text.includes('event: reset')) text += new TextDecoder().decode((await reader.read()).value);
    t.match(text, /"id":"alerts:a1"/);
    await reader.cancel();
    const json = await call(`/api/v1/alerts?api_key=${key}`);
    t.equal(json.status, 401, 'a JSON request does not read api_key');
    const free = await h.key('free');
    t.equal((await fetch(`${h.url}/api/v1/alerts?format=sse&api_key=${free}`)).status, 403);
  });
});
