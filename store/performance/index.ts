// Performance measures per route from stop_events: on time, headways, bunching, excess wait,
// travel and dwell times, prediction accuracy. Definitions: store/SCHEMA.md (`stop_events`,
// `performance_days`) and the API's descriptions.
export { performanceDayRows, storePerformanceDay } from './day.ts';
export { performanceRollup } from './rollup.ts';
export type {
  PerformanceOptions,
  PerformanceQuery,
  PerformanceResult,
  PerformanceRow,
  PerformanceSettings,
  PredictionAccuracy,
} from './rollup.ts';
