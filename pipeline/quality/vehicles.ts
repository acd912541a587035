// The VehiclePosition rules: its trip, its ids, its timestamp, and its position on Earth, in the
// schedule's area and near its trip's shape.
import { has, type FeedEntityMsg } from '../gtfs-rt-types.ts';
import type { CheckContext } from './context.ts';
import type { FindingSink } from './findings.ts';
import { AREA_BUFFER_M, inBox, nearShape, SHAPE_BUFFER_M, validPosition } from './geometry.ts';
import { checkTimestamp } from './timestamps.ts';
import { checkTrip } from './trips.ts';

/** W004's limit, the validator's: about 60 mph. */
export const MAX_SPEED_MPS = 26;

/** `vehicleIds` collects the snapshot's vehicle.id values (E052). */
export function checkVehicle(
  entity: FeedEntityMsg,
  ctx: CheckContext,
  sink: FindingSink,
  vehicleIds: Set<string>,
): void {
  const v = entity.vehicle!;
  const vehicleId = v.vehicle?.id || '';
  const id = entity.id || vehicleId || null;
  const td = v.trip;
  if (td != null) {
    checkTrip(td, id, ctx, sink);
    if (!has(td, 'schedule_relationship')) sink.add('W009', id, () => 'trip without schedule_relationship');
  }
  checkTimestamp(v, id, 'vehicle', ctx, sink);
  if (!vehicleId) sink.add('W002', id, () => 'vehicle without vehicle.id');
  else if (vehicleIds.has(vehicleId)) sink.add('E052', id, () => `vehicle.id ${JSON.stringify(vehicleId)} again`);
  else vehicleIds.add(vehicleId);
  const schedule = ctx.schedule;
  if (v.stop_id && schedule && !schedule.stop(v.stop_id)) {
    sink.add('E011', id, () => `stop_id ${JSON.stringify(v.stop_id)} is not in the schedule`);
  }

  const p = v.position;
  if (p == null) return;
  if (has(p, 'speed') && !(p.speed! >= 0 && p.speed! <= MAX_SPEED_MPS)) {
    sink.add('W004', id, () => `speed ${p.speed} m/s`);
  }
  if (has(p, 'bearing') && !(p.bearing! >= 0 && p.bearing! <= 360)) {
    sink.add('E027', id, () => `bearing ${p.bearing}`);
  }
  if (!has(p, 'latitude') || !has(p, 'longitude')) {
    sink.add('E026', id, () => `position without ${has(p, 'latitude') ? 'longitude' : 'latitude'}`);
    return;
  }
  const { latitude: lat, longitude: lon } = p;
  if (!validPosition(lat, lon)) {
    sink.add('E026', id, () => `position (${lat}, ${lon}) is not on Earth`);
    return;
  }
  const area = ctx.area;
  if (area && !inBox(area, lat, lon)) {
    sink.add('E028', id, () => `position (${lat}, ${lon}) is over ${AREA_BUFFER_M} m outside the schedule's stops`);
    return;
  }
  const tripId = td?.trip_id;
  const shape = tripId && schedule?.tripShape ? schedule.tripShape(tripId) : undefined;
  if (!shape || nearShape(shape, lat, lon)) return;
  const detours = ctx.detours;
  if (detours) {
    const routeId = td!.route_id || schedule!.trip(tripId!)?.route_id;
    if (detours.has(`t:${tripId}`) || (routeId && detours.has(`r:${routeId}`))) return;
  }
  sink.add('E029', id, () => `position (${lat}, ${lon}) is over ${SHAPE_BUFFER_M} m from the shape of trip ${tripId}`);
}
