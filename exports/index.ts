// History exports and the analyst snapshot: what the composition root, the CLI (admin/operations/export-files.ts)
// and http/ use.
// Definitions for analysts: ./README.md.
export {
  DATASETS,
  EXPORT_DATASETS,
  EXPORT_FORMATS,
  FILE_EXTENSIONS,
  exportFileName,
  isExportDataset,
  isExportFormat,
  partSelect,
} from './datasets.ts';
export type { DatasetDefinition, DatasetPart, ExportColumn, ExportDataset, ExportFormat } from './datasets.ts';
export { serviceDayWindow } from '../core/dates.ts';
export type { ServiceDayWindow } from '../core/dates.ts';
export {
  getManifest,
  listManifests,
  MANIFEST_STATES,
  MAX_MANIFEST_PAGE,
} from './manifests.ts';
export type {
  ExportManifest,
  ManifestCursor,
  ManifestPage,
  ManifestQuery,
  ManifestState,
  SchemaColumn,
} from './manifests.ts';
export { downloadQuery, signDownload, verifyDownload } from './signed-url.ts';
export type { DownloadVerdict, SignedDownload } from './signed-url.ts';
export { exportEvent, recoverExports, runExport, runPending, MAX_EXPORT_RANGE_DAYS } from './job.ts';
export type {
  ExportFileResult,
  ExportProgress,
  ExportRunSummary,
  ExportSettings,
  FileOutcome,
  RecoverySummary,
  RunExportOptions,
} from './job.ts';
export { scheduleExports } from './export-cron.ts';
export type { ExportScheduler, ExportSchedulerOptions } from './export-cron.ts';
export { PRIVATE_TABLE, scheduleSnapshot, writeBackup, writeSnapshot } from './analyst-snapshot.ts';
export type { SnapshotJob, SnapshotJobOptions, SnapshotSummary, SnapshotTable } from './analyst-snapshot.ts';
export { contentTypeFor, exportFilePath } from './files.ts';
