import { feedScheduleId, type Config, type FeedConfig } from '../core/config.ts';
import { InMemoryEventBus, type EventBus } from '../core/events.ts';
import { defaultLogger, type Logger } from '../core/logger.ts';
import type { ScheduleIndex } from '../core/ports.ts';
import type { DurationObserver } from '../core/telemetry.ts';
import type { FeedPoll } from '../core/types.ts';
import { createPipeline, type Pipeline } from '../pipeline/ingest.ts';
import { loadLatestAlerts } from '../store/alerts-store.ts';
import { Db, dbOptions } from '../store/db.ts';
import { importScheduleVersion } from '../store/schedule-refresh.ts';
import { listSchedules, loadScheduleIndex } from '../store/schedule-index.ts';
import { createHistoryWriter } from '../store/history-writer.ts';
import { loadWrittenTrips } from '../store/stop-events-writer.ts';
import { DAY_MS, utcDate } from '../core/dates.ts';
import { IdScopes } from '../store/id-scope.ts';

// The composition root's core: one database, one event bus, the schedules in memory and the
// pipeline wired to them. `serve` adds the HTTP server and jobs on top; `ingest --once` uses
// this alone.

export interface Runtime {
  /** the config in force: a reload replaces its feeds and schedules */
  readonly config: Readonly<Config>;
  db: Db;
  bus: EventBus;
  pipeline: Pipeline;
  schedules: Map<string, ScheduleIndex>;
  /** the ids served (core/served-ids.ts): reload it when schedules or feeds change */
  ids: IdScopes;
  /** the config a reload applied (feeds and schedules); what needs a restart stays as started */
  setConfig(next: Readonly<Config>): void;
  /** Loads an imported schedule into memory; the pipeline resolves trips against it from its next poll. */
  loadSchedule(scheduleId: string): Promise<void>;
  close(): Promise<void>;
}

export interface RuntimeOptions {
  /** default: the process's logger */
  log?: Logger;
  now?: () => number;
  /** every poll's record (metrics) */
  onPoll?: (poll: FeedPoll) => void;
  /** how long each statement waited for the database's shared connection (metrics) */
  dbQueueWait?: DurationObserver;
  /**
   * The time span the feeds will report (a replay: its archive's header times; default: now).
   * Trips of those days whose stop events are stored already resume after their last stop stored.
   */
  stop_events_span?: { from_ms: number; to_ms: number };
  /**
   * the feeds and schedules served ids are computed for; default: the runtime's config (an edge polls none but serves
   * all)
   */
  idConfig?: () => Pick<Readonly<Config>, 'schedules' | 'feeds'>;
}

/** Imports every configured schedule that is not in the database yet. */
export async function ensureSchedules(db: Db, config: Readonly<Config>, log: Logger): Promise<void> {
  const imported = new Set((await listSchedules(db)).map((s) => s.schedule_id));
  for (const schedule of config.schedules) {
    if (imported.has(schedule.id)) continue;
    log.info({ schedule: schedule.id, source: schedule.source }, 'importing schedule');
    const { summary, version } = await importScheduleVersion(db, schedule.id, schedule.source, {
      timezone: config.reliability.timezone,
      horizonDays: config.reliability.horizon_days,
    });
    log.info(
      {
        schedule: schedule.id,
        version: version.version_id,
        trips: summary.tables.trips?.rows ?? 0,
        ms: Math.round(summary.ms),
      },
      'schedule imported',
    );
  }
}

/** A feed uses its own schedule_id, or the only schedule when exactly one is configured. */
export function scheduleForFeed(
  config: Readonly<Config> | (() => Readonly<Config>),
  schedules: ReadonlyMap<string, ScheduleIndex>,
) {
  const current = typeof config === 'function' ? config : () => config;
  return (feed: FeedConfig): ScheduleIndex | undefined => {
    const id = feedScheduleId(current(), feed);
    return id === null ? undefined : schedules.get(id);
  };
}

export async function openRuntime(config: Readonly<Config>, options: RuntimeOptions = {}): Promise<Runtime> {
  const log = options.log ?? defaultLogger();
  const db = await Db.open(config.db_path, { ...dbOptions(config.store), log });
  if (options.dbQueueWait) db.observeQueueWait(options.dbQueueWait);
  try {
    await ensureSchedules(db, config, log);
    const schedules = new Map<string, ScheduleIndex>();
    for (const schedule of config.schedules) schedules.set(schedule.id, await loadScheduleIndex(db, schedule.id));
    const bus = new InMemoryEventBus({ log });
    let current = config;
    const ids = await IdScopes.open(db, options.idConfig ?? (() => current), log);
    const nowMs = (options.now ?? Date.now)();
    const span = options.stop_events_span ?? { from_ms: nowMs, to_ms: nowMs };
    // a day either side: service days are the agency's, and trips run past midnight
    const written = await loadWrittenTrips(db, utcDate(span.from_ms - 2 * DAY_MS), utcDate(span.to_ms + DAY_MS));
    const pipeline = createPipeline({
      config,
      bus,
      history: createHistoryWriter(db, {
        predictionChangeS: config.history.prediction_change_s,
        tripTimeoutS: config.history.trip_timeout_s,
      }),
      scheduleFor: scheduleForFeed(() => current, schedules),
      initialAlerts: await loadLatestAlerts(db),
      now: options.now,
      log,
      onPoll: options.onPoll,
      written_trips: written,
      servedIds: () => ids.current,
    });
    return {
      get config() {
        return current;
      },
      db,
      bus,
      pipeline,
      schedules,
      ids,
      setConfig(next) {
        current = next;
      },
      async loadSchedule(scheduleId) {
        // loaded beside the one in use, then swapped: a poll sees the old copy or the new one
        schedules.set(scheduleId, await loadScheduleIndex(db, scheduleId));
      },
      async close() {
        await pipeline.stop();
        await db.close();
      },
    };
  } catch (err) {
    await db.close().catch(() => undefined);
    throw err;
  }
}
