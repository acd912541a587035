// What a download handler needs: where a ready file is and how to label it.
import { resolve, sep } from 'node:path';
import type { ExportFormat } from './datasets.ts';
import type { ExportManifest } from './manifests.ts';

/**
 * Media type of the stored bytes. A .ndjson.gz file is served as gzip bytes (no
 * Content-Encoding), so the client receives exactly what the manifest's sha256 covers.
 */
export function contentTypeFor(format: ExportFormat): string {
  return format === 'parquet' ? 'application/vnd.apache.parquet' : 'application/gzip';
}

/** Absolute path of a manifest's file; refuses paths that would leave `dir`. */
export function exportFilePath(dir: string, manifest: Pick<ExportManifest, 'file_path'>): string {
  const root = resolve(dir);
  const path = resolve(root, manifest.file_path);
  if (!path.startsWith(root + sep))
    throw new RangeError(`export file path escapes the export folder: ${manifest.file_path}`);
  return path;
}
