// A service day as it really ran, made up over a real static schedule: each scheduled trip gets
// true arrival and departure times (a delay that drifts, dwells of 30–75 s, never less than 30 s
// between stops, so a 30 s poll always sees a train stopped and moving), and the day is written as
// the GTFS-Realtime snapshots two feeds would have served: vehicle positions (where each train is
// at each poll) and trip updates (the stops not yet left, predicted with the delay at the last
// stop left). Some trips misbehave as real feeds do; the test knows which and how.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { serviceDayOriginMs } from '../../core/dates.ts';
import type { ScheduledTrip, ScheduleIndex } from '../../core/ports.ts';
import { listFiles, scanSnapshots } from '../../pipeline/replay.ts';
import { Db } from '../../store/db.ts';
import { importGtfs } from '../../store/gtfs-import.ts';
import { loadScheduleIndex } from '../../store/schedule-index.ts';
import { FIXTURES_REAL } from './fixtures-real.ts';
import { encodeFeed, header } from './pipeline-fakes.ts';

export interface TrueStop {
  stop_id: string;
  stop_sequence: number;
  scheduled_ms: number;
  arrival_ms: number;
  departure_ms: number;
}

export interface TrueTrip {
  trip: ScheduledTrip;
  stops: TrueStop[];
}

/** How a trip misbehaves in the feeds. */
export interface Quirks {
  /** a vehicle report puts it back at this stop index once, one poll after it left it */
  backwards_at?: number;
  /** a second vehicle reports this trip for a few polls */
  ghost_vehicle?: boolean;
  /** both feeds stop reporting it once it left this stop index */
  vanishes_after?: number;
  /** the trip updates say CANCELED all along; no vehicle runs it */
  canceled?: boolean;
  /** this stop index is SKIPPED: the train runs through without stopping */
  skipped_at?: number;
  /** no vehicle positions: only the trip updates follow it */
  no_vehicle?: boolean;
  /** (with no_vehicle) the last update listing this stop index predicts it before the stop before it was left */
  backwards_prediction_at?: number;
}

/** Deterministic pseudo-random numbers (a linear congruential generator), so the day is the same every run. */
export function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1_664_525) + 1_013_904_223) >>> 0;
    return s / 2 ** 32;
  };
}

/** True times for every trip of `trips` on `day`. */
export function trueDay(
  schedule: ScheduleIndex,
  trips: readonly ScheduledTrip[],
  day: string,
  seed = 7,
  /** every true time on a multiple of this (ms since 1970): polls on the same grid see each the moment it happens */
  gridMs?: number,
): TrueTrip[] {
  const rand = random(seed);
  const onGrid = (ms: number): number => (gridMs ? Math.ceil(ms / gridMs) * gridMs : ms);
  const between = (lo: number, hi: number): number => Math.round(lo + (hi - lo) * rand());
  const origin = serviceDayOriginMs(day, schedule.timezone);
  return trips.map((trip) => {
    const stopTimes = schedule.stopTimes(trip.trip_id);
    let delay = between(0, 240);
    let lastDeparture = Number.NEGATIVE_INFINITY;
    const stops = stopTimes.map((st, i): TrueStop => {
      const scheduled = origin + (st.arrival_s ?? st.departure_s!) * 1000;
      if (i > 0) delay = Math.max(-60, delay + between(-20, 40));
      const arrival = onGrid(
        i === 0 ? scheduled + delay * 1000 - 300_000 : Math.max(scheduled + delay * 1000, lastDeparture + 30_000),
      );
      const departure = onGrid(i === 0 ? scheduled + delay * 1000 : arrival + between(30, 75) * 1000);
      lastDeparture = departure;
      return {
        stop_id: st.stop_id,
        stop_sequence: st.stop_sequence,
        scheduled_ms: scheduled,
        arrival_ms: arrival,
        departure_ms: departure,
      };
    });
    return { trip, stops };
  });
}

const STATUS = { INCOMING_AT: 0, STOPPED_AT: 1, IN_TRANSIT_TO: 2 } as const;

