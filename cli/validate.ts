// `transit-api validate`: GTFS-Realtime files, folders and URLs through the feed rules
// (pipeline/quality), with no database and no running service. A body that is not a FeedMessage
// is a finding of its own (T001) saying what it is instead; a source that cannot be read at all
// stops the run before anything is validated (the command exits 2).
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import type { ScheduleIndex } from '../core/ports.ts';
import { decodeFeedMessage } from '../pipeline/decode.ts';
import { fetchBody, type FetchFn } from '../pipeline/fetch-feed.ts';
import type { FeedMessageMsg } from '../pipeline/gtfs-rt-types.ts';
import { checkSnapshot, type CheckedSnapshot } from '../pipeline/quality/check.ts';
import { ListSink, type Finding } from '../pipeline/quality/findings.ts';
import type { PreviousSnapshot } from '../pipeline/quality/header.ts';
import { ruleSpec, RULES, type RuleId, type Severity } from '../pipeline/quality/rules.ts';
import { describeBody } from './init/sniff.ts';
import { iso } from '../core/dates.ts';

/** A source that cannot be read: a missing path, a folder without access, a URL that fails. */
export class SourceError extends Error {}

export type Source = { kind: 'file'; path: string } | { kind: 'url'; url: string };

export interface SnapshotReport {
  source: string;
  /** what the message carries ("14 vehicles"), or null when it is not a FeedMessage */
  content: string | null;
  entities: number;
  header_timestamp: string | null;
  findings: Finding[];
}

export interface RuleSummary {
  rule: RuleId;
  severity: Severity;
  title: string;
  findings: number;
  /** snapshots it fired in */
  snapshots: number;
  example: { source: string; entity_id: string | null };
}

export interface ValidateSummary {
  snapshots: number;
  /** snapshots with at least one finding */
  with_findings: number;
  errors: number;
  warnings: number;
  /** in RULES order (errors by id, then warnings) */
  rules: RuleSummary[];
}

export interface ValidateOptions {
  schedule?: ScheduleIndex;
  /** the sources are consecutive snapshots of one feed: E017, E018 and W007 compare each with the one before */
  series?: boolean;
  /** headers for URL sources (an API key) */
  headers?: Record<string, string>;
  fetch?: FetchFn;
  now?: () => number;
  onSnapshot?: (report: SnapshotReport) => void;
}

const URL_TIMEOUT_MS = 30_000;
const URL_MAX_BYTES = 256 * 1024 ** 2;

