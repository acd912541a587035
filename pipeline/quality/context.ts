// What every check of one snapshot needs: the header's time read once, the clock, the schedule.
import type { ScheduleIndex } from '../../core/ports.ts';
import { has, int64, type FeedMessageMsg } from '../gtfs-rt-types.ts';
import { scheduleArea, type GeoBox } from './geometry.ts';
import { scheduleLookups, type ScheduleLookups } from './schedule-lookups.ts';

/** 2005-01-01 and 2100-01-01: seconds outside are not POSIX seconds (E001), milliseconds mostly. */
export const MIN_POSIX_S = 1_104_537_600;
export const MAX_POSIX_S = 4_102_444_800;
export const isPosixSeconds = (s: number): boolean => s >= MIN_POSIX_S && s < MAX_POSIX_S;

/** A timestamp as epoch ms, milliseconds sent in a seconds field read back (as the normalizers do). */
export const timestampMs = (raw: number): number => (raw > 1e11 ? raw : raw * 1000);

/** E050's tolerance, the validator's: a minute ahead of our clock. */
export const FUTURE_TOLERANCE_MS = 60_000;

export const TRIP_ADDED = 1;
export const TRIP_CANCELED = 3;
export const TRIP_DELETED = 7;
export const TRIP_NEW = 8;
/** FeedHeader.Incrementality */
export const FULL_DATASET = 0;
/** Alert.Effect */
export const DETOUR = 4;

export interface CheckContext {
  message: FeedMessageMsg;
  /** the header timestamp as sent (seconds, or milliseconds by mistake); null when absent or 0 */
  header_raw: number | null;
  /** the same as epoch ms, milliseconds read back; null when absent */
  header_ms: number | null;
  /** GTFS-RT 2.0 or later (an unreadable version counts as 2.0, as the validator does) */
  version2: boolean;
  full_dataset: boolean;
  /** this server's clock when the body was received; null: W008 and E050 are not evaluated */
  now_ms: number | null;
  schedule: ScheduleIndex | undefined;
  /** the schedule's trips, routes, stops and shapes, answers kept between snapshots; null without one */
  lookups: ScheduleLookups | null;
  /** the schedule's stops' box plus the buffer; null without a schedule or stop coordinates */
  area: GeoBox | null;
  /**
   * Trips and routes a DETOUR alert of this snapshot names (E029 spares them): undefined until a
   * vehicle is far from its shape (detoursOf reads them then, sparing every other snapshot a pass
   * over its entities), null without any.
   */
  detours: Set<string> | null | undefined;
}

export function checkContext(
  message: FeedMessageMsg,
  schedule: ScheduleIndex | undefined,
  nowMs: number | null,
): CheckContext {
  const header = message.header;
  const raw = has(header, 'timestamp') ? (int64(header.timestamp) ?? 0) : 0;
  const version = Number.parseFloat(header.gtfs_realtime_version);
  return {
    message,
    header_raw: raw > 0 ? raw : null,
    header_ms: raw > 0 ? timestampMs(raw) : null,
    version2: !(version < 2),
    full_dataset: (header.incrementality ?? FULL_DATASET) === FULL_DATASET,
    now_ms: nowMs,
    schedule,
    lookups: schedule ? scheduleLookups(schedule) : null,
    area: schedule ? scheduleArea(schedule) : null,
    detours: undefined,
  };
}

/** Trip and route ids named by the snapshot's DETOUR alerts; null (the usual case) when there are none. */
export function detoursOf(ctx: CheckContext): Set<string> | null {
  if (ctx.detours === undefined) ctx.detours = readDetours(ctx.message);
  return ctx.detours;
}

function readDetours(message: FeedMessageMsg): Set<string> | null {
  let out: Set<string> | null = null;
  for (const entity of message.entity ?? []) {
    const alert = entity.alert;
    if (!alert || alert.effect !== DETOUR) continue;
    for (const selector of alert.informed_entity ?? []) {
      out ??= new Set();
      if (selector.route_id) out.add(`r:${selector.route_id}`);
      if (selector.trip?.trip_id) out.add(`t:${selector.trip.trip_id}`);
      if (selector.trip?.route_id) out.add(`r:${selector.trip.route_id}`);
    }
  }
  return out;
}
