// The generated network and feeds bench/ingest.ts polls (shared with its phase profile).
import { encodeFeed, fakeSchedule, header } from '../test/support/pipeline-fakes.ts';

export const VEHICLES = Number(process.env.VEHICLES ?? 5_000);
export const TRIPS = Number(process.env.TRIPS ?? 1_500);
export const STOPS = Number(process.env.STOPS ?? 25);
export const NOW_S = Math.floor(Date.UTC(2024, 4, 2, 16) / 1000);
const SERVICE_DATE = '20240502';
const hhmmss = (s: number) =>
  [Math.floor(s / 3600), Math.floor(s / 60) % 60, s % 60].map((n) => String(n).padStart(2, '0')).join(':');

// ---- generated network: routes, trips with STOPS stops each ----
export const schedule = fakeSchedule({
  timezone: 'America/New_York',
  routes: Array.from({ length: 120 }, (_, r) => ({ route_id: `r${r}`, route_type: r < 10 ? 1 : 3 })),
  stops: Array.from({ length: 2_000 }, (_, s) => ({ stop_id: `s${s}`, parent: s % 2 ? `st${s >> 1}` : undefined })),
  trips: Array.from({ length: Math.max(TRIPS, VEHICLES) }, (_, i) => ({ trip_id: `t${i}`, route_id: `r${i % 120}` })),
  stopTimes: Object.fromEntries(
    Array.from({ length: TRIPS }, (_, i) => [
      `t${i}`,
      Array.from(
        { length: STOPS },
        (_, k) => [`s${(i * 7 + k) % 2_000}`, hhmmss(11 * 3600 + (i % 240) * 60 + k * 120)] as [string, string],
      ),
    ]),
  ),
});

/**
 * The share of vehicles with a new report in a poll 10 s after the one before, as real feeds have
 * it: a vehicle whose report is younger than the poll interval reported since the last poll. In
 * the real captures (../shared/fixtures-real) 34 of 76 vehicles are under 10 s old at their
 * snapshot's header: MBTA 2017-12-18 21 of 48, Sound Transit 2023-05-10 8 of 14 and 5 of 14 (AVL
 * reports every 15–60 s; Caltrain's capture stamps all 14 alike, 10 s old, and is left out).
 */
export const REPORTING_SHARE = 0.45;

/**
 * Poll `variant` of the vehicle feed. `share`: the share of vehicles with a new report (timestamp
 * and position) since the poll before; the others repeat their last report byte for byte. With 1
 * (the default) every vehicle moves every poll: the worst case.
 */
export function vehicleFeed(variant: number, share = 1): Uint8Array {
  return encodeFeed({
    header: header(NOW_S + variant),
    entity: Array.from({ length: VEHICLES }, (_, i) => vehicleEntity(i, reportOf(i, variant, share))),
  });
}

/**
 * Which report vehicle i shows at poll `variant`: a counter that moves `share` times a poll on
 * average, each vehicle at its own phase (spread by the golden ratio), so the vehicles that move
 * differ from poll to poll. With share 1 it is the poll itself.
 */
function reportOf(i: number, variant: number, share: number): number {
  if (share >= 1) return variant;
  const phase = (i * 0.6180339887498949) % 1;
  return Math.floor(variant * share + phase);
}

/** Vehicle i as of its report number `report`: its timestamp and latitude move with it. */
function vehicleEntity(i: number, report: number) {
  return {
    id: `v${i}`,
    vehicle: {
      trip: { trip_id: `t${i}`, route_id: `r${i % 120}`, start_date: SERVICE_DATE, schedule_relationship: 0 },
      vehicle: { id: `bus-${i}`, label: `${1000 + i}` },
      position: {
        latitude: 42.2 + (i % 1000) / 5e3 + report / 1e5,
        longitude: -71.1 - (i % 997) / 5e3,
        bearing: i % 360,
        speed: (i % 25) / 2,
      },
      current_stop_sequence: i % 30,
      stop_id: `s${i % 2_000}`,
      current_status: 2,
      timestamp: NOW_S - (i % 30) + report,
    },
  };
}

export function tripUpdateFeed(variant: number): Uint8Array {
  return encodeFeed({
    header: header(NOW_S + variant),
    entity: Array.from({ length: TRIPS }, (_, i) => ({
      id: `tu${i}`,
      trip_update: {
        trip: { trip_id: `t${i}`, start_date: SERVICE_DATE, schedule_relationship: i % 100 === 0 ? 3 : 0 },
        vehicle: { id: `bus-${i}` },
        timestamp: NOW_S - 5 + variant,
        // a delay-only update every third stop from stop 5: resolved and propagated against the schedule
        stop_time_update: Array.from({ length: Math.ceil((STOPS - 5) / 3) }, (_, k) => ({
          stop_sequence: 6 + k * 3,
          arrival: { delay: ((i * 13 + k * 7) % 600) - 120 + variant },
          schedule_relationship: i % 50 === 0 && k === 1 ? 1 : 0,
        })),
      },
    })),
  });
}