/** Each argument as sources: a URL, a file, or every file under a folder (sorted by name, hidden ones left out). */
export function resolveSources(args: readonly string[]): Source[] {
  const out: Source[] = [];
  const walk = (path: string): void => {
    let isDir: boolean;
    try {
      isDir = statSync(path).isDirectory();
    } catch (err) {
      throw unreadable(path, err);
    }
    if (!isDir) {
      out.push({ kind: 'file', path });
      return;
    }
    let names: string[];
    try {
      names = readdirSync(path).sort();
    } catch (err) {
      throw unreadable(path, err);
    }
    for (const name of names) if (!name.startsWith('.')) walk(join(path, name));
  };
  for (const arg of args) {
    if (/^https?:\/\//i.test(arg)) out.push({ kind: 'url', url: arg });
    else walk(arg.startsWith('file://') ? fileURLToPath(arg) : arg);
  }
  return out;
}

function unreadable(path: string, err: unknown): SourceError {
  const e = err as NodeJS.ErrnoException;
  if (e.code === 'ENOENT') return new SourceError(`no such file or folder: ${path}`);
  if (e.code === 'EACCES') return new SourceError(`cannot read ${path}: permission denied`);
  return new SourceError(`cannot read ${path}: ${e.message}`);
}

const GZIP = [0x1f, 0x8b];

type Inspected = { ok: true; message: FeedMessageMsg } | { ok: false; reason: string };

/** The FeedMessage in a body (gzip taken off first), or what the body is instead, in words. */
export function inspectBody(bytes: Uint8Array): Inspected {
  if (bytes.length >= 2 && bytes[0] === GZIP[0] && bytes[1] === GZIP[1]) {
    let inner: Uint8Array;
    try {
      inner = gunzipSync(bytes);
    } catch (err) {
      return { ok: false, reason: `a gzip stream that does not inflate (${(err as Error).message})` };
    }
    const found = inspectBody(inner);
    return found.ok ? found : { ok: false, reason: `gzip-compressed, and inside it: ${found.reason}` };
  }
  const decoded = decodeFeedMessage(bytes);
  if (decoded.ok) return decoded;
  if (decoded.reason === 'base64_body') return { ok: false, reason: decoded.error };
  if (decoded.reason === 'truncated_body') return { ok: false, reason: `cut short: ${decoded.error}` };
  const looks = describeBody(bytes);
  if (looks?.kind === 'zip') return { ok: false, reason: 'a ZIP archive (a static GTFS goes to --schedule)' };
  if (looks) return { ok: false, reason: `${looks.what}${looks.hint ? `: ${looks.hint}` : ''}` };
  return { ok: false, reason: `binary data that is not a FeedMessage: ${decoded.error}` };
}

/** What a snapshot carries, from the counts its check made on the way. */
function contentOf({ vehicles, trip_updates: tripUpdates, alerts }: CheckedSnapshot): string {
  const parts = [
    tripUpdates ? `${tripUpdates} trip update${tripUpdates === 1 ? '' : 's'}` : '',
    vehicles ? `${vehicles} vehicle${vehicles === 1 ? '' : 's'}` : '',
    alerts ? `${alerts} alert${alerts === 1 ? '' : 's'}` : '',
  ].filter(Boolean);
  return parts.length ? parts.join(', ') : 'no entities';
}

async function readSource(
  source: Source,
  options: ValidateOptions,
): Promise<{ bytes: Uint8Array; at_ms: number | null }> {
  if (source.kind === 'file') {
    try {
      return { bytes: readFileSync(source.path), at_ms: null };
    } catch (err) {
      throw unreadable(source.path, err);
    }
  }
  const raw = await (options.fetch ?? fetchBody)({
    url: source.url,
    timeout_ms: URL_TIMEOUT_MS,
    max_bytes: URL_MAX_BYTES,
    headers: options.headers ?? {},
    etag: null,
    last_modified: null,
  });
  if (raw.kind === 'not_modified') throw new SourceError(`${source.url} answered 304 Not Modified to a plain GET`);
  if (raw.kind === 'failed') throw new SourceError(`cannot read ${source.url}: ${raw.error}`);
  // polled now: the clock rules (W008, E050) apply, as on a live poll
  return { bytes: raw.body, at_ms: (options.now ?? Date.now)() };
}

const nameOf = (s: Source): string => (s.kind === 'file' ? s.path : s.url);

/** Validates every source in order; reports each snapshot as it goes, then the summary. */
export async function validateSources(
  sources: readonly Source[],
  options: ValidateOptions = {},
): Promise<ValidateSummary> {
  const tallies = new Map<RuleId, RuleSummary>();
  const summary: ValidateSummary = { snapshots: 0, with_findings: 0, errors: 0, warnings: 0, rules: [] };
  let previous: PreviousSnapshot | null = null;
  let gap = false;
  for (const source of sources) {
    const { bytes, at_ms } = await readSource(source, options);
    const name = nameOf(source);
    const sink = new ListSink();
    const found = inspectBody(bytes);
    let report: SnapshotReport;
    if (!found.ok) {
      sink.add('T001', null, () => found.reason);
      report = { source: name, content: null, entities: 0, header_timestamp: null, findings: sink.findings };
      gap = true;
    } else {
      const message = found.message;
      const current = checkSnapshot(
        {
          message,
          // only the sequence rules compare hashes: none computed for files checked one by one
          sha256: options.series ? createHash('sha256').update(bytes).digest('hex') : '',
          schedule: options.schedule,
          now_ms: at_ms,
          previous: options.series ? previous : null,
          sequence: { gap, interval_s: null },
        },
        sink,
      );
      previous = current;
      gap = false;
      report = {
        source: name,
        content: contentOf(current),
        entities: message.entity?.length ?? 0,
        header_timestamp: iso(current.header_ms),
        findings: sink.findings,
      };
    }
    summary.snapshots++;
    if (report.findings.length) summary.with_findings++;
    const inThis = new Set<RuleId>();
    for (const f of report.findings) {
      if (f.severity === 'error') summary.errors++;
      else summary.warnings++;
      let tally = tallies.get(f.rule);
      if (!tally) {
        const spec = ruleSpec(f.rule)!;
        tally = {
          rule: f.rule,
          severity: spec.severity,
          title: spec.title,
          findings: 0,
          snapshots: 0,
          example: { source: name, entity_id: f.entity_id },
        };
        tallies.set(f.rule, tally);
      }
      tally.findings++;
      if (!inThis.has(f.rule)) {
        inThis.add(f.rule);
        tally.snapshots++;
      }
    }
    options.onSnapshot?.(report);
  }
  summary.rules = RULES.flatMap((r) => tallies.get(r.id) ?? []);
  return summary;
}
