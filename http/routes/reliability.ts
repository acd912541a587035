// Reliability rollups per bus route, rail line and streetcar route: scheduled versus delivered
// trips by day, ISO week or the whole period, from the store's rollup queries.
import type { Mode } from '../../core/types.ts';
import { rollup, type RollupResult } from '../../store/reliability/index.ts';
import type { RouteDef } from '../types.ts';
import { ReliabilityRollupSchema } from './reliability-schemas.ts';
import { rollupRoutes, type RollupKind, type RollupRouteDeps } from './rollup-route.ts';

export type ReliabilityRouteDeps = RollupRouteDeps;

function describe(mode: Mode, subject: string): string {
  const retained =
    mode === 'bus'
      ? 'Before any bus trip is retained the window is today alone (live figures).'
      : `404 no_retained_rows while no ${mode} trip is retained.`;
  return (
    `Scheduled versus delivered trips of one ${subject} by day, ISO week or the whole period: ` +
    '`scheduled` (the denominator) and `delivered` (the numerator) are always present, `delivered_pct` is null ' +
    'when nothing was scheduled; `delivered_pct_of_observed` beside it counts only the scheduled trips a feed ' +
    'saw (`observed`), ' +
    'and `meta.notes` says when more than half were never observed. Also canceled (CANCELED or DELETED at any poll ' +
    'of the day), partially canceled ' +
    '(SKIPPED stops), unobserved, pending and added trips, and with group=day the rolling 7-day figures. ' +
    'Finalized days are final; today and days not finalized yet are live (`final: false`). ' +
    'Any past day the schedule covers can be asked for: it is expanded on demand and finalized when it ' +
    'has observations; ' +
    "days on which no trip was seen are listed in `meta.days_without_observations` and counted in each row's " +
    '`days_observed`. ' +
    `from/to must lie inside the retained window (\`meta.retained_window\`; 400 outside_retention names ` +
    `it). ${retained} ` +
    `404 not_found when neither a schedule nor the retained history knows the ${mode === 'rail' ? 'line' : 'route'}.`
  );
}

/** GET /api/v1/{rail/{line},bus/{route_id},streetcar/{route_id}}/reliability, in the specification's order. */
export function reliabilityRoutes(deps: ReliabilityRouteDeps): RouteDef[] {
  const kind: RollupKind<RollupResult> = {
    name: 'reliability',
    summary: (subject) => `Reliability of one ${subject}`,
    description: describe,
    response: ReliabilityRollupSchema,
    compute: (asked) =>
      rollup(deps.db, asked.query, {
        timezone: asked.timezone,
        serviceDayEnd: deps.settings.service_day_end,
        now: asked.now,
        historyFrom: asked.window.from,
      }),
  };
  return rollupRoutes(kind, deps);
}
