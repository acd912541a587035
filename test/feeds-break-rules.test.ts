// Feeds that break the rules, through the real service (`serve` as composed by app/serve.ts: the
// pipeline polling file:// feeds, DuckDB on a file, uWS on a loopback port):
// - an NYCT-style subway feed whose VehiclePositions carry a stop and a trip but no lat/lon, and
//   whose TripUpdates carry one trip id twice for two trains: the trains show on rail realtime,
//   placed at their stop, and both instances keep their arrivals;
// - MBTA's captured VehiclePositions (48 vehicles, no static schedule for them) configured with
//   feeds[].mode `bus`: they show on the bus realtime endpoint.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import t from 'tap';
import { until } from './support/wait.ts';
import { startService, type Service } from '../app/serve.ts';
import { parseConfig } from '../core/config.ts';
import { localDate } from '../core/dates.ts';
import { createKey } from '../accounts/keys.ts';
import { encodeFeed, FIXTURES_REAL, hasRealFixtures, header } from './support/pipeline-fakes.ts';
import { bearer } from './support/harness.ts';
import { silentLogger } from './support/logs.ts';

const ZONE = 'America/New_York';
const STOPS: [id: string, lat: number, lon: number][] = [
  ['A02S', 40.868072, -73.919899],
  ['A03S', 40.865491, -73.927271],
  ['A05S', 40.859022, -73.93418],
  ['A06S', 40.851695, -73.937969],
  ['A07S', 40.847391, -73.939704],
];

/** A one-line subway schedule running every day, and the feed body of a moment of its service. */
function writeSubway(dir: string, nowS: number): { gtfs: string; feed: string } {
  const gtfs = join(dir, 'subway-gtfs');
  mkdirSync(gtfs, { recursive: true });
  const files: Record<string, string> = {
    'agency.txt':
      `agency_id,agency_name,agency_url,agency_timezone\nMTA,MTA New York City ` +
      `Transit,https://new.mta.info,${ZONE}\n`,
    'routes.txt': 'route_id,agency_id,route_short_name,route_long_name,route_type\nA,MTA,A,8 Avenue Express,1\n',
    'stops.txt': `stop_id,stop_name,stop_lat,stop_lon\n${STOPS.map(
      ([id, lat, lon]) => `${id},${id} ` + `station,${lat},${lon}`,
    ).join('\n')}\n`,
    'calendar.txt':
      'service_id,monday,tuesday,wednesday,thursday,friday,saturday,sunday,start_date,end_date\nALL,1,1,1,1,1,1,1,' +
      '20200101,20991231\n',
    'trips.txt': 'route_id,service_id,trip_id,direction_id\nA,ALL,A-S-1,1\nA,ALL,A-S-2,1\n',
    'stop_times.txt': `trip_id,arrival_time,departure_time,stop_id,stop_sequence\n${['A-S-1', 'A-S-2']
      .flatMap((trip, k) =>
        STOPS.map(
          ([stop], i) =>
            `${trip},${10 + k}:${String(i * 3).padStart(2, '0')}:00,${10 + k}:${String(i * 3).padStart(2, '0')}` +
            `:00,${stop},${i + 1}`,
        ),
      )
      .join('\n')}\n`,
  };
  for (const [name, body] of Object.entries(files)) writeFileSync(join(gtfs, name), body);

  const startDate = localDate(nowS * 1000, ZONE).replaceAll('-', '');
  const trip = (tripId: string) => ({ trip_id: tripId, start_date: startDate, route_id: 'A' });
  const at = (stop_id: string, inS: number) => ({ stop_id, arrival: { time: nowS + inS } });
  const body = encodeFeed({
    header: header(nowS),
    entity: [
      // no coordinates: a stop_id and a status, as NYCT sends
      { id: 'v1', vehicle: { trip: trip('A-S-1'), stop_id: 'A03S', current_status: 1, timestamp: nowS - 5 } },
      // only the stop sequence: the trip's third stop
      { id: 'v2', vehicle: { trip: trip('A-S-2'), current_stop_sequence: 3, current_status: 2, timestamp: nowS - 5 } },
      // nothing that places it: still rejected (no_position)
      { id: 'v3', vehicle: { trip: trip('A-S-2'), timestamp: nowS - 5 } },
      // one trip id, two trains (different stops); then the first train's report again
      { id: 't1', trip_update: { trip: trip('A-S-1'), stop_time_update: [at('A05S', 60), at('A07S', 300)] } },
      { id: 't2', trip_update: { trip: trip('A-S-1'), stop_time_update: [at('A03S', 30), at('A06S', 200)] } },
      { id: 't3', trip_update: { trip: trip('A-S-1'), stop_time_update: [at('A05S', 60), at('A07S', 300)] } },
    ],
  });
  const feed = join(dir, 'nyct-ace.pb');
  writeFileSync(feed, body);
  return { gtfs, feed };
}

