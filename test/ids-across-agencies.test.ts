// Ids across agencies (issue 28): a service with schedules whose ids collide serves every
// agency's routes, vehicles, arrivals, alerts and reliability under distinct ids. Two real
// schedules share every id (Caltrain's ct.zip imported as ct-a and, by a reload, as ct-b, each
// with its own copy of the captured feeds), and two small agencies built here number their
// routes, stops and trips alike (both have bus route 1, rail line L, stops S1 and S2, trips 1-1 …).
// Everything goes through `transit-api serve` over real HTTP.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { wallClock } from '../core/dates.ts';
import { buildZip } from '../fixtures/zip-write.ts';
import { FIXTURES_REAL, noRealFixtures } from './support/fixtures-real.ts';
import { encodeFeed, header } from './support/pipeline-fakes.ts';
import { op, startServe, tempDir, waitFor, writeJson } from './support/service-process.ts';
import { openSse } from './support/sse-client.ts';
import type { JsonBody } from './support/json.ts';

t.setTimeout(300_000);

const TZ = 'America/Los_Angeles';
const DAY_MS = 86_400_000;
type Json = Record<string, JsonBody>;

interface Agency {
  /** schedule id; its feeds are `<name>-vp`, `<name>-tu`, `<name>-alerts` */
  name: string;
  agency: string;
  /** route 1's trips today; the first `seen` of them are in the trip updates */
  trips: number;
  seen: number;
  /** a route only this agency has */
  own: string;
}

const HART: Agency = { name: 'hart', agency: 'HART', trips: 4, seen: 2, own: '5' };
// a prefix of its own (schedules[].id_prefix)
const PSTA: Agency = { name: 'psta-gtfs', agency: 'PSTA', trips: 6, seen: 1, own: '7' };

const ymd = (ms: number) => wallClock(new Date(ms), TZ).date.replaceAll('-', '');

/** Bus routes 1 and `own`, rail line L, stops S1 and S2 (and one of its own), every day around today. */
function agencyZip(a: Agency): Buffer {
  const trips = ['route_id,service_id,trip_id,direction_id'];
  const times = ['trip_id,stop_sequence,stop_id,arrival_time,departure_time'];
  const add = (route: string, id: string) => {
    trips.push(`${route},ALL,${id},0`);
    times.push(`${id},1,S1,06:00:00,06:00:00`, `${id},2,S2,06:30:00,06:30:00`);
  };
  for (let i = 1; i <= a.trips; i++) add('1', `1-${i}`);
  add(a.own, `${a.own}-1`);
  add('L', 'L-1');
  const files = {
    'agency.txt':
      `agency_id,agency_name,agency_url,agency_timezone\n${a.agency},${a.agency},` + `https://example.org,${TZ}\n`,
    'routes.txt':
      `route_id,agency_id,route_short_name,route_type\n1,${a.agency},1,3\n${a.own},${a.agency},${a.own},` +
      `3\nL,${a.agency},L,2\n`,
    'stops.txt':
      `stop_id,stop_name,stop_lat,stop_lon\nS1,${a.agency} First,27.9,-82.4\nS2,${a.agency} ` +
      `Second,27.95,-82.45\n${a.agency}3,${a.agency} Own,27.99,-82.5\n`,
    'trips.txt': `${trips.join('\n')}\n`,
    'stop_times.txt': `${times.join('\n')}\n`,
    'calendar.txt':
      `service_id,monday,tuesday,wednesday,thursday,friday,saturday,sunday,start_date,end_date\nALL,1,` +
      `1,1,1,1,1,1,${ymd(Date.now() - 30 * DAY_MS)},${ymd(Date.now() + 30 * DAY_MS)}\n`,
  };
  return buildZip(Object.entries(files).map(([name, data]) => ({ name, data })));
}

