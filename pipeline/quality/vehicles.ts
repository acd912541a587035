// The VehiclePosition rules: its trip, its ids, its timestamp, and its position on Earth, in the
// schedule's area and near its trip's shape.
import { has, type FeedEntityMsg } from '../gtfs-rt-types.ts';
import { detoursOf, type CheckContext } from './context.ts';
import type { FindingSink } from './findings.ts';
import type { IdTable } from './id-table.ts';
import { AREA_BUFFER_M, inBox, nearShape, SHAPE_BUFFER_M, validPosition } from './geometry.ts';
import { checkTimestamp } from './timestamps.ts';
import { checkTrip } from './trips.ts';

const own = Object.prototype.hasOwnProperty;

/** W004's limit, the validator's: about 60 mph. */
export const MAX_SPEED_MPS = 26;

/** `vehicleIds` collects the snapshot's vehicle.id values (E052). */
export function checkVehicle(
  entity: FeedEntityMsg,
  ctx: CheckContext,
  sink: FindingSink,
  vehicleIds: IdTable<null>,
): void {
  const v = entity.vehicle!;
  const vehicleId = v.vehicle?.id || '';
  const id = entity.id || vehicleId || null;
  const td = v.trip;
  if (td != null) {
    checkTrip(td, id, ctx, sink);
    if (!own.call(td, 'schedule_relationship')) sink.add('W009', id, () => 'trip without schedule_relationship');
  }
  checkTimestamp(v, id, 'vehicle', ctx, sink);
  if (!vehicleId) sink.add('W002', id, () => 'vehicle without vehicle.id');
  else if (!vehicleIds.add(vehicleId, null)) {
    sink.add('E052', id, (x) => `vehicle.id ${JSON.stringify(x)} again`, vehicleId);
  }
  const schedule = ctx.lookups;
  if (v.stop_id && schedule && !schedule.stop(v.stop_id)) {
    sink.add('E011', id, (x) => `stop_id ${JSON.stringify(x)} is not in the schedule`, v.stop_id);
  }

  const p = v.position;
  if (p == null) return;
  // unset scalars read 0 (the prototype's default), which breaks neither rule
  const speed = p.speed ?? 0;
  if (!(speed >= 0 && speed <= MAX_SPEED_MPS)) sink.add('W004', id, (x) => `speed ${x} m/s`, speed);
  const bearing = p.bearing ?? 0;
  if (!(bearing >= 0 && bearing <= 360)) sink.add('E027', id, (x) => `bearing ${x}`, bearing);
  const lat = p.latitude;
  const lon = p.longitude;
  // 0 may be unset: asked only then (a coordinate of exactly 0 is rare)
  if ((lat === 0 && !has(p, 'latitude')) || (lon === 0 && !has(p, 'longitude'))) {
    sink.add('E026', id, (x) => `position without ${x}`, has(p, 'latitude') ? 'longitude' : 'latitude');
    return;
  }
  if (!validPosition(lat, lon)) {
    sink.add('E026', id, (a, b) => `position (${a}, ${b}) is not on Earth`, lat, lon);
    return;
  }
  const area = ctx.area;
  if (area && !inBox(area, lat, lon)) {
    sink.add(
      'E028',
      id,
      (a, b) => `position (${a}, ${b}) is over ${AREA_BUFFER_M} m outside the schedule's stops`,
      lat,
      lon,
    );
    return;
  }
  const tripId = td?.trip_id;
  const shape = tripId && schedule ? schedule.tripShape(tripId) : undefined;
  if (!shape || nearShape(shape, lat, lon)) return;
  const detours = detoursOf(ctx);
  if (detours) {
    const routeId = td!.route_id || schedule!.trip(tripId!)?.route_id;
    if (detours.has(`t:${tripId}`) || (routeId && detours.has(`r:${routeId}`))) return;
  }
  sink.add(
    'E029',
    id,
    (a, b, c) => `position (${a}, ${b}) is over ${SHAPE_BUFFER_M} m from the shape of trip ${c}`,
    lat,
    lon,
    tripId,
  );
}
