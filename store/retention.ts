import cron from 'node-cron';
import type { Config } from '../core/config.ts';
import { componentLogger, type Logger } from '../core/logger.ts';
import type { Db } from './db.ts';
import { DAY_MS } from '../core/dates.ts';

// History kept for the windows in config.retention_days, pruned by a node-cron job.

export interface RetentionTarget {
  /** key in config.retention_days */
  key: keyof Config['retention_days'];
  table: string;
  /** the TIMESTAMPTZ column that ages a row */
  column: string;
  /** extra condition a row must meet to be deleted */
  only?: string;
}

/**
 * What is pruned. A feature that adds a history table adds its line here (e.g. `usage`);
 * targets whose table does not exist yet are skipped.
 */
export const RETENTION_TARGETS: readonly RetentionTarget[] = [
  { key: 'vehicle_positions', table: 'vehicle_positions', column: 'observed_at' },
  { key: 'arrivals', table: 'arrivals', column: 'observed_at' },
  { key: 'trip_observations', table: 'trip_observations', column: 'observed_at' },
  {
    key: 'alerts',
    table: 'alert_versions',
    column: 'updated_at',
    // an alert still open keeps its newest version however old: it is the current state
    only: `(status = 'resolved' OR version < (SELECT max(v.version) FROM alert_versions v
             WHERE v.alert_id = alert_versions.alert_id))`,
  },
  { key: 'feed_polls', table: 'feed_polls', column: 'polled_at' },
  { key: 'stop_events', table: 'stop_events', column: 'written_at' },
  // a snapshot's mark lives as long as its longest-kept rows, so a re-poll cannot store them twice
  { key: 'trip_observations', table: 'feed_snapshots', column: 'observed_at' },
];

/** Deletes rows older than their window; returns deleted rows per table. */
export async function pruneHistory(
  db: Db,
  retentionDays: Config['retention_days'],
  nowMs: number,
  targets: readonly RetentionTarget[] = RETENTION_TARGETS,
): Promise<Record<string, number>> {
  const existing = new Set(
    (
      await db.all<{ name: string }>(
        `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'main'`,
      )
    ).map((r) => r.name),
  );
  const deleted: Record<string, number> = {};
  for (const target of targets) {
    if (!existing.has(target.table)) continue;
    const cutoffMs = nowMs - retentionDays[target.key] * DAY_MS;
    deleted[target.table] = await db.exclusive(async (conn) => {
      const result = await conn.run(
        `DELETE FROM ${target.table} WHERE ${target.column} < to_timestamp($1::DOUBLE / 1000)
         ${target.only ? `AND ${target.only}` : ''}`,
        [cutoffMs],
      );
      return result.rowsChanged;
    });
  }
  return deleted;
}

export interface RetentionJob {
  stop(): void;
}

/** Runs pruneHistory on config.prune_cron; failures are logged, never thrown. */
export function scheduleRetention(
  db: Db,
  config: Pick<Readonly<Config>, 'prune_cron' | 'retention_days'>,
  logger: Logger | undefined,
  now: () => number = Date.now,
): RetentionJob {
  const log = componentLogger(logger, 'retention');
  if (!cron.validate(config.prune_cron)) {
    throw new Error(`prune_cron: ${JSON.stringify(config.prune_cron)} is not a valid cron expression`);
  }
  const task = cron.schedule(
    config.prune_cron,
    async () => {
      try {
        const started = performance.now();
        const deleted = await pruneHistory(db, config.retention_days, now());
        log.info({ deleted, ms: Math.round(performance.now() - started) }, 'pruned history past its retention');
      } catch (err) {
        log.error({ err }, 'pruning failed');
      }
    },
    { name: 'retention', noOverlap: true },
  );
  return {
    stop() {
      void task.stop();
      void task.destroy();
    },
  };
}
