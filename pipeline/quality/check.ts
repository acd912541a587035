// One decoded snapshot through every rule, in one pass over its entities. Pure: the caller gives
// the schedule, the clock and the snapshot before; findings go to the sink, nothing is changed.
import type { ScheduleIndex } from '../../core/ports.ts';
import { has, type FeedMessageMsg } from '../gtfs-rt-types.ts';
import { checkAlert } from './alerts.ts';
import { checkContext } from './context.ts';
import type { FindingSink } from './findings.ts';
import { IdTable } from './id-table.ts';
import { checkHeader, checkSequence, type PreviousSnapshot, type SequenceOptions } from './header.ts';
import { checkTripUpdate } from './trip-updates.ts';
import { checkVehicle } from './vehicles.ts';

export interface SnapshotInput {
  message: FeedMessageMsg;
  sha256: string;
  /** rules naming trips, routes, stops, the area or shapes run only with it */
  schedule?: ScheduleIndex;
  /** this server's clock when the body was received; null: W008 and E050 are not evaluated */
  now_ms: number | null;
  /** the feed's snapshot before this one; null: E017, E018 and W007 are not evaluated */
  previous: PreviousSnapshot | null;
  sequence?: SequenceOptions;
}

/** The snapshot's vehicle ids (E052): one table reused for its arrays, as checks run one at a time. */
const vehicleIds = new IdTable<null>();

/** What the next snapshot of the feed compares itself with, and what this one carries (counted in the same pass). */
export interface CheckedSnapshot extends PreviousSnapshot {
  vehicles: number;
  trip_updates: number;
  alerts: number;
}

/** Checks the snapshot. */
export function checkSnapshot(input: SnapshotInput, sink: FindingSink): CheckedSnapshot {
  const { message } = input;
  const ctx = checkContext(message, input.schedule, input.now_ms);
  checkHeader(message, ctx, sink);
  const current = { header_ms: ctx.header_ms, sha256: input.sha256, vehicles: 0, trip_updates: 0, alerts: 0 };
  checkSequence(current, input.previous, input.sequence ?? { gap: false, interval_s: null }, sink);
  vehicleIds.clear(message.entity?.length ?? 0);
  for (const entity of message.entity ?? []) {
    if (ctx.full_dataset && has(entity, 'is_deleted')) {
      sink.add('E039', entity.id || null, (d) => `is_deleted (${d}) in a FULL_DATASET feed`, entity.is_deleted);
    }
    if (entity.trip_update) {
      current.trip_updates++;
      checkTripUpdate(entity, ctx, sink);
    }
    if (entity.vehicle) {
      current.vehicles++;
      checkVehicle(entity, ctx, sink, vehicleIds);
    }
    if (entity.alert) {
      current.alerts++;
      checkAlert(entity, ctx, sink);
    }
  }
  return current;
}
