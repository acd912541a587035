// History exports for analysts (Max plan): the manifest catalogue with signed, expiring download
// links, and the download itself. Test keys get no bulk data (403): a test key is for building an
// integration, and a history export is a copy of the production record.
import { z } from 'zod';
import { ApiError, invalidParameter } from '../../core/errors.ts';
import {
  EXPORT_DATASETS,
  EXPORT_FORMATS,
  MANIFEST_STATES,
  contentTypeFor,
  downloadQuery,
  exportFilePath,
  getManifest,
  listManifests,
  signDownload,
  verifyDownload,
  type ExportManifest,
} from '../../exports/index.ts';
import type { Db } from '../../store/db.ts';
import { stringKey } from '../cursor.ts';
import { fileDownload, FileMismatchError } from '../file-download.ts';
import { dateParam, enumParam, idValue } from '../params.ts';
import type { Logger } from '../../core/logger.ts';
import { defineRoute } from '../route.ts';
import type { RequestContext, RouteDef } from '../types.ts';
import { PREFIX } from './deps.ts';
import { cursorPageSchema } from './schemas.ts';
import { isoRequired } from '../../core/dates.ts';

const BASE = `${PREFIX}/history/exports`;
const TAGS = ['History exports'];
/**
 * Links expire on a whole minute: every listing within the same minute signs the same URLs, so
 * list responses stay cacheable (ETag) and a page reload does not change every button.
 */
const EXPIRY_GRANULARITY_S = 60;

export interface ExportRouteDeps {
  db: Db;
  /** exports.dir */
  dir: string;
  /** the server's signing secret (config.signing_secret, or one generated per process) */
  secret: string | Buffer;
  /** exports.url_ttl_s: how long a download link works */
  ttlS: number;
  /** public_base_url without a trailing slash; empty gives root-relative links */
  baseUrl?: string;
  log?: Logger;
}

const ColumnSchema = z
  .object({
    name: z.string(),
    type: z
      .string()
      .meta({ description: 'DuckDB type of the column, e.g. TIMESTAMP WITH TIME ZONE, VARCHAR, DOUBLE.' }),
  })
  .meta({ id: 'ExportColumn' });

export const ExportFileSchema = z
  .object({
    id: z.string().meta({
      description: 'The file name, unique per dataset part, day and format.',
      example: 'realtime-arrivals-2024-05-01.parquet',
    }),
    dataset: z.enum(EXPORT_DATASETS),
    part: z.string().meta({ description: 'Table within the dataset (realtime has arrivals and vehicle_positions).' }),
    service_date: z
      .string()
      .meta({ description: 'Service day (agency time zone) the rows belong to.', example: '2024-05-01' }),
    format: z.enum(EXPORT_FORMATS),
    state: z
      .enum(MANIFEST_STATES)
      .meta({ description: '`pending` → `running` → `ready` | `failed`. Only `ready` files can be downloaded.' }),
    rows: z.number().int().nullable(),
    bytes: z.number().int().nullable(),
    sha256: z
      .string()
      .nullable()
      .meta({ description: 'Hex SHA-256 of the file as downloaded (the .gz bytes for NDJSON).' }),
    schema: z.array(ColumnSchema).nullable().meta({ description: 'Columns and their types, as written.' }),
    created_at: z.string().nullable().meta({ description: 'When the file was completed.' }),
    error: z.string().nullable().meta({ description: 'Why the last attempt failed (state `failed`).' }),
    content_type: z.string().meta({
      description: '`application/vnd.apache.parquet` or `application/gzip` (gzip bytes, no Content-Encoding).',
    }),
    download: z
      .object({
        url: z.string().meta({
          description: 'Signed link; needs no key. Anyone holding it can download the file until it expires.',
        }),
        expires_at: z.string(),
      })
      .nullable()
      .meta({ description: 'Present when the file is ready.' }),
  })
  .meta({ id: 'ExportFile' });

export const ExportPageSchema = cursorPageSchema(ExportFileSchema, 'ExportPage');

const exportParams = z.object({ export_id: idValue('Export file id, as listed.', 'alerts-2024-05-01.ndjson.gz') });

