import { componentLogger, type Logger } from '../core/logger.ts';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { ScheduleConfig } from '../core/config.ts';
import type { Db } from './db.ts';
import { importGtfs, type ImportSummary } from './gtfs-import.ts';
import { fetchGtfs, GtfsSourceError, type FetchedGtfs, type ProgressFn, type SourceValidators } from './gtfs-source.ts';
import { addDays, wallClock } from '../core/dates.ts';
import { liveInputsChanged } from './reliability/live.ts';
import { expandScheduleDays } from './reliability/scheduled-trips.ts';
import { loadScheduleIndex, loadScheduleIndexOn, type LoadedScheduleIndex } from './schedule-index.ts';
import {
  currentVersion,
  lastCheck,
  recordCheck,
  recordVersion,
  type CheckOutcome,
  type ScheduleVersion,
  type SourceCheck,
} from './schedule-versions.ts';
import { startCronJob, type CronJob } from '../core/cron-job.ts';

// Schedule versions and their refresh while serving. Each import is a version: fetched (a
// conditional GET for http(s), a hash for everything), staged and validated, then committed in
// one transaction with its version row, the re-expansion of today and later, and the read of
// the new in-memory index, which the caller swaps in right after the commit. A refresh whose
// copy did not change imports nothing; one that fails leaves the running version in place.

export interface VersionImportOptions {
  /** zone "today" is read in (days from today on are re-expanded); default the schedule's own */
  timezone?: string;
  /** days ahead expanded with the new version (reliability.horizon_days); default 7 */
  horizonDays?: number;
  now?: Date;
  /** also read the new ScheduleIndex inside the transaction, for a swap in memory */
  loadIndex?: boolean;
  onProgress?: ProgressFn;
  /**
   * `source` already fetched to this local zip or folder (`init` checks a download before it
   * imports it): read from there, recorded as `source`, so the URL is fetched once
   */
  localCopy?: string;
}

export interface ImportedVersion {
  version: ScheduleVersion;
  summary: ImportSummary;
  /** the new index when `loadIndex` was set */
  index: LoadedScheduleIndex | null;
  /** service days expanded with this version (today or yesterday to the horizon), null when none */
  expanded: { from: string; to: string } | null;
}

/**
 * Imports `source` as a new version of `scheduleId`, whatever the last copy was (the operator's
 * `import-gtfs`). Failures are recorded as the source's last check and thrown.
 */
export async function importScheduleVersion(
  db: Db,
  scheduleId: string,
  source: string,
  options: VersionImportOptions = {},
): Promise<ImportedVersion> {
  let fetched: FetchedGtfs;
  try {
    fetched = await fetchGtfs(options.localCopy ?? source, {}, options.onProgress);
  } catch (err) {
    await recordCheck(db, { scheduleId, source, outcome: 'failed', error: message(err) }).catch(() => undefined);
    throw err;
  }
  if (!fetched.changed) throw new Error('unreachable: an unconditional fetch answered not modified');
  try {
    const imported = await importFetched(db, scheduleId, source, fetched, options);
    await recordCheck(db, {
      scheduleId,
      source,
      outcome: 'imported',
      etag: fetched.etag,
      lastModified: fetched.last_modified,
      sha256: fetched.sha256,
    });
    return imported;
  } catch (err) {
    await recordCheck(db, { scheduleId, source, outcome: 'failed', error: message(err) }).catch(() => undefined);
    throw err;
  } finally {
    await fetched.cleanup();
  }
}

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

