// An entity's own timestamp (TripUpdate, VehiclePosition): present, POSIX seconds, not after the
// header, not ahead of our clock.
import { has, int64, type Int64 } from '../gtfs-rt-types.ts';
import { FUTURE_TOLERANCE_MS, isoOf, isPosixSeconds, timestampMs, type CheckContext } from './context.ts';
import type { FindingSink } from './findings.ts';

export function checkTimestamp(
  msg: { timestamp?: Int64 },
  entity: string | null,
  what: string,
  ctx: CheckContext,
  sink: FindingSink,
): void {
  const raw = has(msg, 'timestamp') ? (int64(msg.timestamp) ?? 0) : 0;
  if (raw <= 0) {
    sink.add('W001', entity, () => `${what} without a timestamp`);
    return;
  }
  const ms = timestampMs(raw);
  if (ctx.header_ms !== null && ms > ctx.header_ms) {
    sink.add('E012', entity, () => `${what} timestamp ${isoOf(ms)} is after the header's, ${isoOf(ctx.header_ms!)}`);
  }
  if (!isPosixSeconds(raw)) {
    sink.add(
      'E001',
      entity,
      () => `${what} timestamp ${raw} is not POSIX seconds${raw > 1e11 ? ' (milliseconds?)' : ''}`,
    );
  } else if (ctx.now_ms !== null && ms - ctx.now_ms > FUTURE_TOLERANCE_MS) {
    sink.add(
      'E050',
      entity,
      () => `${what} timestamp ${isoOf(ms)} is ${Math.round((ms - ctx.now_ms!) / 1000)} s ahead`,
    );
  }
}
