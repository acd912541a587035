// An entity's own timestamp (TripUpdate, VehiclePosition): present, POSIX seconds, not after the
// header, not ahead of our clock.
import { int64, type Int64 } from '../gtfs-rt-types.ts';
import { FUTURE_TOLERANCE_MS, isoOf, isPosixSeconds, timestampMs, type CheckContext } from './context.ts';
import type { FindingSink } from './findings.ts';

export function checkTimestamp(
  msg: { timestamp?: Int64 },
  entity: string | null,
  what: string,
  ctx: CheckContext,
  sink: FindingSink,
): void {
  // unset reads the prototype's 0: no presence check needed, 0 is "not populated" either way
  const raw = int64(msg.timestamp) ?? 0;
  if (raw <= 0) {
    sink.add('W001', entity, (w) => `${w} without a timestamp`, what);
    return;
  }
  const ms = timestampMs(raw);
  const header = ctx.header_ms;
  if (header !== null && ms > header) {
    sink.add(
      'E012',
      entity,
      (w, t, h) => `${w} timestamp ${isoOf(t)} is after the header's, ${isoOf(h)}`,
      what,
      ms,
      header,
    );
  }
  const now = ctx.now_ms;
  if (!isPosixSeconds(raw)) {
    sink.add(
      'E001',
      entity,
      (w, r) => `${w} timestamp ${r} is not POSIX seconds${r > 1e11 ? ' (milliseconds?)' : ''}`,
      what,
      raw,
    );
  } else if (now !== null && ms - now > FUTURE_TOLERANCE_MS) {
    sink.add(
      'E050',
      entity,
      (w, t, n) => `${w} timestamp ${isoOf(t)} is ${Math.round((t - n) / 1000)} s ahead`,
      what,
      ms,
      now,
    );
  }
}
