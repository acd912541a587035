// In-memory stand-ins for the store's ports and small builders, shared by the pipeline's tests
// and bench. Nothing here is used by the running service.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseConfig, type Config } from '../../core/config.ts';
import { nyctStaticKey, nyctStaticTrip } from '../../core/nyct-trip-id.ts';
import type {
  HistoryBatch,
  HistoryWriter,
  ScheduleIndex,
  ScheduledRoute,
  ScheduledStop,
  ScheduledStopTime,
  ScheduledTrip,
  SnapshotKey,
  TripSpan,
} from '../../core/ports.ts';
import { modeForRouteType } from '../../core/route-type.ts';
import { MODES } from '../../core/types.ts';
import { feedMessageCodec } from '../../pipeline/decode.ts';

export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export { FIXTURES_REAL, hasRealFixtures } from './fixtures-real.ts';

export interface FakeScheduleInput {
  timezone?: string;
  routes?: { route_id: string; route_type: number }[];
  stops?: { stop_id: string; parent?: string; lat?: number; lon?: number }[];
  trips?: { trip_id: string; route_id: string; service_id?: string; direction_id?: number; mta_trip_id?: string }[];
  /** trip_id → [stop_id, arrival "HH:MM:SS", departure?][] with sequences 1, 2, 3… */
  stopTimes?: Record<string, [string, string, string?][]>;
  /** service_id → service dates 'YYYY-MM-DD' it runs on (absent: runs every day) */
  services?: Record<string, string[]>;
}

const seconds = (hms: string): number => {
  const [h, m, s] = hms.split(':').map(Number) as [number, number, number];
  return h * 3600 + m * 60 + s;
};

export function fakeSchedule(input: FakeScheduleInput): ScheduleIndex {
  const routes = new Map<string, ScheduledRoute>(
    (input.routes ?? []).map((r) => [
      r.route_id,
      {
        schedule_id: 'fake',
        route_id: r.route_id,
        route_type: r.route_type,
        mode: modeForRouteType(r.route_type),
        short_name: null,
        long_name: null,
        color: null,
      },
    ]),
  );
  const stops = new Map<string, ScheduledStop>(
    (input.stops ?? []).map((s) => [
      s.stop_id,
      {
        stop_id: s.stop_id,
        name: null,
        lat: s.lat ?? null,
        lon: s.lon ?? null,
        station_id: s.parent ?? s.stop_id,
      },
    ]),
  );
  const trips = new Map<string, ScheduledTrip>(
    (input.trips ?? []).map((t) => [
      t.trip_id,
      {
        schedule_id: 'fake',
        trip_id: t.trip_id,
        route_id: t.route_id,
        service_id: t.service_id ?? 'daily',
        direction_id: t.direction_id ?? null,
        headsign: null,
      },
    ]),
  );
  const stopTimes = new Map<string, ScheduledStopTime[]>(
    Object.entries(input.stopTimes ?? {}).map(([trip, list]) => [
      trip,
      list.map(([stop, arr, dep], i) => ({
        stop_sequence: i + 1,
        stop_id: stop,
        arrival_s: seconds(arr),
        departure_s: seconds(dep ?? arr),
      })),
    ]),
  );
  const span = (id: string): TripSpan | undefined => {
    const list = stopTimes.get(id);
    if (!list?.length) return undefined;
    return { start_s: list[0]!.departure_s!, end_s: list[list.length - 1]!.arrival_s! };
  };
  const mta = new Map((input.trips ?? []).map((t) => [t.trip_id, t.mta_trip_id ?? null]));
  // scans instead of the store's indexes: the fakes hold a handful of trips
  return {
    timezone: input.timezone ?? 'UTC',
    trip: (id) => trips.get(id),
    route: (id) => routes.get(id),
    stop: (id) => stops.get(id),
    stationModes: (station) =>
      MODES.filter((m) =>
        [...stopTimes].some(([trip, list]) => {
          const route = routes.get(trips.get(trip)?.route_id ?? '');
          return route?.mode === m && list.some((st) => (stops.get(st.stop_id)?.station_id ?? st.stop_id) === station);
        }),
      ),
    stopTimes: (id) => stopTimes.get(id) ?? [],
    runsOn: (service, date) => input.services?.[service]?.includes(date) ?? true,
    routes: () => [...routes.values()],
    tripsOfRoute: (route) => [...trips.values()].filter((t) => t.route_id === route),
    tripSpan: span,
    tripsStartingAt: (route, direction, startS) =>
      [...trips.values()].filter(
        (t) =>
          t.route_id === route &&
          (direction === null || t.direction_id === direction) &&
          span(t.trip_id)?.start_s === startS,
      ),
    nyctTrips: (key) =>
      [...trips.values()].flatMap((trip) => {
        const at = nyctStaticKey(
          trip.trip_id,
          mta.get(trip.trip_id) ?? null,
          trip.route_id,
          span(trip.trip_id)?.start_s ?? null,
        );
        return at?.key === key ? [{ trip, path: at.path }] : [];
      }),
    nyctRouteTrips: (route, direction) =>
      [...trips.values()]
        .flatMap((trip) => {
          const start = span(trip.trip_id)?.start_s;
          if (start === undefined) return [];
          const at = nyctStaticTrip(trip.trip_id, mta.get(trip.trip_id) ?? null, trip.route_id, start);
          return at?.route === route && at.direction === direction ? [{ trip, path: at.path, start_s: start }] : [];
        })
        .sort((a, b) => a.start_s - b.start_s),
  };
}

/** Records every batch; `failNext` makes the next write reject, as a full disk would. */
export class MemoryHistory implements HistoryWriter {
  readonly batches: HistoryBatch[] = [];
  /** `feed_id hash` of every snapshot recorded */
  readonly snapshots = new Set<string>();
  failNext = 0;

  async hasSnapshot(key: SnapshotKey): Promise<boolean> {
    return this.snapshots.has(`${key.feed_id} ${key.body_sha256}`);
  }

  async write(batch: HistoryBatch): Promise<number> {
    if (this.failNext > 0) {
      this.failNext--;
      throw new Error('disk full');
    }
    this.batches.push(batch);
    if (batch.snapshot) this.snapshots.add(`${batch.snapshot.feed_id} ${batch.snapshot.body_sha256}`);
    return (
      batch.vehicles.length +
      batch.arrivals.length +
      batch.trips.length +
      batch.alertVersions.length +
      batch.polls.length
    );
  }

  get polls() {
    return this.batches.flatMap((b) => b.polls);
  }
}

export function testConfig(raw: Record<string, unknown> = {}): Readonly<Config> {
  return parseConfig(raw);
}

/** Encodes a FeedMessage given as a plain object with the proto's snake_case field names. */
export function encodeFeed(message: Record<string, unknown>): Uint8Array {
  const codec = feedMessageCodec();
  return codec.encode(codec.fromObject(message)).finish();
}

export const header = (timestampS: number): Record<string, unknown> => ({
  gtfs_realtime_version: '2.0',
  incrementality: 0,
  timestamp: timestampS,
});
