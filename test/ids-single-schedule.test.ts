// Ids across agencies (issue 28) change nothing where no id is shared: the demo's responses are
// byte-identical with served ids computed and without scoping. One minute of the demo (seed 1,
// simulated clock) runs through the real pipeline three times: without scoping (ServedIds.NONE:
// the code path as before), with the served ids of its one schedule, and with a second schedule
// (a ferry network) that shares no id with it, which scopes the ids and must still serve the
// demo's as they were. The same requests, at the same instant, to each over HTTP must answer the
// same bytes; the events they publish the same envelopes. A mapping that does prefix the demo's
// ids answers otherwise: the comparison sees a change.
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import t from 'tap';
import { createKey } from '../accounts/keys.ts';
import { createApi } from '../app/api.ts';
import { parseConfig } from '../core/config.ts';
import { InMemoryEventBus, toEnvelope, type DomainEvent } from '../core/events.ts';
import { ServedIds, type IdCatalog } from '../core/served-ids.ts';
import { demoConfig } from '../fixtures/demo-config.ts';
import { generateDemoNetwork } from '../fixtures/demo-network.ts';
import { startSimulator } from '../fixtures/simulator.ts';
import { buildZip } from '../fixtures/zip-write.ts';
import type { ServedIdsSource } from '../http/read/directory.ts';
import { BusReliabilitySnapshots } from '../http/read/reliability-snapshots.ts';
import { performanceRoutes } from '../http/routes/performance.ts';
import { reliabilityRoutes } from '../http/routes/reliability.ts';
import { startServer } from '../http/server.ts';
import { createPipeline } from '../pipeline/ingest.ts';
import { Db } from '../store/db.ts';
import { importGtfs } from '../store/gtfs-import.ts';
import { createHistoryWriter } from '../store/history-writer.ts';
import { feedSchedules, IdScopes, readIdCatalog } from '../store/id-scope.ts';
import { loadScheduleIndex } from '../store/schedule-index.ts';
import { silentLogger } from './support/logs.ts';

t.setTimeout(240_000);

// Tuesday 2025-06-17, 08:00 in America/Chicago: trips running, canceled, alerts out
const START = Date.parse('2025-06-17T13:00:00Z');

/** A ferry network sharing no id with the demo's (mode NULL: in no directory). */
function ferryZip(timezone: string): Buffer {
  const files = {
    'agency.txt': [
      'agency_id,agency_name,agency_url,agency_timezone',
      `FERRY,Harbor Ferry,https://example.org,${timezone}`,
      '',
    ].join('\n'),
    'routes.txt': 'route_id,agency_id,route_short_name,route_type\nferry-route,FERRY,F,4\n',
    'stops.txt':
      'stop_id,stop_name,stop_lat,stop_lon\nferry-dock-1,Dock 1,41.9,-87.6\nferry-dock-2,Dock 2,41.95,-87.62\n',
    'trips.txt': 'route_id,service_id,trip_id\nferry-route,FERRY-ALL,ferry-trip-1\n',
    'stop_times.txt':
      'trip_id,stop_sequence,stop_id,arrival_time,departure_time\nferry-trip-1,1,ferry-dock-1,08:00:00,' +
      '08:00:00\nferry-trip-1,2,ferry-dock-2,08:30:00,08:30:00\n',
    'calendar.txt':
      'service_id,monday,tuesday,wednesday,thursday,friday,saturday,sunday,start_date,end_date\nFERRY-ALL,1,1,1,1,1,' +
      '1,1,20250601,20250630\n',
  };
  return buildZip(Object.entries(files).map(([name, data]) => ({ name, data })));
}