/** Where a train is at `ms`: stopped at a stop, or on its way to one; null before it appears or after it ends. */
function whereAt(stops: readonly TrueStop[], ms: number, skipped?: number): { i: number; stopped: boolean } | null {
  if (ms < stops[0]!.arrival_ms || ms > stops.at(-1)!.arrival_ms + 60_000) return null;
  for (let i = 0; i < stops.length; i++) {
    const s = stops[i]!;
    if (ms < s.arrival_ms) return { i, stopped: false };
    // a skipped stop is run through: the train is never seen stopped there
    if (ms < s.departure_ms && i !== skipped) return { i, stopped: true };
    if (ms < s.departure_ms) return { i: i + 1, stopped: false };
  }
  return { i: stops.length - 1, stopped: true };
}

export interface WrittenDay {
  vp_dir: string;
  tu_dir: string;
  polls: number;
}

/**
 * Writes the day's snapshots, one file per poll and feed: vehicle positions every `interval_s`
 * from `from_ms` to `to_ms`, trip updates on the same clock half an interval later.
 */
export function writeDay(
  dir: string,
  schedule: ScheduleIndex,
  day: string,
  trips: readonly TrueTrip[],
  quirks: ReadonlyMap<string, Quirks>,
  window: { from_ms: number; to_ms: number; interval_s: number },
): WrittenDay {
  const vpDir = join(dir, 'vp');
  const tuDir = join(dir, 'tu');
  mkdirSync(vpDir, { recursive: true });
  mkdirSync(tuDir, { recursive: true });
  const startDate = day.replaceAll('-', '');
  const step = window.interval_s * 1000;
  let polls = 0;
  for (let ms = window.from_ms; ms <= window.to_ms; ms += step) {
    polls++;
    const vehicles: Record<string, unknown>[] = [];
    const updates: Record<string, unknown>[] = [];
    for (const { trip, stops } of trips) {
      const q = quirks.get(trip.trip_id) ?? {};
      const descriptor = { trip_id: trip.trip_id, start_date: startDate };
      // vehicle positions
      const where = q.canceled || q.no_vehicle ? null : whereAt(stops, ms, q.skipped_at);
      const gone = q.vanishes_after !== undefined && ms >= stops[q.vanishes_after]!.departure_ms;
      if (where && !gone) {
        let { i, stopped } = where;
        const back = q.backwards_at;
        if (back !== undefined && ms >= stops[back]!.departure_ms + step && ms < stops[back]!.departure_ms + 2 * step) {
          i = back;
          stopped = true;
        }
        const stop = schedule.stop(stops[i]!.stop_id);
        vehicles.push({
          id: `v-${trip.trip_id}`,
          vehicle: {
            trip: descriptor,
            vehicle: { id: `car-${trip.trip_id}` },
            position: { latitude: stop?.lat ?? 37.5, longitude: stop?.lon ?? -122.3 },
            current_stop_sequence: stops[i]!.stop_sequence,
            stop_id: stops[i]!.stop_id,
            current_status: stopped ? STATUS.STOPPED_AT : STATUS.IN_TRANSIT_TO,
            timestamp: Math.floor(ms / 1000),
          },
        });
        if (q.ghost_vehicle && i >= 2 && i < 5) {
          vehicles.push({
            id: `ghost-${trip.trip_id}`,
            vehicle: {
              trip: descriptor,
              vehicle: { id: `ghost-${trip.trip_id}` },
              position: { latitude: 37.5, longitude: -122.3 },
              current_stop_sequence: stops.at(-1)!.stop_sequence,
              stop_id: stops.at(-1)!.stop_id,
              current_status: STATUS.STOPPED_AT,
              timestamp: Math.floor(ms / 1000),
            },
          });
        }
      }
      // trip updates: from 30 min before it leaves until it reaches its last stop
      const tuMs = ms + step / 2;
      if (tuMs < stops[0]!.departure_ms - 1_800_000 || tuMs >= stops.at(-1)!.arrival_ms) continue;
      if (q.vanishes_after !== undefined && tuMs >= stops[q.vanishes_after]!.departure_ms) continue;
      if (q.canceled) {
        updates.push({ id: `tu-${trip.trip_id}`, trip_update: { trip: { ...descriptor, schedule_relationship: 3 } } });
        continue;
      }
      let left = -1;
      while (left + 1 < stops.length && stops[left + 1]!.departure_ms <= tuMs) left++;
      const delayMs =
        left < 0
          ? stops[0]!.departure_ms - stops[0]!.scheduled_ms
          : stops[left]!.departure_ms - stops[left]!.scheduled_ms;
      const stopTimeUpdates = stops.slice(left + 1).map((s, k) => {
        const i = left + 1 + k;
        if (i === q.skipped_at) return { stop_sequence: s.stop_sequence, stop_id: s.stop_id, schedule_relationship: 1 };
        let predicted = s.scheduled_ms + delayMs;
        // its last update before the stop is left puts it ten minutes before the stop before it
        const lastListing = i === left + 1 && tuMs + step >= s.departure_ms;
        if (i === q.backwards_prediction_at && lastListing && left >= 0)
          predicted = stops[left]!.scheduled_ms - 600_000;
        const time = Math.floor(predicted / 1000);
        return { stop_sequence: s.stop_sequence, stop_id: s.stop_id, arrival: { time }, departure: { time } };
      });
      updates.push({
        id: `tu-${trip.trip_id}`,
        trip_update: { trip: descriptor, stop_time_update: stopTimeUpdates, timestamp: Math.floor(tuMs / 1000) },
      });
    }
    const name = `${String(polls).padStart(5, '0')}.pb`;
    writeFileSync(join(vpDir, name), encodeFeed({ header: header(Math.floor(ms / 1000)), entity: vehicles }));
    writeFileSync(
      join(tuDir, name),
      encodeFeed({ header: header(Math.floor((ms + step / 2) / 1000)), entity: updates }),
    );
  }
  return { vp_dir: vpDir, tu_dir: tuDir, polls };
}

