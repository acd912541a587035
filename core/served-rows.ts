// Live rows with their ids as served (core/served-ids.ts): what REST lists, filters and the
// events read. Without scoping, and for a row none of whose ids change, the row itself is
// returned, so a deployment with one schedule builds nothing.
import type { ServedIds } from './served-ids.ts';
import type { Alert, Arrival, TripObservation, VehiclePosition } from './types.ts';

export function servedVehicle(ids: ServedIds, v: VehiclePosition): VehiclePosition {
  if (!ids.scoped) return v;
  const s = ids.scopeOf(v);
  const vehicle_id = ids.serve(s, 'vehicle', v.vehicle_id);
  const route_id = ids.serveNullable(s, 'route', v.route_id);
  const trip_id = ids.serveNullable(s, 'trip', v.trip_id);
  const feed_trip_id = ids.serveNullable(s, 'trip', v.feed_trip_id ?? null);
  const stop_id = ids.serveNullable(s, 'stop', v.stop_id);
  if (
    vehicle_id === v.vehicle_id &&
    route_id === v.route_id &&
    trip_id === v.trip_id &&
    feed_trip_id === (v.feed_trip_id ?? null) &&
    stop_id === v.stop_id
  )
    return v;
  return { ...v, vehicle_id, route_id, trip_id, feed_trip_id, stop_id };
}

export function servedArrival(ids: ServedIds, a: Arrival): Arrival {
  if (!ids.scoped) return a;
  const s = ids.scopeOf(a);
  const trip_id = ids.serve(s, 'trip', a.trip_id);
  const feed_trip_id = ids.serveNullable(s, 'trip', a.feed_trip_id ?? null);
  const route_id = ids.serveNullable(s, 'route', a.route_id);
  const station_id = ids.serve(s, 'stop', a.station_id);
  const stop_id = ids.serve(s, 'stop', a.stop_id);
  const vehicle_id = ids.serveNullable(s, 'vehicle', a.vehicle_id);
  if (
    trip_id === a.trip_id &&
    feed_trip_id === (a.feed_trip_id ?? null) &&
    route_id === a.route_id &&
    station_id === a.station_id &&
    stop_id === a.stop_id &&
    vehicle_id === a.vehicle_id
  )
    return a;
  return { ...a, trip_id, feed_trip_id, route_id, station_id, stop_id, vehicle_id };
}

export function servedTrip(ids: ServedIds, t: TripObservation): TripObservation {
  if (!ids.scoped) return t;
  const s = ids.scopeOf(t);
  const trip_id = ids.serve(s, 'trip', t.trip_id);
  const route_id = ids.serveNullable(s, 'route', t.route_id);
  if (trip_id === t.trip_id && route_id === t.route_id) return t;
  return { ...t, trip_id, route_id };
}

const alertForms = new WeakMap<Alert, { generation: number; alert: Alert }>();

/** An alert's informed entities as served. Alerts are immutable: the form is kept per mapping. */
export function servedAlert(ids: ServedIds, a: Alert): Alert {
  if (!ids.scoped) return a;
  const known = alertForms.get(a);
  if (known?.generation === ids.generation) return known.alert;
  const s = ids.scopeOf(a);
  const routes = a.routes.map((r) => ids.serve(s, 'route', r));
  const stations = a.stations.map((r) => ids.serve(s, 'stop', r));
  const trips = a.trips.map((r) => ids.serve(s, 'trip', r));
  const same = (x: readonly string[], y: readonly string[]) => x.every((v, i) => v === y[i]);
  const alert =
    same(routes, a.routes) && same(stations, a.stations) && same(trips, a.trips)
      ? a
      : { ...a, routes, stations, trips };
  alertForms.set(a, { generation: ids.generation, alert });
  return alert;
}
