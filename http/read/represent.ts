// Domain objects (epoch ms, feed ids) → API objects (ISO 8601, `source`). Pure functions.
import type { FeedHealth } from '../../core/ports.ts';
import type { Alert, Arrival, Freshness, VehiclePosition } from '../../core/types.ts';
import type { ApiAlert, ApiRailArrival, ApiSourceFreshness, ApiVehicle } from '../routes/schemas.ts';

export interface FreshnessThresholds {
  stale_after_s: number;
  expired_after_s: number;
}

// Date supports ±8.64e15 ms; feed data beyond it (a seconds field read as ms) must not throw
const MAX_DATE_MS = 8.64e15;

export function iso(ms: number | null | undefined): string | null {
  if (ms === null || ms === undefined || !Number.isFinite(ms) || Math.abs(ms) > MAX_DATE_MS) return null;
  return new Date(ms).toISOString();
}

export function isoOr(ms: number, fallbackMs: number): string {
  return iso(ms) ?? iso(fallbackMs) ?? new Date(0).toISOString();
}

const RANK: Record<Freshness, number> = { fresh: 0, stale: 1, expired: 2 };

export function worse(a: Freshness, b: Freshness): Freshness {
  return RANK[a] >= RANK[b] ? a : b;
}

export function ageFreshness(ageS: number, t: FreshnessThresholds): Freshness {
  if (!Number.isFinite(ageS)) return 'expired';
  if (ageS > t.expired_after_s) return 'expired';
  if (ageS > t.stale_after_s) return 'stale';
  return 'fresh';
}

const alertCache = new WeakMap<Alert, Partial<Record<Freshness, ApiAlert>>>();

/**
 * Alerts are immutable snapshots (a change is a new object), so their API form is memoized, once
 * per freshness of their source: an alert from a stale or expired feed may have changed or ended.
 */
export function alertToApi(a: Alert, freshness: Freshness): ApiAlert {
  let forms = alertCache.get(a);
  if (!forms) alertCache.set(a, (forms = {}));
  let out = forms[freshness];
  if (!out) {
    out = {
      id: a.id,
      source: a.feed_id,
      entity_id: a.entity_id,
      modes: [...a.modes],
      status: a.status,
      impact: a.impact,
      cause: a.cause,
      severity: a.severity,
      header: { ...a.header },
      description: { ...a.description },
      url: { ...a.url },
      active_periods: a.active_periods.map((p) => ({ start: iso(p.start_ms), end: iso(p.end_ms) })),
      routes: [...a.routes],
      stations: [...a.stations],
      trips: [...a.trips],
      version: a.version,
      first_seen_at: isoOr(a.first_seen_ms, a.updated_ms),
      updated_at: isoOr(a.updated_ms, a.first_seen_ms),
      resolved_at: iso(a.resolved_ms),
      freshness,
    };
    forms[freshness] = out;
  }
  return out;
}

export function arrivalId(a: Arrival): string {
  const trip = a.trip_instance === null ? a.trip_id : `${a.trip_id}~${a.trip_instance}`;
  return `${a.feed_id}:${trip}:${a.stop_sequence ?? a.stop_id}`;
}

export function arrivalToApi(a: Arrival, stationName: string | null, freshness: Freshness): ApiRailArrival {
  return {
    id: arrivalId(a),
    source: a.feed_id,
    trip_id: a.trip_id,
    trip_instance: a.trip_instance,
    line: a.route_id,
    station_id: a.station_id,
    station_name: stationName,
    stop_id: a.stop_id,
    stop_sequence: a.stop_sequence,
    direction_id: a.direction_id,
    service_date: a.service_date,
    scheduled_at: iso(a.scheduled_ms),
    predicted_at: iso(a.predicted_ms),
    delay_s: a.delay_s === null ? null : Math.round(a.delay_s),
    delay_state: a.delay_state,
    trip_relationship: a.trip_relationship,
    in_schedule: a.in_schedule,
    vehicle_id: a.vehicle_id,
    observed_at: isoOr(a.observed_ms, 0),
    freshness,
  };
}

export function vehicleToApi(
  v: VehiclePosition, nowMs: number, feedFreshness: Freshness | undefined, delayS: number | null, t: FreshnessThresholds,
): ApiVehicle {
  const reported = iso(v.timestamp_ms) ? v.timestamp_ms : v.observed_ms;
  const ageS = Math.max(0, Math.round((nowMs - reported) / 1000));
  const own = ageFreshness(ageS, t);
  return {
    id: `${v.feed_id}:${v.vehicle_id}`,
    source: v.feed_id,
    vehicle_id: v.vehicle_id,
    route_id: v.route_id,
    trip_id: v.trip_id,
    lat: v.lat,
    lon: v.lon,
    position_source: v.position_source,
    bearing: v.bearing,
    speed_mps: v.speed_mps,
    stop_id: v.stop_id,
    current_status: v.current_status,
    timestamp: isoOr(reported, v.observed_ms),
    observed_at: isoOr(v.observed_ms, 0),
    age_s: ageS,
    freshness: feedFreshness ? worse(own, feedFreshness) : own,
    delay_s: delayS === null ? null : Math.round(delayS),
  };
}

export function sourceToApi(f: FeedHealth): ApiSourceFreshness {
  return {
    source: f.feed_id,
    kind: f.kind,
    freshness: f.freshness,
    header_timestamp: iso(f.header_timestamp_ms),
    last_poll_at: iso(f.last_poll_ms),
    last_success_at: iso(f.last_success_ms),
    last_status: f.last_status,
    last_error: f.last_error,
  };
}