function signedLink(
  deps: ExportRouteDeps,
  manifest: ExportManifest,
  nowMs: number,
): { url: string; expires_at: string } {
  const expiresS = Math.ceil((nowMs / 1000 + deps.ttlS) / EXPIRY_GRANULARITY_S) * EXPIRY_GRANULARITY_S;
  const query = downloadQuery(signDownload(deps.secret, manifest.id, expiresS));
  return {
    url: `${deps.baseUrl ?? ''}${BASE}/${encodeURIComponent(manifest.id)}/download?${query}`,
    expires_at: isoRequired(expiresS * 1000),
  };
}

function present(deps: ExportRouteDeps, m: ExportManifest, nowMs: number): z.input<typeof ExportFileSchema> {
  return {
    id: m.id,
    dataset: m.dataset,
    part: m.part,
    service_date: m.service_date,
    format: m.format,
    state: m.state,
    rows: m.rows,
    bytes: m.bytes,
    sha256: m.sha256,
    schema: m.schema,
    created_at: m.created_at,
    error: m.error,
    content_type: contentTypeFor(m.format),
    download: m.state === 'ready' ? signedLink(deps, m, nowMs) : null,
  };
}

function manifestCursor(ctx: Pick<RequestContext, 'page'>): [string, string] | undefined {
  const after = ctx.page?.after ?? null;
  if (after === null) return undefined;
  const [date, id] = stringKey(after, 2);
  return [date!, id!];
}