/** The agency's three feeds, written to `dir`: a bus and a train, trips seen, an alert on route 1 and stop S1. */
function writeFeeds(dir: string, a: Agency, lat = 27.9): void {
  const now = Math.floor(Date.now() / 1000);
  const start_date = ymd(Date.now());
  const trip = (id: string, route: string) => ({ trip_id: id, route_id: route, start_date });
  const vehicle = (id: string, t: Json) => ({
    id,
    vehicle: { trip: t, vehicle: { id }, position: { latitude: lat, longitude: -82.4 }, timestamp: now },
  });
  writeFileSync(
    join(dir, `${a.name}-vp.pb`),
    encodeFeed({
      header: header(now),
      entity: [vehicle('bus-1', trip('1-1', '1')), vehicle('train-1', trip('L-1', 'L'))],
    }),
  );
  const update = (id: string, route: string) => ({
    id: `tu-${id}`,
    trip_update: {
      trip: trip(id, route),
      stop_time_update: [
        { stop_sequence: 1, stop_id: 'S1', arrival: { time: now + 300 } },
        { stop_sequence: 2, stop_id: 'S2', arrival: { time: now + 1_200 } },
      ],
      timestamp: now,
    },
  });
  const seen = Array.from({ length: a.seen }, (_, i) => update(`1-${i + 1}`, '1'));
  writeFileSync(
    join(dir, `${a.name}-tu.pb`),
    encodeFeed({ header: header(now), entity: [...seen, update('L-1', 'L')] }),
  );
  writeFileSync(
    join(dir, `${a.name}-alerts.pb`),
    encodeFeed({
      header: header(now),
      entity: [
        {
          id: 'detour',
          alert: {
            informed_entity: [{ route_id: '1' }, { stop_id: 'S1' }],
            header_text: { translation: [{ text: `${a.agency} detour`, language: 'en' }] },
            effect: 4,
            cause: 10,
          },
        },
      ],
    }),
  );
}

const feedsOf = (dir: string, a: Agency) =>
  ['vp', 'tu', 'alerts'].map((kind) => ({
    id: `${a.name}-${kind}`,
    kind: 'gtfs-rt',
    url: `file://${join(dir, `${a.name}-${kind}.pb`)}`,
    // vehicles are polled often: the event stream test moves them
    interval_s: kind === 'vp' ? 1 : 3_600,
    schedule_id: a.name,
    ...(kind === 'alerts' ? { alerts: true } : {}),
  }));

const caltrainFeeds = (schedule: string) =>
  [
    ['vp', 'ct-vehicle-positions.pb'],
    ['tu', 'ct-trip-updates.pb'],
  ].map(([kind, file]) => ({
    id: `${schedule}-${kind}`,
    kind: 'gtfs-rt',
    url: `file://${join(FIXTURES_REAL, 'caltrain', file!)}`,
    interval_s: 3_600,
    schedule_id: schedule,
    // captured in 2023
    allow_old_snapshots: true,
  }));

