// A LiveView held in memory for API tests (the pipeline's LiveState implements the same port).
import type { FeedHealth, LiveView } from '../../core/ports.ts';
import type { Alert, Arrival, Mode, VehiclePosition } from '../../core/types.ts';

export class FakeLive implements LiveView {
  version = 1;
  alertList: Alert[] = [];
  arrivalList: Arrival[] = [];
  vehicleList: VehiclePosition[] = [];
  feedList: FeedHealth[] = [];

  vehicles(mode: Mode): readonly VehiclePosition[] {
    return this.vehicleList.filter((v) => v.mode === mode);
  }
  arrivals(): readonly Arrival[] {
    return this.arrivalList;
  }
  alerts(): readonly Alert[] {
    return this.alertList;
  }
  feeds(): readonly FeedHealth[] {
    return this.feedList;
  }
  /** replaces state the way the pipeline does: new arrays, new version */
  change(fn: (live: this) => void): void {
    fn(this);
    this.version++;
  }
}

export function makeAlert(over: Partial<Alert> & { id: string }): Alert {
  const [feed, entity] = over.id.includes(':') ? (over.id.split(':') as [string, string]) : ['alerts', over.id];
  return {
    feed_id: feed,
    entity_id: entity,
    modes: ['bus'],
    status: 'active',
    impact: 'detour',
    cause: 'construction',
    severity: null,
    header: { en: `Header of ${over.id}` },
    description: { en: 'Description' },
    url: {},
    active_periods: [{ start_ms: 1_700_000_000_000, end_ms: null }],
    routes: [],
    stations: [],
    trips: [],
    version: 1,
    first_seen_ms: 1_700_000_000_000,
    updated_ms: 1_700_000_000_000,
    resolved_ms: null,
    ...over,
  };
}

export function makeArrival(over: Partial<Arrival> & { trip_id: string; station_id: string }): Arrival {
  return {
    feed_id: 'rail-tu',
    trip_instance: null,
    route_id: 'Red',
    mode: 'rail',
    stop_id: over.station_id,
    stop_sequence: 1,
    direction_id: 0,
    service_date: '2024-05-01',
    scheduled_ms: 1_714_580_000_000,
    predicted_ms: 1_714_580_060_000,
    delay_s: 60,
    delay_state: 'on_time',
    trip_relationship: 'scheduled',
    in_schedule: true,
    vehicle_id: null,
    observed_ms: 1_714_579_990_000,
    ...over,
  };
}

export function makeVehicle(over: Partial<VehiclePosition> & { vehicle_id: string }): VehiclePosition {
  return {
    feed_id: 'bus-vp',
    route_id: '39',
    trip_id: null,
    mode: 'bus',
    lat: 42.35,
    lon: -71.06,
    position_source: 'gps',
    bearing: 90,
    speed_mps: 5,
    stop_id: null,
    current_status: 'IN_TRANSIT_TO',
    timestamp_ms: 1_714_579_990_000,
    observed_ms: 1_714_579_995_000,
    ...over,
  };
}

export function makeFeed(over: Partial<FeedHealth> & { feed_id: string }): FeedHealth {
  return {
    kind: 'gtfs-rt',
    freshness: 'fresh',
    header_timestamp_ms: 1_714_579_990_000,
    last_poll_ms: 1_714_579_995_000,
    last_success_ms: 1_714_579_995_000,
    last_status: 'ok',
    last_error: null,
    entities: 10,
    polls: 5,
    failures: 0,
    rejected: 0,
    ...over,
  };
}