t.test('one schedule, or schedules sharing no id: the same bytes as without scoping', async (t) => {
  const dir = t.testdir();
  const network = generateDemoNetwork(dir, { seed: 1, startDate: '2025-06-14', endDate: '2025-06-21' });
  const clock = { ms: START };
  const sim = await startSimulator({ network, now: () => clock.ms, badBodyEvery: 0 });
  t.teardown(() => sim.stop());
  const ferry = join(dir, 'ferry.zip');
  writeFileSync(ferry, ferryZip(network.timezone));
  const config = parseConfig({
    ...demoConfig(sim),
    signing_secret: 'ids-single-0123456789abcdef',
    reliability: { timezone: network.timezone },
  });

  type Ids = 'none' | 'scoped';
  /** One deployment: its database, pipeline, the events it published, and its API over HTTP. */
  async function deployment(ids: Ids, schedules: readonly string[]) {
    const db = await Db.open(':memory:');
    t.teardown(() => db.close());
    await importGtfs(db, 'demo', sim.scheduleSource);
    if (schedules.includes('ferry')) await importGtfs(db, 'ferry', ferry);
    const schedule = await loadScheduleIndex(db, 'demo');
    const scopes = await IdScopes.open(db, () => config, silentLogger);
    const source: ServedIdsSource = ids === 'none' ? { current: ServedIds.NONE } : scopes;
    const served = () => source.current;
    const bus = new InMemoryEventBus({ log: silentLogger });
    const events: DomainEvent[] = [];
    t.teardown(bus.subscribe((batch) => void events.push(...batch)));
    const pipeline = createPipeline({
      config,
      bus,
      history: createHistoryWriter(db),
      scheduleFor: () => schedule,
      now: () => clock.ms,
      log: silentLogger,
      servedIds: served,
    });
    t.teardown(() => pipeline.stop());
    const reliability = await BusReliabilitySnapshots.start(db, bus, { ids: served, log: silentLogger });
    t.teardown(() => reliability.close());
    const api = await createApi({
      db,
      live: pipeline.state,
      config,
      clock: () => clock.ms,
      log: silentLogger,
      ids: source,
      reliability,
      routes: [
        ...reliabilityRoutes({ db, settings: config.reliability, ids: served, windowMaxAgeMs: 0 }),
        ...performanceRoutes({
          db,
          settings: config.reliability,
          performance: config.performance,
          ids: served,
          windowMaxAgeMs: 0,
        }),
      ],
    });
    const server = await startServer({ handler: api.handler, host: '127.0.0.1', port: 0 });
    t.teardown(() => server.close());
    const key = (await createKey(db, { plan: 'max', test: false })).key;
    return { db, api, pipeline, events, scopes, key, url: `http://127.0.0.1:${server.port}` };
  }

  const plain = await deployment('none', ['demo', 'ferry']);
  const single = await deployment('scoped', ['demo']);
  const quiet = await deployment('scoped', ['demo', 'ferry']);
  t.equal(single.scopes.current.scoped, false, 'one schedule: nothing to scope');
  t.equal(quiet.scopes.current.scoped, true, 'two schedules: ids are scoped');
  t.same([...quiet.scopes.current.colliding], [], '… but the ferry shares no id with the demo');

  // one minute of the demo, in 5 s steps, every deployment polled at the same instants
  const all = [plain, single, quiet];
  for (let s = 0; s <= 60; s += 5) {
    clock.ms = START + s * 1000;
    for (const d of all) {
      await d.pipeline.pollOnce('demo-vehicles');
      for (const id of ['demo-trip-updates', 'demo-alerts', 'demo-notices'])
        if (s % 10 === 0) await d.pipeline.pollOnce(id);
    }
  }
  for (const d of all) await d.pipeline.stop();

  const bus = plain.pipeline.state.vehicles('bus');
  const rail = plain.pipeline.state.arrivals().find((a) => a.mode === 'rail');
  const alertRoute = plain.pipeline.state.alerts().find((a) => a.routes.length && a.modes.includes('bus'));
  t.ok(bus.length > 0 && rail && alertRoute, 'the minute has buses, rail arrivals and a bus alert');
  const route = encodeURIComponent(bus[0]!.route_id!);
  const line = encodeURIComponent(rail!.route_id!);
  const paths = [
    '/api/v1/bus',
    '/api/v1/rail',
    '/api/v1/streetcar',
    '/api/v1/bus/realtime?limit=100',
    '/api/v1/streetcar/realtime?limit=100',
    '/api/v1/rail/realtime?limit=200',
    `/api/v1/bus/${route}/realtime`,
    `/api/v1/rail/realtime?line=${line}&station=${encodeURIComponent(rail!.station_id)}`,
    '/api/v1/alerts?limit=100',
    '/api/v1/bus/alerts?limit=100',
    `/api/v1/alerts?route=${encodeURIComponent(alertRoute!.routes[0]!)}`,
    `/api/v1/bus/${route}/reliability?from=2025-06-17&to=2025-06-17`,
    `/api/v1/rail/${line}/reliability?group=week&from=2025-06-17&to=2025-06-17`,
    `/api/v1/bus/${route}/performance?from=2025-06-17&to=2025-06-17`,
  ];
  const answer = async (d: { url: string; key: string }, path: string) => {
    const res = await fetch(`${d.url}${path}`, { headers: { authorization: `Bearer ${d.key}` } });
    return { status: res.status, etag: res.headers.get('etag'), body: await res.text() };
  };

  for (const path of paths) {
    const before = await answer(plain, path);
    t.equal(before.status, 200, `${path}: ${before.body.slice(0, 200)}`);
    t.ok(before.body.length > 100, `${path} says something`);
    for (const [name, d] of [
      ['one schedule', single],
      ['schedules sharing no id', quiet],
    ] as const) {
      const now = await answer(d, path);
      t.equal(now.body, before.body, `${name}: ${path} byte for byte`);
      t.equal(now.etag, before.etag, `${name}: ${path} ETag`);
    }
  }

  // the events of the minute: the same envelopes (ids are per event and process)
  const envelopes = (events: readonly DomainEvent[]) => events.map((e) => JSON.stringify({ ...toEnvelope(e), id: '' }));
  t.ok(plain.events.length > 100, `${plain.events.length} events`);
  t.same(envelopes(single.events), envelopes(plain.events), 'one schedule: the same events');
  t.same(envelopes(quiet.events), envelopes(plain.events), 'schedules sharing no id: the same events');

  // the comparison can fail: a mapping where another schedule lists the demo's bus route
  const catalog = await readIdCatalog(quiet.db, config);
  const shared: IdCatalog = {
    ...catalog,
    prefixes: new Map([...catalog.prefixes, ['other', 'other']]),
    owners: { ...catalog.owners, route: new Map([...catalog.owners.route, [bus[0]!.route_id!, ['demo', 'other']]]) },
    fingerprint: 'shared',
  };
  const forced = ServedIds.build(shared, feedSchedules(config));
  const prefixed = await createApi({
    db: quiet.db,
    live: quiet.pipeline.state,
    config,
    clock: () => clock.ms,
    log: silentLogger,
    ids: { current: forced },
  });
  const server = await startServer({ handler: prefixed.handler, host: '127.0.0.1', port: 0 });
  t.teardown(() => server.close());
  const other = { url: `http://127.0.0.1:${server.port}`, key: quiet.key };
  const moved = await answer(other, '/api/v1/bus/realtime?limit=100');
  t.not(moved.body, (await answer(plain, '/api/v1/bus/realtime?limit=100')).body, 'a shared route: other bytes');
  t.match(moved.body, `"route_id":"demo:${bus[0]!.route_id}"`);
  t.equal((await answer(other, `/api/v1/bus/${route}/realtime`)).status, 404, 'its bare id is no route now');
});
