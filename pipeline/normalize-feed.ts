// A decoded FeedMessage → every row it holds. Header checks and entity ids live here; each kind
// of entity has its own normalizer.
import type { Arrival, RejectReason, TripMatching, TripObservation, VehiclePosition } from '../core/types.ts';
import type { AlertContent } from './alert-content.ts';
import { has, int64, type FeedEntityMsg, type FeedMessageMsg, type TripDescriptorMsg } from './gtfs-rt-types.ts';
import { normalizeAlerts } from './normalize-alerts.ts';
import { judgeHeader, secondsToMs, type NormalizeContext, type SnapshotRejection } from './normalize-context.ts';
import { normalizeTripUpdates } from './normalize-trip-updates.ts';
import { normalizeVehicles } from './normalize-vehicles.ts';
import { matchRequest } from './resolve-trip.ts';
import { TripMatcher } from './trip-matching/match.ts';

/** One poll's rows, whatever the feed kind. */
export interface NormalizedPoll {
  /** the header timestamp as the feed meant it (milliseconds sent as seconds are divided back) */
  header_timestamp_ms: number | null;
  entities: number;
  vehicle_entities: number;
  trip_update_entities: number;
  alert_entities: number;
  vehicles: VehiclePosition[];
  arrivals: Arrival[];
  trips: TripObservation[];
  /** every alert the feed carries now; the feed's earlier alerts missing here are resolved */
  alerts: AlertContent[];
  rejected: Partial<Record<RejectReason, number>>;
  /** null when no trip was looked up */
  matching: TripMatching | null;
  /** set when the snapshot was rejected whole: then it holds no rows */
  rejection?: SnapshotRejection;
}

/** Without a matcher, trips are matched with the `auto` strategies. */
export type NormalizeInput = Omit<NormalizeContext, 'header_ms' | 'matcher'> & { matcher?: TripMatcher };

/** Reads the header timestamp and judges it; a bad one rejects the snapshot. */
export function headerTimestamp(
  message: FeedMessageMsg,
  ctx: NormalizeInput,
): { reported: number | null; rejection: SnapshotRejection | null } {
  const header = message.header;
  if (!has(header, 'timestamp')) return { reported: null, rejection: null };
  const raw = int64(header.timestamp) ?? 0;
  if (raw <= 0) return { reported: null, rejection: null };
  const { ms, wasMs } = secondsToMs(raw);
  if (wasMs) ctx.rejects.add('header_timestamp_ms');
  return { reported: ms, rejection: judgeHeader(ms, wasMs, ctx) };
}

/**
 * A snapshot rejected whole: each entity it carried counts under the reason (the header alone
 * when it carried none), and no row is made.
 */
export function rejectedSnapshot(
  counts: Pick<
    NormalizedPoll,
    'header_timestamp_ms' | 'entities' | 'vehicle_entities' | 'trip_update_entities' | 'alert_entities'
  >,
  rejection: SnapshotRejection,
  ctx: Pick<NormalizeContext, 'rejects'>,
): NormalizedPoll {
  ctx.rejects.add(rejection.reason, Math.max(1, counts.entities));
  return {
    ...counts,
    vehicles: [],
    arrivals: [],
    trips: [],
    alerts: [],
    rejected: ctx.rejects.counts,
    matching: null,
    rejection,
  };
}

export function normalizeFeedMessage(message: FeedMessageMsg, input: NormalizeInput): NormalizedPoll {
  const header = headerTimestamp(message, input);
  const ctx: NormalizeContext = {
    ...input,
    header_ms: header.rejection ? null : header.reported,
    matcher: input.matcher ?? new TripMatcher(),
  };
  const vehicles: FeedEntityMsg[] = [];
  const tripUpdates: FeedEntityMsg[] = [];
  const alerts: FeedEntityMsg[] = [];
  const ids = new Map<string, Set<string>>();
  const entities = message.entity ?? [];

  for (const entity of entities) {
    if (entity.trip_update) tripUpdates.push(entity);
    if (entity.vehicle) vehicles.push(entity);
    if (entity.alert) alerts.push(entity);
  }
  if (header.rejection) {
    return rejectedSnapshot(
      {
        header_timestamp_ms: header.reported,
        entities: entities.length,
        vehicle_entities: vehicles.length,
        trip_update_entities: tripUpdates.length,
        alert_entities: alerts.length,
      },
      header.rejection,
      ctx,
    );
  }
  // ids are checked after counting so decoded counts match what the feed carried
  const keep = (list: FeedEntityMsg[]): FeedEntityMsg[] =>
    list.filter((e) => {
      if (!e.id) {
        ctx.rejects.add('missing_entity_id');
        return false;
      }
      return true;
    });
  // one set per kind rather than `kind|id` strings: no string built and hashed per entity
  const unique = (list: FeedEntityMsg[], kind: string): FeedEntityMsg[] =>
    list.filter((e) => {
      let seen = ids.get(kind);
      if (!seen) {
        seen = new Set();
        ids.set(kind, seen);
      }
      if (seen.has(e.id!)) {
        ctx.rejects.add('duplicate_entity');
        return false;
      }
      seen.add(e.id!);
      // is_deleted only has meaning in DIFFERENTIAL feeds; in a full dataset the entity is simply absent
      return !e.is_deleted;
    });

  const vehicleEntities = unique(keep(vehicles), 'v');
  const tripUpdateEntities = unique(keep(tripUpdates), 't');
  ctx.matcher.prepare(tripsToMatch(vehicleEntities, tripUpdateEntities), (td) => matchRequest(td, ctx));
  const v = normalizeVehicles(vehicleEntities, ctx);
  const t = normalizeTripUpdates(tripUpdateEntities, ctx);
  const a = normalizeAlerts(unique(keep(alerts), 'a'), ctx);
  return {
    header_timestamp_ms: header.reported,
    entities: entities.length,
    vehicle_entities: vehicles.length,
    trip_update_entities: tripUpdates.length,
    alert_entities: alerts.length,
    vehicles: v.vehicles,
    arrivals: t.arrivals,
    trips: [...t.trips, ...v.trips],
    alerts: a,
    rejected: ctx.rejects.counts,
    matching: ctx.matcher.summary(),
  };
}

/** The descriptors the normalizers will look up (one with an id, or a route and start time). */
function tripsToMatch(vehicles: readonly FeedEntityMsg[], tripUpdates: readonly FeedEntityMsg[]): TripDescriptorMsg[] {
  // protobufjs leaves an absent message null or undefined
  const looksUp = (td: TripDescriptorMsg | null | undefined): td is TripDescriptorMsg =>
    td != null && Boolean(td.trip_id || (td.route_id && td.start_time));
  const out: TripDescriptorMsg[] = [];
  for (const e of tripUpdates) if (looksUp(e.trip_update!.trip)) out.push(e.trip_update!.trip);
  for (const e of vehicles) if (looksUp(e.vehicle!.trip)) out.push(e.vehicle!.trip!);
  return out;
}
