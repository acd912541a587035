// A row of the performance measures as the store computes it and the API and dashboard show it
// (without the API's row id). Here, not in the store, so that the dashboard's browser code can
// name it: core/ imports nothing.
import type { PredictionHorizon } from './types.ts';

export interface PredictionAccuracy {
  horizon: PredictionHorizon;
  /** prediction samples judged (one per 30 s of polls per stop) */
  predictions: number;
  /** share within TransitMatters' bounds for the horizon, 0–100; null with too few */
  accurate_pct: number | null;
  median_abs_error_s: number | null;
}

export interface PerformanceRow {
  route_id: string;
  period: string;
  period_start: string;
  period_end: string;
  service_day: 'all' | 'weekday' | 'saturday' | 'sunday';
  days: number;
  final: boolean;
  /** days of the row with at least one stop event of the route */
  days_observed: number;
  observed_stop_events: number;
  delays_observed: number;
  on_time_pct: number | null;
  early_pct: number | null;
  late_pct: number | null;
  headways_observed: number;
  median_headway_s: number | null;
  scheduled_median_headway_s: number | null;
  headway_on_time_pct: number | null;
  bunched_pct: number | null;
  excess_wait_s: number | null;
  complete_trips: number;
  median_travel_time_s: number | null;
  p90_travel_time_s: number | null;
  dwells_observed: number;
  median_dwell_s: number | null;
  prediction_accuracy: PredictionAccuracy[];
  /** why figures of this row are null */
  notes: string[];
}
