// The Alert rules: its active periods' times, and what it says it applies to.
import { has, int64, type EntitySelectorMsg, type FeedEntityMsg } from '../gtfs-rt-types.ts';
import { isPosixSeconds, type CheckContext } from './context.ts';
import type { FindingSink } from './findings.ts';

const selects = (s: EntitySelectorMsg): boolean =>
  has(s, 'agency_id') ||
  has(s, 'route_id') ||
  has(s, 'route_type') ||
  has(s, 'stop_id') ||
  (s.trip != null && (has(s.trip, 'trip_id') || has(s.trip, 'route_id')));

export function checkAlert(entity: FeedEntityMsg, ctx: CheckContext, sink: FindingSink): void {
  const alert = entity.alert!;
  const id = entity.id || null;
  for (const period of alert.active_period ?? []) {
    for (const edge of ['start', 'end'] as const) {
      if (!has(period, edge)) continue;
      const raw = int64(period[edge]) ?? 0;
      if (!isPosixSeconds(raw)) sink.add('E001', id, () => `active_period.${edge} ${raw} is not POSIX seconds`);
    }
  }
  const selectors = alert.informed_entity ?? [];
  if (selectors.length === 0) {
    sink.add('E032', id, () => 'alert without informed_entity');
    return;
  }
  const schedule = ctx.lookups;
  for (const s of selectors) {
    if (!selects(s)) sink.add('E033', id, () => 'informed_entity names no agency, route, route type, trip or stop');
    if (s.stop_id && schedule && !schedule.stop(s.stop_id)) {
      sink.add('E011', id, () => `informed stop_id ${JSON.stringify(s.stop_id)} is not in the schedule`);
    }
  }
}
