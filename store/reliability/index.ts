// Reliability: scheduled trips per service date, trip outcomes, finalized days and rollups.
// Definitions and rules: ./README.md.
export { addDays, completeThrough, isServiceDate, wallClock } from '../../core/dates.ts';
export {
  refreshScheduledTrips,
  extendScheduledTrips,
  expandMissingDays,
  expandScheduleDays,
} from './scheduled-trips.ts';
export type { RefreshOptions, WindowOptions } from './scheduled-trips.ts';
export { finalizeServiceDay, finalizeDueDays, dueServiceDays } from './finalize.ts';
export { backfillServiceDays, preparePastDays, pastObservedDays } from './backfill.ts';
export type { FinalizeSummary, FinalizedRoute, DueOptions } from './finalize.ts';
export { scheduleFinalize, reliabilityEvent } from './job.ts';
export type { FinalizeJob, FinalizeJobOptions } from './job.ts';
export { rollup, RollupInputError, ROLLUP_GROUPS, MAX_ROLLUP_DAYS } from './rollup.ts';
export type {
  RollupQuery,
  RollupOptions,
  RollupResult,
  RollupRow,
  RollupCounts,
  RollingWindow,
  RollupGroup,
  ServiceDayType,
} from './rollup.ts';
export { retainedWindow, reliabilitySnapshot } from './window.ts';
export { isKnownRoute, reliabilityModes, reliabilityRouteIds, routeModes } from './known-route.ts';
export type { RetainedWindow, ReliabilitySnapshot, SnapshotRoute } from './window.ts';
export { resolveTimezone } from './timezone.ts';
export { liveInputsChanged, reliabilityReadVersion } from './live.ts';
