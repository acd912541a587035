// Event-stream allowance and metering on the real server: concurrent streams per key by plan,
// ?api_key= on streams only, connection-minutes per started minute (controlled clock), persisted
// as usage rows; the events route in the OpenAPI document.
import t from 'tap';
import { bearer } from './support/harness.ts';
import { openSse, type SseConnection } from './support/sse-client.ts';
import { startStreamHarness } from './support/streaming.ts';

t.test('allowance and metering', async (t) => {
  const h = await startStreamHarness({ meterTickMs: 3_600_000 });
  t.teardown(() => h.close());
  const open: SseConnection[] = [];
  t.teardown(() => Promise.all(open.map((c) => c.close())));
  const sse = async (path: string, headers: Record<string, string> = {}) => {
    const c = await openSse(`${h.url}${path}`, headers);
    open.push(c);
    return c;
  };

  t.test('a Regular key holds two streams; the third is 429 until one closes', async (t) => {
    const key = await h.key('regular');
    const events = await sse(`/api/v1/events/stream?api_key=${key}`);
    t.equal(events.status, 200);
    t.equal(events.headers.get('x-meter-unit'), 'connection-minute');
    t.equal(events.headers.get('cache-control'), 'no-store');
    t.equal(events.headers.get('x-accel-buffering'), 'no');
    const alerts = await sse('/api/v1/bus/alerts?format=sse', bearer(key));
    t.equal(alerts.status, 200, 'query streams count against the same allowance');
    await alerts.waitFor((e) => e.some((x) => x.event === 'reset'));

    const third = await sse(`/api/v1/rail/realtime?format=sse&api_key=${key}`);
    t.equal(third.status, 429);
    t.equal(third.headers.get('content-type'), 'application/problem+json');
    t.match(JSON.parse(third.text), {
      code: 'sse_allowance_exceeded',
      status: 429,
      open_streams: 2,
      allowed_streams: 2,
    });
    t.equal(third.headers.get('x-meter-unit'), 'connection-minute');
    // issue 15: the document promises Retry-After on every 429, whichever way the stream is asked for
    t.equal(third.headers.get('retry-after'), '30', '?format=sse: Retry-After');
    const viaAccept = await sse('/api/v1/bus/alerts', { ...bearer(key), accept: 'text/event-stream' });
    t.equal(viaAccept.status, 429);
    t.equal(viaAccept.headers.get('retry-after'), '30', 'Accept: text/event-stream: Retry-After');
    const viaEvents = await sse('/api/v1/events/stream', bearer(key));
    t.equal(viaEvents.status, 429);
    t.match(JSON.parse(viaEvents.text), { code: 'sse_allowance_exceeded' });
    t.equal(viaEvents.headers.get('retry-after'), '30', '/events/stream: Retry-After');

    await events.close();
    // the server learns of the closed connection asynchronously
    const deadline = Date.now() + 10_000;
    let again = await sse(`/api/v1/events/stream?api_key=${key}`);
    while (again.status === 429 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      again = await sse(`/api/v1/events/stream?api_key=${key}`);
    }
    t.equal(again.status, 200, 'a closed stream frees its slot');
    t.equal(h.streaming.allowance.openStreams((await h.api.keys.authenticate(key, h.clock.now))!.id), 2);
  });

  t.test('a Free key has no event streams: 403 forbidden_plan', async (t) => {
    const key = await h.key('free');
    const r = await sse(`/api/v1/events/stream?api_key=${key}`);
    t.equal(r.status, 403);
    t.match(JSON.parse(r.text), { code: 'forbidden_plan' });
    const q = await sse('/api/v1/alerts', { ...bearer(key), accept: 'text/event-stream' });
    t.equal(q.status, 403);
    const json = await fetch(`${h.url}/api/v1/alerts`, { headers: bearer(key) });
    t.equal(json.status, 200, 'the same endpoint as JSON works');
  });

  t.test('?api_key= is accepted on streams only', async (t) => {
    const key = await h.key('max');
    const json = await fetch(`${h.url}/api/v1/alerts?api_key=${key}`);
    t.equal(json.status, 401, 'a JSON request does not read the key from the query');
    const problem = (await json.json()) as { code: string; detail: string; errors: Array<{ parameter: string }> };
    t.equal(problem.code, 'unauthorized');
    t.match(
      problem.detail,
      /api_key in the query is accepted on event streams only/,
      'the message says why (issue 15)',
    );
    t.match(problem.errors, [{ parameter: 'api_key' }]);
    const noStream = (await (await fetch(`${h.url}/api/v1/rail?api_key=${key}`)).json()) as { detail: string };
    t.match(noStream.detail, /this endpoint has none/);
    const none = (await (await fetch(`${h.url}/api/v1/alerts`)).json()) as { detail: string };
    t.match(none.detail, /send Authorization: Bearer/, 'no key at all: the plain message');
    const both = await fetch(`${h.url}/api/v1/alerts?api_key=${key}`, { headers: bearer(key) });
    t.equal(both.status, 400);
    t.match(await both.json(), { code: 'invalid_parameter' });
    const unknown = await sse(`/api/v1/events/stream?api_key=tk_live_${'A'.repeat(32)}`);
    t.equal(unknown.status, 401);
  });

  t.test('a query that fails as JSON fails the same as a stream, and frees its slot', async (t) => {
    const key = await h.key('regular');
    const r = await sse('/api/v1/bus/nope/realtime?format=sse', bearer(key));
    t.equal(r.status, 404);
    t.match(JSON.parse(r.text), { code: 'not_found' });
    const bad = await sse('/api/v1/events/stream?types=nope', bearer(key));
    t.equal(bad.status, 400);
    // issue 15: the stream took a rail line as `route`; ids follow the one rule of the JSON filters
    const lineAsRoute = await sse('/api/v1/events/stream?route=Red', bearer(key));
    t.equal(lineAsRoute.status, 404, 'a rail line is not a route');
    t.match(JSON.parse(lineAsRoute.text), { code: 'not_found', errors: [{ parameter: 'route' }] });
    const unknownLine = await sse('/api/v1/events/stream?line=NOPE', bearer(key));
    t.equal(unknownLine.status, 404);
    const station = await sse('/api/v1/alerts?format=sse&station=NOPE', bearer(key));
    t.equal(station.status, 404, 'the SSE form of a list applies the same rule');
    const id = (await h.api.keys.authenticate(key, h.clock.now))!.id;
    t.equal(h.streaming.allowance.openStreams(id), 0);
  });

  t.test('a stream held 2.5 minutes is 3 connection-minutes, persisted as usage rows', async (t) => {
    const created = await h.createKey('max');
    const started = h.clock.now;
    const openBefore = h.streaming.connections.openCount;
    const stream = await sse('/api/v1/events/stream', bearer(created.key));
    t.equal(stream.status, 200);
    h.streaming.connections.tick();
    h.clock.now = started + 59_000;
    h.streaming.connections.tick();
    h.clock.now = started + 150_000;
    h.streaming.connections.tick();
    await stream.close();
    const deadline = Date.now() + 10_000;
    while (h.streaming.connections.openCount > openBefore && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    t.equal(h.streaming.connections.openCount, openBefore, 'metering stopped with the stream');
    h.clock.now = started + 600_000;
    h.streaming.connections.tick();
    await h.api.meter.flush();
    const rows = await h.db.all<{ quantity: number; calls: number }>(
      `SELECT CAST(sum(quantity) AS INTEGER) AS quantity, CAST(sum(calls) AS INTEGER) AS calls FROM api_usage
       WHERE key_id = $1 AND unit = 'connection-minute' AND endpoint = '/api/v1/events/stream'`,
      [created.id],
    );
    t.equal(rows[0]!.quantity, 3, 'minutes 1, 2 and 3 started; closing in the third adds nothing more');
    h.clock.now = started;
  });

  t.test('the events route is in the served OpenAPI document as an event stream', async (t) => {
    const doc = (await (await fetch(`${h.url}/openapi.json`)).json()) as {
      paths: Record<
        string,
        {
          get?: {
            'x-meter-unit'?: string;
            security?: unknown;
            responses: Record<string, { content?: Record<string, unknown> }>;
          };
        }
      >;
    };
    const op = doc.paths['/api/v1/events/stream']?.get;
    t.ok(op);
    t.equal(op!['x-meter-unit'], 'connection-minute');
    t.same(Object.keys(op!.responses['200']!.content!), ['text/event-stream']);
    t.ok(op!.responses['429'], 'sse_allowance_exceeded is documented');
    t.ok(doc.paths['/api/v1/alerts']!.get!.responses['200']!.content!['text/event-stream']);
    // issue 15: the query key is declared only where every answer is a stream (what the server does)
    const ops = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(
        item as Record<
          string,
          {
            security?: Array<Record<string, unknown>>;
            responses: Record<string, { content?: Record<string, unknown> }>;
          }
        >,
      ).map(([method, op]) => ({ name: `${method} ${path}`, op })),
    );
    for (const { name, op } of ops) {
      const query = (op.security ?? []).some((s) => 'apiKeyQuery' in s);
      const streamOnly = Object.keys(op.responses['200']?.content ?? {}).join() === 'text/event-stream';
      if (query) t.ok(streamOnly, `${name} declares apiKeyQuery and answers only event streams`);
    }
    t.same(doc.paths['/api/v1/alerts']!.get!.security, [{ bearerAuth: [] }], 'a JSON operation declares Bearer only');
    t.same(doc.paths['/api/v1/events/stream']!.get!.security, [{ bearerAuth: [] }, { apiKeyQuery: [] }]);
  });
});
