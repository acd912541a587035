// Performance measures per bus route, rail line and streetcar route from stop_events: on time,
// headways and bunching, excess wait, travel and dwell times, prediction accuracy, by day, ISO
// week or the whole period; the same parameters and retained window as reliability.
import type { Mode } from '../../core/types.ts';
import { performanceRollup, type PerformanceResult, type PerformanceSettings } from '../../store/performance/index.ts';
import type { RouteDef } from '../types.ts';
import { PerformanceRollupSchema } from './performance-schemas.ts';
import { rollupRoutes, type RollupKind, type RollupRouteDeps } from './rollup-route.ts';

export interface PerformanceRouteDeps extends RollupRouteDeps {
  /** config.performance */
  performance: PerformanceSettings;
}

const describe = (mode: Mode, subject: string): string =>
  `How the ${subject} ran, by day, ISO week or the whole period, from its stop events (each train or bus at each ` +
  'stop it served, with actual and scheduled times): on-time, early and late shares of arrivals, median headway ' +
  'beside the scheduled one, headways on time (0.75–1.25 × scheduled) and bunched (≤ 0.5 ×), excess wait, ' +
  'travel time of complete trips (median and 90th percentile), median dwell, and prediction accuracy by horizon. ' +
  'A figure from fewer than `meta.min_observations` observations is null and `notes` says why (never 0). ' +
  'Days are final with reliability (`final`); today and days not finalized are computed live. Parameters, ' +
  `retained window and errors as the reliability endpoint's; 404 not_found when no schedule nor history knows ` +
  `the ${mode === 'rail' ? 'line' : 'route'}.`;

/** GET /api/v1/{rail/{line},bus/{route_id},streetcar/{route_id}}/performance. */
export function performanceRoutes(deps: PerformanceRouteDeps): RouteDef[] {
  const kind: RollupKind<PerformanceResult> = {
    name: 'performance',
    summary: (subject) => `Performance of one ${subject}`,
    description: describe,
    response: PerformanceRollupSchema,
    compute: (asked) =>
      performanceRollup(deps.db, asked.query, deps.performance, {
        timezone: asked.timezone,
        serviceDayEnd: deps.settings.service_day_end,
        now: asked.now,
      }),
    meta: (result) => ({
      on_time_window_s: result.on_time_window_s,
      min_observations: result.min_observations,
    }),
  };
  return rollupRoutes(kind, deps);
}