export function exportRoutes(deps: ExportRouteDeps): RouteDef[] {
  const list = defineRoute({
    id: 'listHistoryExports',
    method: 'GET',
    path: BASE,
    summary: 'List history export files',
    description:
      'The export catalogue, newest service day first: one file per dataset part, service day and format, written by ' +
      'the daily export job as typed Parquet (zstd) and gzipped NDJSON. Each ready file carries its row count, byte ' +
      'count, SHA-256, column types and a signed download link that works without a key until `expires_at` ' +
      '(exports.url_ttl_s, default one hour). Max plan only; test keys are refused (403 `forbidden_plan`) because a ' +
      'history export is a copy of the production record. Lists `ready` files unless `state` asks for others.',
    tags: TAGS,
    auth: 'key',
    plan: 'max',
    testKeys: false,
    meter: 'request',
    noStore: true,
    paginated: true,
    query: z.object({
      dataset: enumParam(EXPORT_DATASETS, 'Only this dataset.').optional(),
      format: enumParam(EXPORT_FORMATS, 'Only this format.').optional(),
      from: dateParam('First service day, inclusive.').optional(),
      to: dateParam('Last service day, inclusive.').optional(),
      state: enumParam(MANIFEST_STATES, 'Files in this state (default `ready`).').optional(),
    }),
    response: ExportPageSchema,
    async handler(ctx) {
      const page = ctx.page;
      if (!page) throw new Error('listHistoryExports must be declared paginated');
      const { dataset, format, from, to, state } = ctx.query;
      if (from !== undefined && to !== undefined && from > to)
        throw invalidParameter('to', `must not be before from (${from})`);
      const cursor = manifestCursor(ctx);
      const found = await listManifests(deps.db, {
        limit: page.limit,
        state: state ?? 'ready',
        ...(dataset !== undefined ? { dataset } : {}),
        ...(format !== undefined ? { format } : {}),
        ...(from !== undefined ? { from } : {}),
        ...(to !== undefined ? { to } : {}),
        ...(cursor !== undefined ? { cursor } : {}),
      });
      const next = found.next_cursor === null ? null : page.cursorFor([...found.next_cursor]);
      return {
        data: found.items.map((m) => present(deps, m, ctx.nowMs)),
        meta: { limit: page.limit, next_cursor: next },
        links: { self: ctx.url(), next: next === null ? null : ctx.url({ cursor: next }) },
      };
    },
  });

  const get = defineRoute({
    id: 'getHistoryExport',
    method: 'GET',
    path: `${BASE}/{export_id}`,
    summary: 'One history export file',
    description:
      "The file's manifest with a fresh signed download link (when ready). Max plan only; not for test keys.",
    tags: TAGS,
    auth: 'key',
    plan: 'max',
    testKeys: false,
    meter: 'request',
    noStore: true,
    errors: ['not_found'],
    params: exportParams,
    response: ExportFileSchema,
    async handler(ctx) {
      const manifest = await getManifest(deps.db, ctx.params.export_id);
      if (!manifest) throw new ApiError('not_found', `No export file ${ctx.params.export_id}.`);
      return present(deps, manifest, ctx.nowMs);
    },
  });

  const download = defineRoute({
    id: 'downloadHistoryExport',
    method: 'GET',
    path: `${BASE}/{export_id}/download`,
    summary: 'Download an export file (signed link)',
    description:
      "The file's bytes, exactly what the manifest's `sha256` and `bytes` describe: Parquet as " +
      '`application/vnd.apache.parquet`, NDJSON as `application/gzip` (no Content-Encoding, so nothing on the way ' +
      "unpacks it). Authorised by the link's `expires` and `signature`, not by a key, so browsers and `curl -O` can " +
      'fetch it; not metered. A link whose signature does not match (any part altered) is refused with 403 ' +
      '`invalid_signature`, an expired one with 403 `link_expired`. `ETag` is the quoted SHA-256 and `Repr-Digest` ' +
      'its RFC 9530 form; a single `Range` resumes a download (206), `If-None-Match` revalidates (304).',
    tags: TAGS,
    auth: 'none',
    meter: null,
    contentType: 'application/octet-stream',
    download: { contentTypes: [contentTypeFor('parquet'), contentTypeFor('ndjson.gz')] },
    errors: ['invalid_signature', 'link_expired', 'not_found', 'range_not_satisfiable'],
    params: exportParams,
    query: z.object({
      expires: z
        .string()
        .max(20)
        .meta({
          description:
            'Expiry of the link in epoch seconds, like every epoch value of the API (from the listing). Links of the ' +
            'earlier millisecond form are refused with 403 `invalid_signature`; list the exports again ' +
            'for a fresh one.',
          example: '1714585560',
        }),
      signature: z.string().max(100).meta({ description: 'Signature of the link (from the listing).' }),
    }),
    response: z.string().meta({ description: 'The file.' }),
    async handler(ctx) {
      const verdict = verifyDownload(
        deps.secret,
        {
          manifestId: ctx.params.export_id,
          expires: ctx.query.expires,
          signature: ctx.query.signature,
        },
        ctx.nowMs,
      );
      if (!verdict.ok) {
        if (verdict.reason === 'expired') {
          throw new ApiError('link_expired', 'This download link has expired; list the exports again for a fresh one.');
        }
        throw new ApiError(
          'invalid_signature',
          'This download link is not valid: it was altered or not issued by this server.',
        );
      }
      const manifest = await getManifest(deps.db, verdict.manifestId);
      if (manifest?.state !== 'ready' || manifest.bytes === null || manifest.sha256 === null) {
        throw new ApiError(
          'not_found',
          `Export file ${verdict.manifestId} is not available (it is being rewritten or was removed).`,
        );
      }
      const remainingS = Math.max(0, Math.floor(verdict.expiresS - ctx.nowMs / 1000));
      try {
        return await fileDownload(
          {
            path: exportFilePath(deps.dir, manifest),
            bytes: manifest.bytes,
            sha256: manifest.sha256,
            contentType: contentTypeFor(manifest.format),
            filename: manifest.id,
            lastModified: manifest.created_at ? new Date(manifest.created_at) : null,
          },
          ctx.headers,
          [['Cache-Control', `private, max-age=${remainingS}, no-transform`]],
        );
      } catch (err) {
        if (!(err instanceof FileMismatchError)) throw err;
        // the export job's start-up recovery requeues such files; until then the file does not exist
        deps.log?.error({ err, export: manifest.id }, 'export is listed ready but its file does not match');
        throw new ApiError('not_found', `Export file ${manifest.id} is not available right now.`);
      }
    },
  });

  return [list, get, download];
}
