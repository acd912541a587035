// One trip id carried more than once in a snapshot. NYCT publishes a few trip ids twice with the
// same start date and different stops: two trains, both real. Copies that report the same train
// are true duplicates; the others are instances of the trip, told apart by a discriminator that
// stays the same from poll to poll as far as the feed allows.
import { has, vehicleRef, type StopTimeUpdateMsg, type TripUpdateMsg } from './gtfs-rt-types.ts';

/**
 * Which train a TripUpdate reports: its start time, vehicle and stops. Two TripUpdates of one trip
 * id and start date that agree on these are the same report twice (a duplicate, whatever their
 * predictions say); any difference makes them two instances of the trip.
 */
export function tripUpdateIdentity(tu: TripUpdateMsg): string {
  return JSON.stringify([
    tu.trip?.start_time ?? null,
    vehicleRef(tu.vehicle, tu.trip),
    (tu.stop_time_update ?? []).map(stopName),
  ]);
}

function stopName(u: StopTimeUpdateMsg): string {
  return u.stop_id || (has(u, 'stop_sequence') ? `#${u.stop_sequence}` : '');
}

type Discriminator = (tu: TripUpdateMsg) => string | null;

/**
 * In order of stability: the vehicle (NYCT: the train id of its extension); the start time (frequency-based trips);
 * the last stop,
 * which stays put while the train runs; the first remaining stop, which moves as it advances;
 * last, the order in the feed.
 */
const DISCRIMINATORS: readonly Discriminator[] = [
  (tu) => {
    const vehicle = vehicleRef(tu.vehicle, tu.trip);
    return vehicle ? `vehicle:${vehicle}` : null;
  },
  (tu) => (tu.trip?.start_time ? `start:${tu.trip.start_time}` : null),
  (tu) => {
    const last = tu.stop_time_update?.at(-1);
    return last && stopName(last) ? `to:${stopName(last)}` : null;
  },
  (tu) => {
    const first = tu.stop_time_update?.[0];
    return first && stopName(first) ? `from:${stopName(first)}` : null;
  },
];

/**
 * One instance name per TripUpdate of a group sharing trip id and start date, all different:
 * the first discriminator that names every one of them distinctly. A lone TripUpdate gets null,
 * so trips carried once keep the plain trip id as their key.
 */
export function instanceNames(group: readonly TripUpdateMsg[]): (string | null)[] {
  if (group.length < 2) return group.map(() => null);
  for (const discriminate of DISCRIMINATORS) {
    const names = group.map(discriminate);
    if (names.every((n) => n !== null) && new Set(names).size === names.length) return names;
  }
  return group.map((_tu, i) => `#${i + 1}`);
}