async function importFetched(
  db: Db,
  scheduleId: string,
  source: string,
  fetched: Extract<FetchedGtfs, { changed: true }>,
  options: VersionImportOptions,
): Promise<ImportedVersion> {
  const started = performance.now();
  let version: ScheduleVersion | null = null;
  let index: LoadedScheduleIndex | null = null;
  let expanded: ImportedVersion['expanded'] = null;
  const summary = await importGtfs(db, scheduleId, source, options.onProgress, {
    localPath: fetched.path,
    async beforeCommit(conn, loaded) {
      validate(loaded);
      version = await recordVersion(conn, {
        scheduleId,
        source,
        sha256: fetched.sha256,
        feedVersion: loaded.feed_version,
        feedStartDate: loaded.feed_start_date,
        feedEndDate: loaded.feed_end_date,
        importMs: Math.round(performance.now() - started),
      });
      if (version.service_start_date === null) {
        throw new GtfsSourceError(`schedule ${scheduleId} refused: its calendar gives no day of service`);
      }
      expanded = await reexpand(conn, scheduleId, loaded.timezone, options);
      if (options.loadIndex) index = await loadScheduleIndexOn(conn, scheduleId);
    },
  });
  // today's live figures were computed from the previous version's trips
  liveInputsChanged(db);
  return { version: version!, summary, index, expanded };
}

/** A feed that imports but could not serve anyone is refused before it replaces a working one. */
function validate(loaded: Omit<ImportSummary, 'ms'>): void {
  const rows = (file: keyof ImportSummary['tables']): number => loaded.tables[file]?.rows ?? 0;
  const empty = (['routes', 'stops', 'trips', 'stop_times'] as const).filter((f) => rows(f) === 0);
  if (empty.length) {
    throw new GtfsSourceError(
      `schedule ${loaded.schedule_id} refused: no usable rows in ${empty.map((f) => `${f}.txt`).join(', ')}`,
    );
  }
}

/**
 * Days from today (from yesterday for a schedule never expanded: it may still be running) to the
 * horizon are expanded with the new version; earlier days keep the version they were computed
 * with, and finalized days are never touched.
 */
async function reexpand(
  conn: DuckDBConnection,
  scheduleId: string,
  scheduleTz: string,
  options: VersionImportOptions,
): Promise<ImportedVersion['expanded']> {
  const today = wallClock(options.now ?? new Date(), options.timezone ?? scheduleTz).date;
  const yesterday = addDays(today, -1);
  const rows = (
    await conn.runAndReadAll(
      `SELECT (SELECT count(*) FROM schedule_days WHERE schedule_id = $id AND service_date = CAST($yesterday AS
        DATE)) AS had,
       (SELECT strftime(max(service_date), '%Y-%m-%d') FROM reliability_finalized) AS finalized`,
      { id: scheduleId, yesterday } as never,
    )
  ).getRowObjectsJS()[0]!;
  let from = Number(rows.had) > 0 ? today : yesterday;
  const finalized = rows.finalized as string | null;
  if (finalized !== null && finalized >= from) from = addDays(finalized, 1);
  const to = addDays(today, options.horizonDays ?? 7);
  if (from > to) return null;
  await expandScheduleDays(conn, scheduleId, from, to, scheduleTz);
  return { from, to };
}

export interface RefreshResult {
  schedule_id: string;
  outcome: CheckOutcome;
  /** the version serving after the refresh (the new one when imported); null when none was ever imported */
  version: ScheduleVersion | null;
  error: string | null;
  ms: number;
  /** set when a new version was imported */
  imported: ImportedVersion | null;
}

export interface RefreshOptions extends VersionImportOptions {
  /** import even when the copy is unchanged, and send no validators */
  force?: boolean;
}

/**
 * Checks one schedule's source and imports it when it changed: a 304 to the last copy's
 * validators, or the same SHA-256 as the version in use, imports nothing. Never throws for a bad
 * source: the failure is recorded (shown on /status) and returned.
 */