interface Vehicle {
  vehicle_id: string;
  route_id: string | null;
  trip_id: string | null;
  lat: number;
  lon: number;
  position_source: string;
  stop_id: string | null;
  source: string;
}
interface RailBody {
  data: { trip_id: string; trip_instance: string | null; stop_id: string; id: string }[];
  vehicles: Vehicle[];
  summaries: { trains: { trip_id: string; trip_instance: string | null }[] };
}
interface BusBody {
  data: Vehicle[];
  meta: { next_cursor: string | null };
  summaries: { routes: { route_id: string | null; vehicles: number }[] };
}

t.test(
  'coordinate-less trains on rail realtime, trip instances kept, a schedule-less feed under its configured mode',
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'feeds-break-rules-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const nowS = Math.floor(Date.now() / 1000);
    const subway = writeSubway(dir, nowS);
    const mbta = join(FIXTURES_REAL, 'mbta', 'vehiclepositions.pb');
    const withMbta = hasRealFixtures();
    if (!withMbta) t.comment(`${FIXTURES_REAL} is absent: the MBTA part is skipped`);
    const config = parseConfig({
      host: '127.0.0.1',
      port: 0,
      db_path: join(dir, 'transit.duckdb'),
      schedules: [{ id: 'subway', source: subway.gtfs }],
      feeds: [
        {
          id: 'nyct-ace',
          kind: 'gtfs-rt',
          url: pathToFileURL(subway.feed).href,
          schedule_id: 'subway',
          interval_s: 3600,
        },
        ...(withMbta
          ? [{ id: 'mbta-vp', kind: 'gtfs-rt', url: pathToFileURL(mbta).href, mode: 'bus', interval_s: 3600 }]
          : []),
      ],
      // MBTA's capture is from 2017
      freshness: { max_age_days: 36_500 },
      exports: { enabled: false, dir: join(dir, 'exports') },
      snapshot: { enabled: false, path: join(dir, 'snapshot.duckdb') },
    });
    const service: Service = await startService(config, { log: silentLogger });
    t.teardown(() => service.close());
    const { key } = await createKey(service.runtime.db, { plan: 'max', name: null });
    const get = async <T>(path: string): Promise<T> => {
      const res = await fetch(`${service.url}${path}`, { headers: bearer(key) });
      if (res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`);
      return (await res.json()) as T;
    };

    const rail = await until(
      'the subway feed polled',
      async () => {
        const body = await get<RailBody>('/api/v1/rail/realtime?line=A&limit=100');
        return body.vehicles.length > 0 && body;
      },
      60_000,
    );
    t.same(
      rail.vehicles.map((v) => [v.vehicle_id, v.trip_id, v.stop_id, v.position_source]).sort(),
      [
        ['v1', 'A-S-1', 'A03S', 'stop'],
        ['v2', 'A-S-2', 'A05S', 'stop'],
      ],
      'both placed trains, the third rejected',
    );
    const v1 = rail.vehicles.find((v) => v.vehicle_id === 'v1')!;
    t.same([v1.lat, v1.lon], [40.865491, -73.927271], "at the schedule's coordinates of its stop");
    const v2 = rail.vehicles.find((v) => v.vehicle_id === 'v2')!;
    t.same([v2.lat, v2.lon], [40.859022, -73.93418], "the trip's stop at current_stop_sequence 3");

    const instances = new Map<string | null, string[]>();
    for (const a of rail.data) instances.set(a.trip_instance, [...(instances.get(a.trip_instance) ?? []), a.stop_id]);
    t.same([...instances.keys()].sort(), ['to:A06S', 'to:A07S'], 'trip A-S-1 twice: two instances, by terminal stop');
    t.same(instances.get('to:A07S'), ['A05S', 'A06S', 'A07S'], 'the first train (A06S by propagation)');
    t.same(
      instances.get('to:A06S'),
      ['A03S', 'A05S', 'A06S', 'A07S'],
      'the second train (A05S and A07S by propagation)',
    );
    t.equal(new Set(rail.data.map((a) => a.id)).size, rail.data.length, 'arrival ids stay unique');
    t.same(
      rail.summaries.trains.map((tr) => tr.trip_instance).sort(),
      ['to:A06S', 'to:A07S'],
      'two trains in the summary',
    );

    const db = service.runtime.db;
    const [polled] = await db.all<{ rejected_by_reason: { reason: string; count: number }[] }>(
      `SELECT rejected_by_reason FROM feed_polls WHERE feed_id = 'nyct-ace' AND status = 'ok'`,
    );
    t.same(
      polled!.rejected_by_reason,
      [
        { reason: 'duplicate_trip', count: 1 },
        { reason: 'no_position', count: 1 },
      ],
      'the repeated report and the unplaceable train are counted',
    );
    t.same(
      await db.all(
        `SELECT vehicle_id, position_source, mode FROM vehicle_positions WHERE feed_id = 'nyct-ace' ` +
          `ORDER BY vehicle_id`,
      ),
      [
        { vehicle_id: 'v1', position_source: 'stop', mode: 'rail' },
        { vehicle_id: 'v2', position_source: 'stop', mode: 'rail' },
      ],
    );
    t.same(
      await db.all(
        `SELECT trip_instance, count(*)::INTEGER AS n FROM arrivals WHERE feed_id = 'nyct-ace' GROUP BY ` +
          `ALL ORDER BY ALL`,
      ),
      [
        { trip_instance: 'to:A06S', n: 4 },
        { trip_instance: 'to:A07S', n: 3 },
      ],
      'history keeps both trains',
    );

    if (withMbta) {
      const bus = await until(
        'the MBTA feed polled',
        async () => {
          const body = await get<BusBody>('/api/v1/bus/realtime?limit=100');
          return body.data.length > 0 && body;
        },
        60_000,
      );
      t.equal(bus.data.length, 48, "MBTA's 48 vehicles under bus");
      t.equal(bus.meta.next_cursor, null);
      t.ok(bus.data.every((v) => v.source === 'mbta-vp' && v.position_source === 'gps'));
      t.equal(
        bus.summaries.routes.reduce((n, r) => n + r.vehicles, 0),
        48,
      );
      const route = bus.data.find((v) => v.route_id !== null)!.route_id!;
      const one = await get<BusBody>(`/api/v1/bus/${encodeURIComponent(route)}/realtime?limit=100`);
      t.ok(
        one.data.length > 0 && one.data.every((v) => v.route_id === route),
        `route ${route} is known from the live feed`,
      );
      t.same(
        await db.all(
          `SELECT mode, count(*)::INTEGER AS n FROM vehicle_positions WHERE feed_id = 'mbta-vp' GROUP BY ALL`,
        ),
        [{ mode: 'bus', n: 48 }],
        'stored with mode bus, no longer NULL',
      );
    }
  },
);
