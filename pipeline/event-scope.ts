// What an event concerns (its envelope's modes, routes and lines), with route ids as served
// (core/served-ids.ts): the scope stream and webhook filters match.
import type { FeedConfig } from '../core/config.ts';
import { ScopeBuilder, scopeOf, type EventScope } from '../core/events.ts';
import type { ScheduleIndex } from '../core/ports.ts';
import type { ServedIds } from '../core/served-ids.ts';
import type { Alert } from '../core/types.ts';
import type { NormalizedPoll } from './normalize-feed.ts';

/** An alert's modes, and its route ids told apart as rail lines and bus or streetcar routes. */
export function alertScope(
  alert: Alert,
  feed: FeedConfig | undefined,
  schedule: ScheduleIndex | undefined,
  ids: ServedIds,
): EventScope {
  // without the schedule's word, a single-mode alert's routes are of its mode
  const fallback = alert.modes.length === 1 ? alert.modes[0]! : (feed?.mode ?? null);
  const s = ids.scopeOf(alert);
  const { routes, lines } = scopeOf(
    alert.routes.map((id) => ({ mode: schedule?.route(id)?.mode ?? fallback, id: ids.serve(s, 'route', id) })),
  );
  return { modes: alert.modes, routes, lines };
}

/** What one poll's rows concern: the scope of the feed's feed.stale, feed.recovered and rule events. */
export function scopeOfRows(
  feed: FeedConfig,
  rows: NormalizedPoll,
  schedule: ScheduleIndex | undefined,
  ids: ServedIds,
): EventScope {
  const route = (row: { feed_id: string; schedule_id?: string | null }, id: string | null) =>
    ids.serveNullable(ids.scopeOf(row), 'route', id);
  const scope = new ScopeBuilder();
  for (const v of rows.vehicles) scope.add(v.mode, route(v, v.route_id));
  for (const t of rows.trips) scope.add(t.mode, route(t, t.route_id));
  for (const a of rows.alerts) {
    const fallback = a.modes.length === 1 ? a.modes[0]! : (feed.mode ?? null);
    for (const m of a.modes) scope.add(m, null);
    for (const id of a.routes) scope.add(schedule?.route(id)?.mode ?? fallback, route(a, id));
  }
  return scope.build();
}
