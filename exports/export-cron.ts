// The daily export job: at exports.cron (agency time zone) it queues the last finished service
// day's files, retries recent failures, and runs every queued file whose day is complete. A day
// without service data (the service was not running, or read no feed) gets no files.
// Reliability files wait for the reliability job; its reliability.updated event wakes this job.
import { componentLogger, type Logger } from '../core/logger.ts';
import type { Config } from '../core/config.ts';
import type { EventBus } from '../core/events.ts';
import type { Db } from '../store/db.ts';
import { addDays, completeThrough, serviceDayWindow } from '../core/dates.ts';
import { resolveTimezone } from '../store/reliability/timezone.ts';
import {
  recoverExports,
  runPending,
  type ExportFileResult,
  type ExportProgress,
  type ExportSettings,
  type RecoverySummary,
} from './job.ts';
import {
  enqueueManifests,
  manifestId,
  manifestKeyOf,
  manifestKeys,
  manifestsInState,
  type ManifestKey,
} from './manifests.ts';
import { noServiceDataReason } from './service-data.ts';
import { assertCronExpression, startCronJob } from '../core/cron-job.ts';

export interface ExportScheduler {
  readonly timezone: string;
  /** what start-up recovery found */
  readonly recovered: RecoverySummary;
  /** one pass: queue the last finished service day, retry recent failures, run what is due */
  runOnce(): Promise<ExportFileResult[]>;
  stop(): Promise<void>;
}

export interface ExportSchedulerOptions {
  now?: () => Date;
  /** run a pass right away (default true), so a day missed while stopped is exported */
  runAtStart?: boolean;
  log?: Logger;
  onProgress?: (progress: ExportProgress) => void;
}

type ExportJobConfig = Pick<Readonly<Config>, 'exports' | 'reliability'>;

/** The files one pass queues: the last finished day's, and recent failures with attempts left. */
export async function dueKeys(db: Db, config: ExportJobConfig, lastDay: string): Promise<ManifestKey[]> {
  const settings = config.exports;
  const failed = await manifestsInState(db, 'failed', addDays(lastDay, -settings.retry_days));
  const exhausted = new Set(failed.filter((m) => m.attempts >= settings.max_attempts).map((m) => m.id));
  const keys = settings.datasets.flatMap((dataset) => manifestKeys(dataset, lastDay, settings.formats));
  const retry = failed.filter((m) => m.attempts < settings.max_attempts).map(manifestKeyOf);
  const byId = new Map<string, ManifestKey>();
  for (const key of [...keys, ...retry]) {
    const id = manifestId(key);
    if (!exhausted.has(id)) byId.set(id, key);
  }
  return [...byId.values()];
}

/**
 * Starts the export job: recovers what a crash left (running rows back to pending, temporary
 * files deleted), then runs passes on `exports.cron` and whenever a service day is finalized.
 * Passes never overlap; a failing pass is logged and the next one retries. With
 * `exports.enabled: false` only the recovery runs.
 */
export async function scheduleExports(
  db: Db,
  bus: EventBus,
  config: ExportJobConfig,
  options: ExportSchedulerOptions = {},
): Promise<ExportScheduler> {
  assertCronExpression('exports.cron', config.exports.cron);
  const now = options.now ?? (() => new Date());
  const log = componentLogger(options.log, 'exports');
  const timezone = await resolveTimezone(db, config.reliability.timezone);
  const recovered = await recoverExports(db, config.exports.dir, now());
  if (recovered.tightened.length)
    log.warn(
      { files: recovered.tightened.length, dir: config.exports.dir },
      'export files were readable by other users of this host: made owner-only (0600 files, 0700 folders)',
    );
  const settings: ExportSettings = {
    db,
    dir: config.exports.dir,
    timezone,
    serviceDayEnd: config.reliability.service_day_end,
    bus,
    now,
    onProgress: options.onProgress,
  };

  let chain: Promise<unknown> = Promise.resolve();
  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const next = chain.then(work);
    chain = next.catch(() => undefined);
    return next;
  };

  const fullPass = async (): Promise<ExportFileResult[]> => {
    const lastDay = completeThrough(now(), timezone, config.reliability.service_day_end);
    const keys = await dueKeys(db, config, lastDay);
    const empty = new Set<string>();
    for (const date of new Set(keys.map((k) => k.date))) {
      const reason = await noServiceDataReason(
        db,
        serviceDayWindow(date, timezone, config.reliability.service_day_end),
      );
      if (reason === null) continue;
      empty.add(date);
      log.info({ service_date: date }, `${reason}: no export files`);
    }
    await enqueueManifests(
      db,
      keys.filter((k) => !empty.has(k.date)),
      { now: now() },
    );
    return runPending(settings);
  };
  const runOnce = (): Promise<ExportFileResult[]> => serial(fullPass);

  if (!config.exports.enabled) {
    // no schedule and no start-up pass; recovery above still ran, and runOnce works on demand
    return {
      timezone,
      recovered,
      runOnce,
      async stop() {
        await chain;
      },
    };
  }

  const job = startCronJob({
    key: 'exports.cron',
    expression: config.exports.cron,
    timezone,
    name: 'history-exports',
    log,
    failure: 'daily pass failed',
    run: runOnce,
  });

  // reliability files of a day wait in `pending` until the reliability job finalizes that day
  const unsubscribe = bus.subscribe((events) => {
    if (!events.some((e) => e.type === 'reliability.updated')) return;
    serial(() => runPending(settings)).catch((err: unknown) => log.error({ err }, 'pass after finalize failed'));
  });

  if (options.runAtStart !== false) {
    await runOnce().catch((err: unknown) => log.error({ err }, 'catch-up pass failed'));
  }

  return {
    timezone,
    recovered,
    runOnce,
    async stop() {
      unsubscribe();
      await job.stop();
      await chain;
    },
  };
}