export async function refreshSchedule(
  db: Db,
  schedule: Pick<ScheduleConfig, 'id' | 'source'>,
  options: RefreshOptions = {},
): Promise<RefreshResult> {
  const started = performance.now();
  const id = schedule.id;
  const [version, check] = await Promise.all([currentVersion(db, id), lastCheck(db, id)]);
  const result = (
    outcome: CheckOutcome,
    current: ScheduleVersion | null,
    error: string | null,
    imported: ImportedVersion | null = null,
  ): RefreshResult => ({
    schedule_id: id,
    outcome,
    version: current,
    error,
    ms: Math.round(performance.now() - started),
    imported,
  });
  const failed = async (err: unknown): Promise<RefreshResult> => {
    await recordCheck(db, { scheduleId: id, source: schedule.source, outcome: 'failed', error: message(err) });
    return result('failed', version, message(err));
  };
  let fetched: FetchedGtfs;
  try {
    fetched = await fetchGtfs(
      schedule.source,
      options.force ? {} : validatorsFor(schedule.source, version, check),
      options.onProgress,
    );
  } catch (err) {
    return failed(err);
  }
  if (!fetched.changed) {
    await recordCheck(db, {
      scheduleId: id,
      source: schedule.source,
      outcome: 'not_modified',
      etag: check?.etag,
      lastModified: check?.last_modified,
      sha256: check?.sha256,
    });
    return result('not_modified', version, null);
  }
  try {
    const validators = { etag: fetched.etag, lastModified: fetched.last_modified, sha256: fetched.sha256 };
    if (!options.force && version?.sha256 === fetched.sha256) {
      await recordCheck(db, { scheduleId: id, source: schedule.source, outcome: 'unchanged', ...validators });
      return result('unchanged', version, null);
    }
    const imported = await importFetched(db, id, schedule.source, fetched, options);
    await recordCheck(db, { scheduleId: id, source: schedule.source, outcome: 'imported', ...validators });
    return result('imported', imported.version, null, imported);
  } catch (err) {
    return failed(err);
  } finally {
    await fetched.cleanup();
  }
}

/** The last copy's validators, only when that copy is the version in use from the same source. */
function validatorsFor(source: string, version: ScheduleVersion | null, check: SourceCheck | null): SourceValidators {
  if (!version?.sha256 || !check || check.source !== source || check.sha256 !== version.sha256) return {};
  return { etag: check.etag, last_modified: check.last_modified };
}

/** One schedule as /status and the operator commands show it: facts, judged by the status page. */
export interface ScheduleHealth {
  schedule_id: string;
  source: string;
  refresh_cron: string;
  version: ScheduleVersion | null;
  last_check: SourceCheck | null;
}

export interface ScheduleRefreshJob {
  /**
   * Checks one configured schedule now and swaps in a new version when its copy changed (the
   * admin channel's `import-gtfs` and config reload call this). A call while one runs joins it.
   */
  refreshSchedule(id: string, options?: { force?: boolean }): Promise<RefreshResult>;
  /**
   * A version was imported outside the job (`import-gtfs` through the admin socket, already
   * re-expanded by importScheduleVersion): reads its index from the store and swaps it in.
   */
  scheduleImported(id: string): Promise<void>;
  /** Applies a reloaded config: new and changed schedules are refreshed now; removed ones stop being refreshed. */
  update(schedules: readonly ScheduleConfig[]): Promise<RefreshResult[]>;
  /** in memory, for the status page: never waits on DuckDB */
  health(): readonly ScheduleHealth[];
  stop(): Promise<void>;
}

export interface ScheduleRefreshOptions {
  schedules: readonly ScheduleConfig[];
  /** zone of the cron expressions and of "today" */
  timezone: string;
  horizonDays: number;
  /** the new version is committed: swap its index in (synchronously, before the next poll reads it) */
  onSwap: (scheduleId: string, index: LoadedScheduleIndex, version: ScheduleVersion) => void | Promise<void>;
  log?: Logger;
  now?: () => Date;
}