/** A weekday of Caltrain's captured schedule (ct.zip): 104 trips. */
export const CALTRAIN_DAY = '2023-11-07';

/** The schedule, the day's true times and the trips that misbehave, written as two feeds' snapshots. */
export interface DayOptions {
  /** the trips that misbehave (default true) */
  quirks?: boolean;
  /** true times and polls on a 30 s grid: each stop event lands exactly on the truth */
  aligned?: boolean;
}

export async function caltrainDay(
  dir: string,
  window?: (truth: TrueTrip[]) => { from_ms: number; to_ms: number },
  options: DayOptions = {},
) {
  const db = await Db.open(':memory:');
  await importGtfs(db, 'ct', join(FIXTURES_REAL, 'caltrain', 'ct.zip'));
  const schedule = await loadScheduleIndex(db, 'ct');
  await db.close();
  const running = schedule
    .trips()
    .filter((trip) => schedule.runsOn(trip.service_id, CALTRAIN_DAY) && schedule.stopTimes(trip.trip_id).length >= 8)
    .sort((a, b) => schedule.tripSpan(a.trip_id)!.start_s - schedule.tripSpan(b.trip_id)!.start_s);
  const grid = options.aligned ? 30_000 : undefined;
  const truth = trueDay(schedule, running, CALTRAIN_DAY, 7, grid);
  const id = (k: number) => running[k]!.trip_id;
  const quirks = new Map<string, Quirks>(
    options.quirks === false
      ? []
      : [
          [id(5), { backwards_at: 3 }],
          [id(10), { ghost_vehicle: true }],
          [id(15), { vanishes_after: 4 }],
          [id(20), { canceled: true }],
          [id(25), { skipped_at: 3 }],
          [id(30), { no_vehicle: true, backwards_prediction_at: 4 }],
        ],
  );
  const floor = (ms: number): number => (grid ? Math.floor(ms / grid) * grid : ms);
  const span = window?.(truth) ?? {
    from_ms: floor(Math.min(...truth.map((x) => x.stops[0]!.departure_ms)) - 31 * 60_000),
    to_ms: Math.max(...truth.map((x) => x.stops.at(-1)!.arrival_ms)) + 20 * 60_000,
  };
  const day = writeDay(dir, schedule, CALTRAIN_DAY, truth, quirks, { ...span, interval_s: 30 });
  const archives = () => [
    { feed_id: 'ct-vp', scan: scanSnapshots(listFiles([day.vp_dir])) },
    { feed_id: 'ct-tu', scan: scanSnapshots(listFiles([day.tu_dir])) },
  ];
  return { schedule, running, truth, id, quirks, span, day, archives };
}

export const feedConfig = (dir: string, id: string) => ({
  id,
  kind: 'gtfs-rt',
  url: pathToFileURL(join(dir, `${id}.pb`)).href,
  schedule_id: 'ct',
  allow_old_snapshots: true,
});
