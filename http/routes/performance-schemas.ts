// Response shape of the performance measures. Each named schema becomes an OpenAPI component.
import { z } from 'zod';
import 'zod-openapi';
import { PREDICTION_HORIZONS } from '../../core/types.ts';
import { count, rollupMeta, rollupRowFields } from './rollup-schemas.ts';
const pct = (description: string, example: number) =>
  z.number().min(0).max(100).nullable().meta({ description, example });
const seconds = (description: string, example: number) => z.number().int().nullable().meta({ description, example });
const FEW = 'null when fewer than `meta.min_observations` observations (a note in `notes` says so), never 0';

export const PredictionAccuracySchema = z
  .object({
    horizon: z.enum(PREDICTION_HORIZONS).meta({
      description: 'How long before the arrival the predictions were made: 0–3, 3–6, 6–12 or 12–30 minutes.',
    }),
    predictions: count(
      'Prediction samples judged: one per stop per 30 s of polls, against a vehicle-reported arrival.',
    ),
    accurate_pct: pct(
      "Share within TransitMatters' bounds: 0–3 min 60 s early to 60 s late, 3–6 min 90 s early to 120 s late, " +
        `6–12 min 150 s early to 210 s late, 12–30 min 240 s early to 360 s late; ${FEW}.`,
      81.2,
    ),
    median_abs_error_s: seconds(`Median absolute error, seconds; ${FEW}.`, 42),
  })
  .meta({ id: 'PredictionAccuracy' });

export const PerformanceRowSchema = z
  .object({
    ...rollupRowFields({
      final:
        'Every day of the row is finalized (with reliability): its figures no longer change. false while a day runs ' +
        'or waits for the job.',
      days_observed: 'Days of the row with at least one stop event of the route.',
    }),
    observed_stop_events: count('Stop events of the route with an actual time (store/SCHEMA.md, stop_events).'),
    delays_observed: count('Stop events with an arrival delay (actual and scheduled arrival).'),
    on_time_pct: pct(
      `Arrival delays within \`meta.on_time_window_s\` (default −60 s to +300 s; config ` +
        `performance.on_time_window_s); ${FEW}.`,
      87.5,
    ),
    early_pct: pct(`Arrival delays earlier than the window; ${FEW}.`, 2.1),
    late_pct: pct(`Arrival delays later than the window; ${FEW}.`, 10.4),
    headways_observed: count(
      'Departures with a headway: since the previous departure of the route and direction from the station.',
    ),
    median_headway_s: seconds(`Median headway, seconds; ${FEW}.`, 610),
    scheduled_median_headway_s: seconds(`Median scheduled headway beside them, seconds; ${FEW}.`, 600),
    headway_on_time_pct: pct(`Headways within 0.75–1.25 × the scheduled headway; ${FEW}.`, 71.3),
    bunched_pct: pct(`Headways of at most 0.5 × the scheduled headway; ${FEW}.`, 6.8),
    excess_wait_s: seconds(
      `Actual minus scheduled average wait of a rider arriving at random, Σh² / 2Σh, over the headways that have a ` +
        `scheduled one; ${FEW}.`,
      48,
    ),
    complete_trips: count("Trips whose first stop's departure and last stop's arrival were both measured."),
    median_travel_time_s: seconds(`Median first-to-last-stop time of complete trips, seconds; ${FEW}.`, 3_540),
    p90_travel_time_s: seconds(`90th percentile of it (linear interpolation), seconds; ${FEW}.`, 3_960),
    dwells_observed: count('Stop events with a dwell time (arrival and departure both measured).'),
    median_dwell_s: seconds(`Median dwell, seconds; ${FEW}.`, 35),
    prediction_accuracy: z
      .array(PredictionAccuracySchema)
      .meta({ description: 'One entry per horizon, 0–3, 3–6, 6–12, 12–30 minutes, in that order.' }),
    notes: z.array(z.string()).meta({
      description: 'Which figures of the row are null and why (too few observations); empty when none is.',
    }),
  })
  .meta({ id: 'PerformanceRow' });

export const PerformanceRollupSchema = z
  .object({
    data: z.array(PerformanceRowSchema).meta({
      description: 'One row per group (and service day type with split), in date order.',
    }),
    meta: rollupMeta(
      {
        days_without_observations: 'Service dates of from..to, up to today, without any stop event of the route.',
        notes: 'Caveats about the figures in words (days without observations); empty when there are none.',
      },
      {
        on_time_window_s: z
          .tuple([z.number().int(), z.number().int()])
          .meta({ description: 'Arrival delays counted on time, seconds: [early, late].', example: [-60, 300] }),
        min_observations: count('Fewest observations a figure is computed from; fewer give null.'),
      },
    ),
  })
  .meta({ id: 'PerformanceRollup' });

export type ApiPerformanceRollup = z.input<typeof PerformanceRollupSchema>;