/** Starts one node-cron task per schedule on its `refresh_cron`. */
export async function startScheduleRefresh(db: Db, options: ScheduleRefreshOptions): Promise<ScheduleRefreshJob> {
  const log = componentLogger(options.log, 'schedules');
  const now = options.now ?? (() => new Date());
  const configs = new Map<string, ScheduleConfig>();
  const tasks = new Map<string, CronJob>();
  const healths = new Map<string, ScheduleHealth>();
  const running = new Map<string, Promise<RefreshResult>>();
  let stopped = false;

  const readHealth = async (s: ScheduleConfig): Promise<void> => {
    const [version, check] = await Promise.all([currentVersion(db, s.id), lastCheck(db, s.id)]);
    if (configs.get(s.id) === s)
      healths.set(s.id, {
        schedule_id: s.id,
        source: s.source,
        refresh_cron: s.refresh_cron,
        version,
        last_check: check,
      });
  };

  const run = async (id: string, force: boolean): Promise<RefreshResult> => {
    const schedule = configs.get(id);
    if (!schedule) throw new RangeError(`schedule ${JSON.stringify(id)} is not configured`);
    const result = await refreshSchedule(db, schedule, {
      force,
      timezone: options.timezone,
      horizonDays: options.horizonDays,
      now: now(),
      loadIndex: true,
    });
    if (result.imported?.index) {
      await options.onSwap(id, result.imported.index, result.imported.version);
      const e = result.imported.expanded;
      log.info(
        {
          schedule: id,
          version: result.imported.version.version_id,
          trips: result.imported.version.trips,
          ...(e ? { re_expanded: `${e.from}..${e.to}` } : {}),
          ms: result.ms,
        },
        'schedule version swapped in',
      );
    } else if (result.outcome === 'failed') {
      log.warn(
        { schedule: id, version: result.version?.version_id ?? null, error: result.error },
        'refresh failed; the running version stays in place',
      );
    }
    await readHealth(schedule);
    return result;
  };

  const refresh = (id: string, force = false): Promise<RefreshResult> => {
    if (stopped) return Promise.reject(new Error('schedule refresh is stopped'));
    const inflight = running.get(id);
    if (inflight) return inflight;
    const job = run(id, force).finally(() => running.delete(id));
    running.set(id, job);
    return job;
  };

  const schedule = (s: ScheduleConfig): void => {
    configs.set(s.id, s);
    void tasks.get(s.id)?.stop();
    tasks.set(
      s.id,
      startCronJob({
        key: `schedules[${s.id}].refresh_cron`,
        expression: s.refresh_cron,
        timezone: options.timezone,
        name: `schedule-refresh-${s.id}`,
        log,
        failure: 'refresh failed',
        context: { schedule: s.id },
        run: () => refresh(s.id),
      }),
    );
  };

  for (const s of options.schedules) {
    schedule(s);
    await readHealth(s);
  }

  return {
    refreshSchedule: (id, opts = {}) => refresh(id, opts.force === true),
    async scheduleImported(id) {
      const version = await currentVersion(db, id);
      const index = await loadScheduleIndex(db, id);
      if (version) await options.onSwap(id, index, version);
      liveInputsChanged(db);
      const config = configs.get(id);
      if (config) await readHealth(config);
    },
    async update(schedules) {
      const next = new Map(schedules.map((s) => [s.id, s]));
      for (const id of [...configs.keys()]) {
        if (next.has(id)) continue;
        await tasks.get(id)?.stop();
        tasks.delete(id);
        configs.delete(id);
        healths.delete(id);
      }
      const fetchNow = schedules.filter((s) => configs.get(s.id)?.source !== s.source);
      for (const s of schedules) {
        const before = configs.get(s.id);
        if (before && before.source === s.source && before.refresh_cron === s.refresh_cron) continue;
        schedule(s);
        await readHealth(s);
      }
      const results: RefreshResult[] = [];
      for (const s of fetchNow) {
        await running.get(s.id)?.catch(() => undefined);
        results.push(await refresh(s.id));
      }
      return results;
    },
    health: () => [...healths.values()],
    async stop() {
      stopped = true;
      for (const task of tasks.values()) await task.stop();
      tasks.clear();
      await Promise.all([...running.values()].map((p) => p.catch(() => undefined)));
    },
  };
}