const skip = noRealFixtures();
t.test(
  'two agencies numbering alike, and one schedule imported twice, served under distinct ids',
  { skip },
  async (t) => {
    const dir = tempDir(t.teardown.bind(t), 'ids-across-');
    const ctZip = join(FIXTURES_REAL, 'caltrain', 'ct.zip');
    for (const a of [HART, PSTA]) {
      writeFileSync(join(dir, `${a.name}.zip`), agencyZip(a));
      writeFeeds(dir, a);
    }
    const configPath = join(dir, 'transit.json');
    const base = {
      host: '127.0.0.1',
      port: 0,
      db_path: join(dir, 'transit.duckdb'),
      signing_secret: 'ids-test-secret-0123456789abcdef',
      reliability: { timezone: TZ },
      exports: { enabled: false, dir: join(dir, 'exports') },
      snapshot: { enabled: false, path: join(dir, 'snapshot.duckdb') },
    };
    const schedules = [
      { id: 'ct-a', source: ctZip },
      { id: HART.name, source: join(dir, 'hart.zip') },
      { id: PSTA.name, source: join(dir, 'psta-gtfs.zip'), id_prefix: 'psta' },
    ];
    const feeds = [...caltrainFeeds('ct-a'), ...feedsOf(dir, HART), ...feedsOf(dir, PSTA)];
    writeJson(configPath, { ...base, schedules, feeds });
    const service = await startServe(configPath);
    t.teardown(() => service.stop('SIGKILL'));
    const created = await op('keys', ['create', '--plan', 'max', '--config', configPath]);
    t.equal(created.code, 0, created.err);
    const key = created.out.split('\n')[0]!;
    const get = async (path: string): Promise<{ status: number; body: Json }> => {
      const res = await fetch(`${service.url}${path}`, { headers: { authorization: `Bearer ${key}` } });
      return { status: res.status, body: (await res.json()) as Json };
    };
    const ok = async (path: string): Promise<Json> => {
      const { status, body } = await get(path);
      t.equal(status, 200, `${path}: ${status === 200 ? '' : JSON.stringify(body)}`);
      return body;
    };
    const polled = (ids: readonly string[]) =>
      waitFor(`${ids.join(', ')} polled`, async () => {
        const status = (await (await fetch(`${service.url}/status.json`)).json()) as Json;
        return ids.every((id) => status.feeds.some((f: Json) => f.feed_id === id && f.last_poll_at));
      });
    await polled(feeds.map((f) => f.id));
    t.match(service.output(), /schedules share ids: served prefixed/, 'the start says which ids are prefixed');

    t.test('one copy of Caltrain: its ids are its own', async (t) => {
      const rail = await ok('/api/v1/rail');
      const lines = rail.data.map((l: Json) => l.line);
      t.ok(lines.includes('L1'), 'Caltrain shares no id with the small agencies: L1 as stored');
      t.ok(lines.includes('hart:L') && lines.includes('psta:L'), 'line L of both agencies, prefixed');
    });

    t.test('a reload adding the second copy says which ids change, and how', async (t) => {
      const v2 = {
        ...base,
        schedules: [...schedules, { id: 'ct-b', source: ctZip }],
        feeds: [...feeds, ...caltrainFeeds('ct-b')],
      };
      writeJson(configPath, v2);
      const reloaded = await op('reload', ['--config', configPath]);
      t.equal(reloaded.code, 0, reloaded.out + reloaded.err);
      t.match(
        reloaded.out,
        /ids: schedule ct-a: 9 route ids now served otherwise \(also listed by ct-b\): B7 → ct-a:B7/,
      );
      t.match(reloaded.out, /ids: schedule ct-a: \d+ stop ids now served otherwise \(also listed by ct-b\)/);
      t.match(reloaded.out, /ids: schedule ct-a: 176 trip ids now served otherwise \(also listed by ct-b\)/);
      t.notMatch(reloaded.out, /ids: schedule (hart|psta)/, 'the small agencies keep their ids');
      await waitFor('the reload logged', async () => /served ids changed/.test(service.output()));
      await polled(['ct-b-vp', 'ct-b-tu']);
    });

    t.test('directories: every agency, with its schedule and agency name', async (t) => {
      const bus = await ok('/api/v1/bus');
      const byId = new Map<string, Json>(bus.data.map((r: Json) => [r.route_id, r]));
      t.match(byId.get('hart:1'), { schedule: 'hart', agency_name: 'HART', short_name: '1' });
      t.match(byId.get('psta:1'), { schedule: 'psta-gtfs', agency_name: 'PSTA', short_name: '1' });
      t.match(byId.get('5'), { schedule: 'hart' }, 'an id one schedule has keeps its form');
      t.match(byId.get('7'), { schedule: 'psta-gtfs' });
      t.match(byId.get('ct-a:Bus Bridge'), { schedule: 'ct-a', agency_name: 'Caltrain' });
      t.match(byId.get('ct-b:Bus Bridge'), { schedule: 'ct-b', agency_name: 'Caltrain' });
      t.notOk(byId.has('1'), 'no bare shared id');
      t.same([...bus.meta.schedules].sort(), ['ct-a', 'ct-b', 'hart', 'psta-gtfs']);
      t.match(byId.get('hart:1')!.links, { realtime: /\/bus\/hart%3A1\/realtime$/, alerts: /route=hart%3A1$/ });
      const rail = await ok('/api/v1/rail');
      const lines = new Map<string, Json>(rail.data.map((l: Json) => [l.line, l]));
      t.same(
        lines.get('hart:L')!.stations.map((s: Json) => [s.station_id, s.name]),
        [
          ['hart:S1', 'HART First'],
          ['hart:S2', 'HART Second'],
        ],
      );
      t.same(
        lines.get('psta:L')!.stations.map((s: Json) => s.station_id),
        ['psta:S1', 'psta:S2'],
      );
      t.ok(lines.has('ct-a:L1') && lines.has('ct-b:L1'), 'both copies of Caltrain');
      t.notOk(lines.has('L1'));
      t.ok(
        lines.get('ct-b:L1')!.stations.every((s: Json) => s.station_id.startsWith('ct-b:')),
        "ct-b's stations are ct-b's",
      );
    });

    t.test('vehicles: each agency under its own route, vehicle and trip ids', async (t) => {
      for (const [a, prefix] of [
        [HART, 'hart'],
        [PSTA, 'psta'],
      ] as const) {
        const one = await ok(`/api/v1/bus/${prefix}:1/realtime`);
        t.same(
          one.data.map((v: Json) => [v.source, v.vehicle_id, v.route_id, v.trip_id, v.id]),
          [[`${a.name}-vp`, `${prefix}:bus-1`, `${prefix}:1`, `${prefix}:1-1`, `${a.name}-vp:${prefix}:bus-1`]],
        );
        // age_s is counted from each request's own clock: two requests may fall either side of a second
        const ageless = (rows: Json[]) => rows.map(({ age_s: _age, ...rest }: Json) => rest);
        t.same(
          ageless((await ok(`/api/v1/bus/realtime?route=${prefix}:1`)).data),
          ageless(one.data),
          'the filter reads it alike',
        );
      }
      const shared = await get('/api/v1/bus/1/realtime');
      t.equal(shared.status, 404, 'a shared id given bare names no route');
      t.match(shared.body, { code: 'not_found', errors: [{ parameter: 'route_id' }] });
      const filtered = await get('/api/v1/bus/realtime?route=1');
      t.match(filtered, { status: 404, body: { code: 'not_found', errors: [{ parameter: 'route' }] } });
      t.equal((await get('/api/v1/bus/5/realtime')).status, 200, "an id one schedule has: that agency's");

      // the same captured trains, once per copy of Caltrain
      const railA = await ok('/api/v1/rail/realtime?limit=1000');
      const trains = (p: string) => railA.vehicles.filter((v: Json) => v.source === `${p}-vp`);
      t.equal(trains('ct-a').length, 14, 'every captured train of ct-a');
      t.equal(trains('ct-b').length, 14);
      t.ok(trains('ct-a').every((v: Json) => v.vehicle_id.startsWith('ct-a:') && v.trip_id.startsWith('ct-a:')));
      t.ok(trains('ct-b').every((v: Json) => v.route_id.startsWith('ct-b:')));
    });

    let caltrainLine = '';
    t.test('arrivals: rail lines and stations apart', async (t) => {
      for (const prefix of ['hart', 'psta']) {
        const body = await ok(`/api/v1/rail/realtime?line=${prefix}:L`);
        t.same(
          body.data.map((a: Json) => [a.line, a.trip_id, a.station_id, a.station_name?.split(' ')[0]]),
          [
            [`${prefix}:L`, `${prefix}:L-1`, `${prefix}:S1`, prefix.toUpperCase()],
            [`${prefix}:L`, `${prefix}:L-1`, `${prefix}:S2`, prefix.toUpperCase()],
          ],
        );
        t.same(
          body.vehicles.map((v: Json) => v.vehicle_id),
          [`${prefix}:train-1`],
        );
        const atStation = await ok(`/api/v1/rail/realtime?station=${prefix}:S2`);
        t.same(
          atStation.data.map((a: Json) => a.source),
          [`${prefix === 'hart' ? HART.name : PSTA.name}-tu`],
        );
      }
      t.equal((await get('/api/v1/rail/realtime?station=S1')).status, 404, 'a shared stop given bare');
      const all = await ok('/api/v1/rail/realtime?limit=1000');
      const of = (p: string) => all.data.filter((a: Json) => a.source === `${p}-tu`);
      t.ok(of('ct-a').length > 0);
      t.equal(of('ct-a').length, of('ct-b').length, 'the capture once per copy');
      t.ok(of('ct-a').every((a: Json) => a.line.startsWith('ct-a:') && a.stop_id.startsWith('ct-a:')));
      caltrainLine = of('ct-a')[0].line.slice('ct-a:'.length);
      const oneLine = await ok(`/api/v1/rail/realtime?line=ct-b:${caltrainLine}&limit=1000`);
      t.ok(oneLine.data.length > 0 && oneLine.data.every((a: Json) => a.source === 'ct-b-tu'));
    });

    t.test('alerts: informed entities as served, filters apart', async (t) => {
      for (const [a, prefix] of [
        [HART, 'hart'],
        [PSTA, 'psta'],
      ] as const) {
        const body = await ok(`/api/v1/alerts?route=${prefix}:1`);
        t.same(
          body.data.map((x: Json) => [x.source, x.routes, x.stations, x.header.en]),
          [[`${a.name}-alerts`, [`${prefix}:1`], [`${prefix}:S1`], `${a.agency} detour`]],
        );
        t.same((await ok(`/api/v1/bus/alerts?route=${prefix}:1`)).data, body.data);
        t.same((await ok(`/api/v1/alerts?station=${prefix}:S1`)).data, body.data);
      }
      t.equal((await get('/api/v1/bus/alerts?route=1')).status, 404);
    });

    t.test('reliability: each agency counts its own trips', async (t) => {
      const today = wallClock(new Date(), TZ).date;
      for (const [a, prefix] of [
        [HART, 'hart'],
        [PSTA, 'psta'],
      ] as const) {
        const body = await ok(`/api/v1/bus/${prefix}:1/reliability?from=${today}&to=${today}`);
        t.equal(body.meta.route_id, `${prefix}:1`);
        t.match(body.data, [
          { id: `${prefix}:1:${today}`, route_id: `${prefix}:1`, scheduled: a.trips, delivered: a.seen },
        ]);
      }
      t.equal((await get(`/api/v1/bus/1/reliability?from=${today}&to=${today}`)).status, 404);
      // the operator's table names routes as the API does, each agency's apart
      const cli = async (...args: string[]) => {
        const r = await op('reliability', [
          ...args,
          '--group',
          'period',
          '--from',
          today,
          '--to',
          today,
          '--json',
          '--config',
          configPath,
        ]);
        t.equal(r.code, 0, r.err);
        return JSON.parse(r.out) as Json;
      };
      const table = await cli('--mode', 'bus');
      const figures = new Map(table.rows.map((r: Json) => [r.route_id, [r.scheduled, r.delivered]]));
      t.same(figures.get('hart:1'), [HART.trips, HART.seen]);
      t.same(figures.get('psta:1'), [PSTA.trips, PSTA.seen]);
      t.ok(figures.has('5') && figures.has('7') && !figures.has('1'), [...figures.keys()].join(' '));
      t.match((await cli('--route', 'psta:1')).rows, [{ route_id: 'psta:1', scheduled: PSTA.trips }]);
      // the captured day, once per copy: the same figures, not their sum
      const day = '2023-11-07';
      const [ra, rb] = (await Promise.all(
        ['ct-a', 'ct-b'].map((p) => ok(`/api/v1/rail/${p}:${caltrainLine}/reliability?from=${day}&to=${day}`)),
      )) as [Json, Json];
      const counts = (r: Json) => r.data.map((x: Json) => [x.period, x.scheduled, x.delivered, x.unobserved]);
      t.same(counts(ra), counts(rb));
      t.ok(ra.data[0].scheduled > 0 && ra.data[0].delivered > 0, JSON.stringify(counts(ra)));
      t.ok(ra.data[0].delivered <= ra.data[0].scheduled, 'no trip counted twice');
      t.equal(ra.data[0].route_id, `ct-a:${caltrainLine}`);
      const perf = await ok(`/api/v1/rail/ct-b:${caltrainLine}/performance?from=${day}&to=${day}`);
      t.equal(perf.meta.route_id, `ct-b:${caltrainLine}`);
    });

    t.test('the event stream and its filters use the served ids', async (t) => {
      t.equal(
        (
          await fetch(`${service.url}/api/v1/events/stream?route=1`, {
            headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream' },
          })
        ).status,
        404,
        'a shared id given bare',
      );
      const stream = await openSse(`${service.url}/api/v1/events/stream?route=hart:1&types=vehicle.position`, {
        authorization: `Bearer ${key}`,
      });
      t.teardown(() => stream.close());
      t.equal(stream.status, 200);
      // both agencies' buses move; only HART's reaches this stream
      for (const a of [PSTA, HART]) writeFeeds(dir, a, 28.1);
      await stream.waitFor((events) => events.some((e) => e.event === 'vehicle.position'), 20_000);
      const moved = stream.events.filter((e) => e.event === 'vehicle.position').map((e) => JSON.parse(e.data) as Json);
      t.ok(moved.length > 0);
      for (const e of moved) {
        t.same(e.routes, ['hart:1']);
        t.match(e.data, { source: 'hart-vp', vehicle_id: 'hart:bus-1', route_id: 'hart:1', trip_id: 'hart:1-1' });
      }
    });
  },
);
