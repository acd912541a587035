// Every core endpoint (alerts, realtime, directories) and filter on a real server, each response checked against the
// served
// OpenAPI document (status, required headers, body schema) with ajv 2020-12.
import t from 'tap';
import { bearer, startHarness } from './support/harness.ts';
import { checker, loadValidator } from './support/client.ts';
import type { FakeLive } from './support/fake-live.ts';

const ids = (body: { data: Array<{ id: string }> }) => body.data.map((r) => r.id);

t.test('core endpoints', async (t) => {
  const h = await startHarness({
    reliability: {
      version: 1,
      snapshot: (id) =>
        id === '39'
          ? {
              from: '2024-04-24',
              to: '2024-04-30',
              scheduled: 700,
              canceled: 7,
              partially_canceled: 3,
              unobserved: 2,
              delivered: 691,
              delivered_pct: 98.7,
              observed: 698,
              delivered_pct_of_observed: 99,
            }
          : null,
    },
  });
  t.teardown(() => h.close());
  const v = await loadValidator(h);
  const call = checker(t, h, v);
  const max = bearer(await h.key('max'));

  t.test('rail directory', async (t) => {
    const r = await call('/api/v1/rail', max);
    t.equal(r.status, 200);
    t.same(
      r.json.data.map((l: { line: string }) => l.line),
      ['Blue', 'Red'],
    );
    const red = r.json.data.find((l: { line: string }) => l.line === 'Red');
    t.same(
      red.stations.map((s: { name: string }) => s.name),
      ['Park Street', 'Downtown Crossing'],
    );
    t.same(red.links, {
      realtime: '/api/v1/rail/realtime?line=Red',
      alerts: '/api/v1/rail/alerts?line=Red',
      reliability: '/api/v1/rail/Red/reliability',
    });
    t.same(r.json.meta, { count: 2, schedules: ['demo'] });
  });

  t.test('rail realtime and its filters', async (t) => {
    const all = await call('/api/v1/rail/realtime', max);
    t.equal(all.json.data.length, 6);
    t.same(
      all.json.data.map((a: { trip_id: string }) => a.trip_id),
      ['T3', 'T3', 'T4', 'T1', 'T1', 'T2'],
      'by line, trip, stop sequence',
    );
    const red = all.json.summaries.lines.find((l: { line: string }) => l.line === 'Red');
    t.same(red, {
      line: 'Red',
      arrivals: 3,
      trains: 2,
      mean_delay_s: 113.3,
      max_delay_s: 400,
      delay_states: { on_time: 1, late: 1, early: 1, canceled: 0, skipped: 0, unknown: 0 },
    });
    const t1 = all.json.summaries.trains.find((tr: { trip_id: string }) => tr.trip_id === 'T1');
    t.match(t1, {
      line: 'Red',
      next_station_id: 'place-pktrm',
      delay_s: 60,
      delay_state: 'on_time',
      arrivals: 2,
      vehicle_id: 'R-1',
    });
    const pktrm = all.json.summaries.stations.find((s: { station_id: string }) => s.station_id === 'place-pktrm');
    t.match(pktrm, { name: 'Park Street', arrivals: 2, max_delay_s: 60 });
    t.same(
      all.json.freshness.sources.map((s: { source: string }) => s.source),
      ['rail-tu'],
    );

    t.equal((await call('/api/v1/rail/realtime?line=Red', max)).json.data.length, 3);
    t.equal((await call('/api/v1/rail/realtime?line=Red,Blue', max)).json.data.length, 6);
    t.equal((await call('/api/v1/rail/realtime?station=place-pktrm', max)).json.data.length, 2);
    t.same(
      (await call('/api/v1/rail/realtime?station=state-nb', max)).json.data.map((a: { stop_id: string }) => a.stop_id),
      ['state-nb'],
      'a stop id also matches',
    );
    t.same(
      (await call('/api/v1/rail/realtime?direction=1', max)).json.data.map((a: { trip_id: string }) => a.trip_id),
      ['T2'],
    );
    const states = await call('/api/v1/rail/realtime?delay_state=late,early', max);
    t.same(states.json.data.map((a: { delay_state: string }) => a.delay_state).sort(), ['early', 'late']);
    t.equal(states.json.summaries.lines.length, 1, 'summaries cover the filtered set');
    const combined = await call(
      '/api/v1/rail/realtime?line=Blue&station=place-state&delay_state=unknown&direction=0',
      max,
    );
    t.same(
      combined.json.data.map((a: { trip_id: string }) => a.trip_id),
      ['T4'],
    );

    const unknownLine = await call('/api/v1/rail/realtime?line=Purple', max);
    t.equal(unknownLine.status, 404);
    t.match(unknownLine.json, { code: 'not_found', errors: [{ parameter: 'line' }] });
    for (const [query, parameter] of [
      ['direction=2', 'direction'],
      ['delay_state=slow', 'delay_state'],
      ['line=', 'line'],
    ] as const) {
      const bad = await call(`/api/v1/rail/realtime?${query}`, max);
      t.equal(bad.status, 400, query);
      t.equal(bad.json.errors[0].parameter, parameter, `${query} names ${parameter}`);
    }
  });

  t.test('bus directory with reliability snapshots', async (t) => {
    const r = await call('/api/v1/bus', max);
    t.same(
      r.json.data.map((b: { route_id: string }) => b.route_id),
      ['1', '39', '66'],
    );
    const b39 = r.json.data.find((b: { route_id: string }) => b.route_id === '39');
    t.equal(b39.reliability.delivered_pct, 98.7);
    t.equal(r.json.data.find((b: { route_id: string }) => b.route_id === '66').reliability, null);
    t.same(b39.links, {
      realtime: '/api/v1/bus/39/realtime',
      alerts: '/api/v1/bus/alerts?route=39',
      reliability: '/api/v1/bus/39/reliability',
    });
  });

  t.test('bus realtime with summaries and freshness', async (t) => {
    const r = await call('/api/v1/bus/realtime', max);
    t.same(
      r.json.data.map((x: { vehicle_id: string }) => x.vehicle_id),
      ['b4', 'b1', 'b2', 'b3'],
    );
    const byId = Object.fromEntries(r.json.data.map((x: { vehicle_id: string }) => [x.vehicle_id, x]));
    t.match(byId.b1, { delay_s: 120, age_s: 10, freshness: 'fresh' });
    t.match(byId.b3, { age_s: 200, freshness: 'stale' });
    t.match(byId.b4, { age_s: 900, freshness: 'expired' });
    const r39 = r.json.summaries.routes.find((s: { route_id: string }) => s.route_id === '39');
    t.match(r39, { vehicles: 2, mean_delay_s: 120, newest_age_s: 10, oldest_age_s: 30 });
    t.same(
      r.json.freshness.routes.find((s: { route_id: string }) => s.route_id === '66'),
      { route_id: '66', freshness: 'stale', fresh: 0, stale: 1, expired: 0 },
    );
    t.same(
      r.json.freshness.sources.map((s: { source: string }) => s.source),
      ['bus-vp'],
    );

    t.equal((await call('/api/v1/bus/realtime?route=39', max)).json.data.length, 2);
    t.equal((await call('/api/v1/bus/realtime?route=39,66', max)).json.data.length, 3);
    t.equal((await call('/api/v1/bus/realtime?route=999', max)).status, 404);
    const one = await call('/api/v1/bus/39/realtime', max);
    t.same(
      one.json.data.map((x: { vehicle_id: string }) => x.vehicle_id),
      ['b1', 'b2'],
    );
    const missing = await call('/api/v1/bus/999/realtime', max);
    t.equal(missing.status, 404);
    t.equal(missing.json.errors[0].parameter, 'route_id');
    t.equal((await call('/api/v1/bus/E/realtime', max)).status, 404, 'a streetcar route is not a bus route');
    t.equal((await call('/api/v1/bus/realtime?route=39&foo=1', max)).status, 400);
  });

  t.test('streetcar directory and realtime', async (t) => {
    const dir = await call('/api/v1/streetcar', max);
    t.same(
      dir.json.data.map((s: { route_id: string; active_alerts: number }) => [s.route_id, s.active_alerts]),
      [
        ['E', 1],
        ['F', 1],
      ],
    );
    t.equal(dir.json.data[0].links.alerts, '/api/v1/streetcar/alerts?route=E');
    const rt = await call('/api/v1/streetcar/realtime', max);
    t.same(
      rt.json.data.map((x: { vehicle_id: string; freshness: string }) => [x.vehicle_id, x.freshness]),
      [
        ['s1', 'stale'],
        ['s2', 'stale'],
      ],
      'a stale feed makes its vehicles stale',
    );
    t.match(rt.json.freshness.sources, [
      { source: 'streetcar-vp', freshness: 'stale', last_status: 'timeout', last_error: 'timed out after 10 s' },
    ]);
    t.same(
      (await call('/api/v1/streetcar/E/realtime', max)).json.data.map((x: { vehicle_id: string }) => x.vehicle_id),
      ['s1'],
    );
    t.equal((await call('/api/v1/streetcar/realtime?route=F', max)).json.data.length, 1);
    t.equal((await call('/api/v1/streetcar/39/realtime', max)).status, 404);
  });

  t.test('alerts: cross-mode list and every filter', async (t) => {
    const all = await call('/api/v1/alerts', max);
    t.same(
      ids(all.json),
      ['alerts:a1', 'alerts:a2', 'alerts:a3', 'alerts:a4', 'alerts:a5', 'other:a6', 'other:a7'],
      'newest first, id breaks ties',
    );
    t.same(all.json.meta, { limit: 20, next_cursor: null, total: 7 });
    t.same(
      all.json.data.map((a: { id: string; freshness: string }) => [a.id, a.freshness]),
      [
        ['alerts:a1', 'fresh'],
        ['alerts:a2', 'fresh'],
        ['alerts:a3', 'fresh'],
        ['alerts:a4', 'fresh'],
        ['alerts:a5', 'fresh'],
        ['other:a6', 'expired'],
        ['other:a7', 'expired'],
      ],
      "each alert carries its source's freshness; a source not polled vouches for nothing",
    );
    t.match(all.json.freshness.sources, [
      { source: 'alerts', kind: 'alerts-json', freshness: 'fresh', last_status: 'ok' },
    ]);
    const live = h.live as FakeLive;
    live.change((l) => {
      l.feedList = l.feedList.map((f) =>
        f.feed_id === 'alerts' ? { ...f, freshness: 'stale' as const, last_status: 'timeout' as const } : f,
      );
    });
    const stale = await call('/api/v1/alerts?source=alerts', max);
    t.ok(
      stale.json.data.every((a: { freshness: string }) => a.freshness === 'stale'),
      'alerts from a stale feed say so',
    );
    t.match(stale.json.freshness.sources, [{ source: 'alerts', freshness: 'stale', last_status: 'timeout' }]);
    live.change((l) => {
      l.feedList = l.feedList.map((f) =>
        f.feed_id === 'alerts' ? { ...f, freshness: 'fresh' as const, last_status: 'ok' as const } : f,
      );
    });
    const cases: Array<[string, string[]]> = [
      ['mode=rail', ['alerts:a1', 'alerts:a2', 'other:a7']],
      ['mode=rail,streetcar', ['alerts:a1', 'alerts:a2', 'alerts:a5', 'other:a6', 'other:a7']],
      ['status=upcoming', ['alerts:a2', 'other:a7']],
      ['status=resolved', ['alerts:a4']],
      ['route=39', ['alerts:a3', 'other:a7']],
      ['line=Red', ['alerts:a1', 'other:a7']],
      ['route=39&line=Blue', ['alerts:a2', 'alerts:a3', 'other:a7']],
      ['station=place-pktrm', ['alerts:a1', 'alerts:a5']],
      ['source=other', ['other:a6', 'other:a7']],
      ['impact=no_service,stop_moved', ['alerts:a2', 'alerts:a5', 'other:a7']],
      ['mode=bus&status=active&impact=detour', ['alerts:a3', 'other:a6']],
    ];
    for (const [query, expected] of cases)
      t.same(ids((await call(`/api/v1/alerts?${query}`, max)).json), expected, query);
    // known ids with nothing matching now: an empty list, not a 404
    t.same(ids((await call('/api/v1/alerts?station=place-state', max)).json), [], 'a schedule station without alerts');
    t.same(ids((await call('/api/v1/alerts?source=bus-vp', max)).json), [], 'a configured feed without alerts');
    for (const [query, parameter, status] of [
      ['mode=plane', 'mode', 400],
      ['impact=bogus', 'impact', 400],
      ['status=open', 'status', 400],
      ['route=Nope', 'route', 404],
      ['line=Nope', 'line', 404],
      // issue 15: one rule for every id filter (they used to give an empty 200)
      ['station=NOPE', 'station', 404],
      ['source=nope', 'source', 404],
      ['route=Red', 'route', 404],
      ['line=39', 'line', 404],
      ['route=39,Nope', 'route', 404],
    ] as const) {
      const r = await call(`/api/v1/alerts?${query}`, max);
      t.equal(r.status, status, query);
      t.equal(r.json.errors[0].parameter, parameter);
    }
  });

  t.test('per-mode alert lists', async (t) => {
    t.same(ids((await call('/api/v1/rail/alerts', max)).json), ['alerts:a1', 'alerts:a2', 'other:a7']);
    t.same(ids((await call('/api/v1/rail/alerts?line=Blue', max)).json), ['alerts:a2']);
    t.same(ids((await call('/api/v1/bus/alerts', max)).json), ['alerts:a3', 'alerts:a4', 'other:a6', 'other:a7']);
    t.same(ids((await call('/api/v1/bus/alerts?route=39&status=active', max)).json), ['alerts:a3']);
    // issue 15, one rule for unknown ids: a station no schedule or live data knows is 404, like a route
    const nowhere = await call('/api/v1/bus/alerts?station=nowhere', max);
    t.equal(nowhere.status, 404);
    t.match(nowhere.json, { code: 'not_found', errors: [{ parameter: 'station' }] });
    t.same(ids((await call('/api/v1/streetcar/alerts', max)).json), ['alerts:a5', 'other:a6']);
    t.same(ids((await call('/api/v1/streetcar/alerts?route=F&source=other&impact=detour', max)).json), ['other:a6']);
    const wrong = await call('/api/v1/rail/alerts?route=Red', max);
    t.equal(wrong.status, 400, 'rail names lines, not routes');
    t.equal(wrong.json.errors[0].parameter, 'route');
    t.equal((await call('/api/v1/bus/alerts?line=Red', max)).status, 400);
    t.equal((await call('/api/v1/streetcar/alerts?route=Nope', max)).status, 404);
  });

  t.test('limits by plan', async (t) => {
    const free = bearer(await h.key('free'));
    const regular = bearer(await h.key('regular'));
    t.equal((await call('/api/v1/alerts?limit=20', free)).status, 200);
    const over = await call('/api/v1/alerts?limit=21', free);
    t.equal(over.status, 400);
    t.match(over.json, { code: 'limit_exceeds_plan', errors: [{ parameter: 'limit' }] });
    t.equal((await call('/api/v1/alerts?limit=100', regular)).status, 200);
    t.equal((await call('/api/v1/alerts?limit=101', regular)).json.code, 'limit_exceeds_plan');
    t.equal((await call('/api/v1/alerts?limit=1000', max)).status, 200);
    t.equal((await call('/api/v1/alerts?limit=1001', max)).json.code, 'limit_exceeds_plan');
    for (const bad of ['0', '-1', 'abc', '1e1', ' 5', '']) {
      const r = await call(`/api/v1/alerts?limit=${encodeURIComponent(bad)}`, max);
      t.equal(r.json.code, 'invalid_parameter', `limit=${JSON.stringify(bad)}`);
    }
    const page = await call('/api/v1/rail/realtime?limit=2', max);
    t.equal(page.json.data.length, 2);
    t.ok(page.json.links.next.startsWith('/api/v1/rail/realtime?cursor='));
  });

  t.test('query errors name every offending parameter', async (t) => {
    const two = await call('/api/v1/alerts?foo=1&bar=2', max);
    t.same(
      two.json.errors.map((e: { parameter: string }) => e.parameter),
      ['foo', 'bar'],
    );
    t.match(two.json.detail, /foo, bar/);
    t.match((await call('/api/v1/alerts?limit=1&limit=2', max)).json.errors, [
      { parameter: 'limit', detail: 'given more than once' },
    ]);
    t.match((await call('/api/v1/rail?limit=5', max)).json.errors, [
      { parameter: 'limit', detail: 'this endpoint is not paginated' },
    ]);
    t.match((await call('/api/v1/alerts?api_key=x', max)).json.errors, [{ parameter: 'api_key' }]);
  });

  t.test('event-stream requests without a stream provider', async (t) => {
    const regular = bearer(await h.key('regular'));
    t.equal((await call('/api/v1/alerts?format=sse', regular)).json.code, 'not_acceptable');
    t.equal((await call('/api/v1/alerts', { ...regular, accept: 'text/event-stream' })).json.code, 'not_acceptable');
    t.equal(
      (await call('/api/v1/alerts?format=sse', bearer(await h.key('free')))).json.code,
      'forbidden_plan',
      'Free has no stream allowance',
    );
    t.equal((await call('/api/v1/rail?format=sse', regular)).status, 400, 'directories have no stream');
  });

  t.test('HTTP semantics: ETag/304, HEAD, OPTIONS, 405, unknown paths', async (t) => {
    const first = await call('/api/v1/alerts?mode=bus', max);
    const etag = first.headers.get('etag')!;
    t.ok(etag);
    const remaining = Number(first.headers.get('x-ratelimit-remaining'));
    const again = await call('/api/v1/alerts?mode=bus', { ...max, 'if-none-match': etag });
    t.equal(again.status, 304);
    t.equal(again.text, '');
    t.equal(Number(again.headers.get('x-ratelimit-remaining')), remaining, 'a 304 is not counted');
    const next = await call('/api/v1/alerts?mode=bus', max);
    t.equal(Number(next.headers.get('x-ratelimit-remaining')), remaining - 1);
    t.equal(next.headers.get('etag'), etag, 'same data, same tag');

    const head = await fetch(`${h.url}/api/v1/alerts`, { method: 'HEAD', headers: max });
    t.equal(head.status, 200);
    t.equal(await head.text(), '');
    t.ok(Number(head.headers.get('content-length')) > 100, 'HEAD reports the length of the GET body');

    const preflight = await fetch(`${h.url}/api/v1/alerts`, { method: 'OPTIONS' });
    t.equal(preflight.status, 204);
    t.match(preflight.headers.get('access-control-allow-headers'), /Authorization/);

    const post = await fetch(`${h.url}/api/v1/alerts`, { method: 'POST', headers: max });
    t.equal(post.status, 405);
    t.equal(post.headers.get('allow'), 'GET');
    t.equal((await post.json()).code, 'method_not_allowed');

    const unknown = await fetch(`${h.url}/api/v1/nothing/here`, { headers: max });
    t.equal(unknown.status, 404);
    t.ok(unknown.headers.get('ratelimit'), 'a 404 carries the rate-limit headers');
    t.equal(unknown.headers.get('x-meter-unit'), 'request');
    t.equal(unknown.headers.get('content-type'), 'application/problem+json');
    const outside = await fetch(`${h.url}/elsewhere`);
    t.equal(outside.status, 404);
    t.ok(outside.headers.get('x-api-version'));
  });

  t.test('documentation is public and generated from the table', async (t) => {
    for (const path of ['/openapi.yaml', '/openapi.json', '/docs', '/llms.txt', '/llms-full.txt']) {
      const r = await call(path);
      t.equal(r.status, 200, path);
    }
    const llms = (await call('/llms.txt')).text;
    for (const path of ['/api/v1/rail/realtime', '/api/v1/bus/{route_id}/realtime', '/api/v1/alerts'])
      t.match(llms, path);
    const full = (await call('/llms-full.txt')).text;
    t.match(full, /`delay_state` \(query/);
    t.match(
      full,
      /curl -H "Authorization: Bearer \$TRANSIT_API_KEY" "\$BASE_URL\/api\/v1\/bus\/39\/realtime\?limit=20"/,
    );
    const json = (await call('/openapi.json')).json;
    t.equal(json.openapi, '3.1.0');
    t.same(
      Object.keys(json.paths).filter((p: string) => p.startsWith('/api/')).length,
      12,
      'the twelve core endpoints',
    );
  });
});
