// Domain objects → REST resources: the public forms events share (core/public-forms.ts) plus what
// only REST carries (freshness, age, station names). Pure functions.
import type { FeedHealth } from '../../core/ports.ts';
import type { Alert, Arrival, Freshness, VehiclePosition } from '../../core/types.ts';
import {
  arrivalId,
  publicAlert,
  publicArrival,
  publicSource,
  publicVehicle,
  reportedMs,
} from '../../core/public-forms.ts';
import type { ApiAlert, ApiRailArrival, ApiSourceFreshness, ApiVehicle } from '../routes/schemas.ts';

export interface FreshnessThresholds {
  stale_after_s: number;
  expired_after_s: number;
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
  if (!forms) {
    forms = {};
    alertCache.set(a, forms);
  }
  let out = forms[freshness];
  if (!out) {
    out = { ...publicAlert(a), freshness };
    forms[freshness] = out;
  }
  return out;
}

export { arrivalId };

export function arrivalToApi(a: Arrival, stationName: string | null, freshness: Freshness): ApiRailArrival {
  return { ...publicArrival(a), line: a.route_id, station_name: stationName, freshness };
}

export function vehicleToApi(
  v: VehiclePosition,
  nowMs: number,
  feedFreshness: Freshness | undefined,
  delayS: number | null,
  t: FreshnessThresholds,
): ApiVehicle {
  const ageS = Math.max(0, Math.round((nowMs - reportedMs(v)) / 1000));
  const own = ageFreshness(ageS, t);
  return {
    ...publicVehicle(v),
    age_s: ageS,
    freshness: feedFreshness ? worse(own, feedFreshness) : own,
    delay_s: delayS === null ? null : Math.round(delayS),
  };
}

export function sourceToApi(f: FeedHealth): ApiSourceFreshness {
  return publicSource(f);
}
