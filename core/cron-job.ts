// The one way a periodic job runs: a node-cron task whose runs never overlap, whose failures are
// logged (the next run retries) rather than thrown into the scheduler, and that stops for good.
import cron from 'node-cron';
import type { Logger } from './logger.ts';

export interface CronJobOptions {
  /** the config key of the expression, named when it is not valid */
  key: string;
  /** node-cron expression (minute hour day month weekday) */
  expression: string;
  /** IANA zone the expression is read in; absent: the server's */
  timezone?: string;
  /** the task's name in node-cron (and in its logs) */
  name: string;
  log: Logger;
  /** the log message of a failed run */
  failure: string;
  /** fields logged with a failure besides the error */
  context?: Record<string, unknown>;
  run(): Promise<unknown>;
}

export interface CronJob {
  /** stops the schedule; a run in progress finishes (callers wait on their own run) */
  stop(): Promise<void>;
}

/** Throws a RangeError naming `key` when `expression` is not a cron expression node-cron runs. */
export function assertCronExpression(key: string, expression: string): void {
  if (!cron.validate(expression)) throw new RangeError(`${key} is not a valid cron expression: ${expression}`);
}

/** Validates, then schedules `run` on the expression. */
export function startCronJob(options: CronJobOptions): CronJob {
  assertCronExpression(options.key, options.expression);
  const task = cron.schedule(
    options.expression,
    async () => {
      try {
        await options.run();
      } catch (err) {
        options.log.error({ err, ...options.context }, options.failure);
      }
    },
    { name: options.name, noOverlap: true, ...(options.timezone !== undefined ? { timezone: options.timezone } : {}) },
  );
  return {
    async stop() {
      await task.stop();
      await task.destroy();
    },
  };
}
