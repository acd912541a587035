import type { Config } from '../../core/config.ts';
import { domainEvent, scopeOf, type DomainEvent, type EventBus } from '../../core/events.ts';
import { componentLogger, type Logger } from '../../core/logger.ts';
import type { Db } from '../db.ts';
import { backfillServiceDays, pastObservedDays } from './backfill.ts';
import { completeThrough, wallClock } from '../../core/dates.ts';
import { finalizeDueDays, type FinalizedRoute, type FinalizeSummary } from './finalize.ts';
import { ServedIds } from '../../core/served-ids.ts';
import { extendScheduledTrips } from './scheduled-trips.ts';
import { resolveTimezone } from './timezone.ts';
import { assertCronExpression, startCronJob } from '../../core/cron-job.ts';

export interface FinalizeJob {
  readonly timezone: string;
  /**
   * one pass: expand schedules for a new local day, finalize every due service day, and once a day backfill older
   * observed days
   */
  runOnce(): Promise<FinalizeSummary[]>;
  stop(): Promise<void>;
}

export interface FinalizeJobOptions {
  now?: () => Date;
  /** run a catch-up pass right away (default true), so days missed while stopped are finalized */
  runAtStart?: boolean;
  log?: Logger;
  /** the route ids events carry (core/served-ids.ts); default: as stored */
  ids?: () => ServedIds;
}

/**
 * The reliability.updated event for one finalized day, its route ids as served (core/served-ids.ts):
 * the rows of one served route (a schedule's, and the same id from a feed without one) are summed.
 */
export function reliabilityEvent(
  summary: FinalizeSummary,
  atMs: number,
  ids: ServedIds = ServedIds.NONE,
): DomainEvent<'reliability.updated'> {
  const routes = new Map<string, Omit<FinalizedRoute, 'schedule_id'>>();
  for (const r of summary.routes) {
    const route_id = ids.serveNullable(r.schedule_id ?? null, 'route', r.route_id);
    const key = `${r.mode}\u0000${route_id}`;
    const seen = routes.get(key);
    if (!seen)
      routes.set(key, {
        mode: r.mode,
        route_id,
        scheduled: r.scheduled,
        delivered: r.delivered,
        canceled: r.canceled,
        unobserved: r.unobserved,
      });
    else {
      seen.scheduled += r.scheduled;
      seen.delivered += r.delivered;
      seen.canceled += r.canceled;
      seen.unobserved += r.unobserved;
    }
  }
  const scope = scopeOf([...routes.values()].map((r) => ({ mode: r.mode, id: r.route_id })));
  return domainEvent(
    'reliability.updated',
    atMs,
    { ...scope, modes: summary.modes },
    {
      service_date: summary.service_date,
      final: true,
      trips: summary.trips,
      routes: [...routes.values()].map((r) => ({
        mode: r.mode,
        route_id: r.route_id,
        scheduled: r.scheduled,
        delivered: r.delivered,
        canceled: r.canceled,
        unobserved: r.unobserved,
        // a finalized day has no pending trips: every scheduled trip was seen or is unobserved
        observed: Math.max(0, r.scheduled - r.unobserved),
      })),
    },
  );
}

/**
 * Starts the node-cron job that finalizes each service day once it is over (by default at :05
 * every hour, in the agency time zone; a day D is over at service_day_end on D + 1 and after its
 * last scheduled arrival plus late_grace_min), and publishes one reliability.updated event per
 * finalized day. Passes never overlap; a failing pass is logged and the next one retries.
 */
export async function scheduleFinalize(
  db: Db,
  bus: EventBus,
  config: Pick<Readonly<Config>, 'reliability'>,
  options: FinalizeJobOptions = {},
): Promise<FinalizeJob> {
  const settings = config.reliability;
  assertCronExpression('reliability.finalize_cron', settings.finalize_cron);
  const now = options.now ?? (() => new Date());
  const log = componentLogger(options.log, 'reliability');
  const timezone = await resolveTimezone(db, settings.timezone);
  let extendedFor: string | null = null;
  let backfilledFor: string | null = null;
  let running: Promise<FinalizeSummary[]> | null = null;

  const pass = async (): Promise<FinalizeSummary[]> => {
    const at = now();
    const today = wallClock(at, timezone).date;
    if (extendedFor !== today) {
      // a schedule that fails to expand must not hold back finalizing the days already expanded
      try {
        await extendScheduledTrips(db, { timezone, horizonDays: settings.horizon_days, now: at });
        extendedFor = today;
      } catch (err) {
        log.error({ err }, 'expanding scheduled trips failed');
      }
    }
    const done = await finalizeDueDays(
      db,
      {
        timezone,
        serviceDayEnd: settings.service_day_end,
        lateGraceMin: settings.late_grace_min,
        catchUpDays: settings.catch_up_days,
        now: at,
      },
      (day, err) => log.error({ err, day }, 'finalizing a service day failed'),
    );
    if (backfilledFor !== today) {
      // once a day: older days with observations never finalized (history ingested after the
      // job had passed them, archives replayed without a backfill) are expanded and finalized
      try {
        const past = await pastObservedDays(db, completeThrough(at, timezone, settings.service_day_end));
        done.push(...(await backfillServiceDays(db, past, { now: at, ifOpen: true })));
        backfilledFor = today;
      } catch (err) {
        log.error({ err }, 'backfilling past service days failed');
      }
    }
    for (const summary of done) bus.publish(reliabilityEvent(summary, now().getTime(), options.ids?.()));
    return done;
  };

  const runOnce = (): Promise<FinalizeSummary[]> => {
    // a manual run during a scheduled one joins it instead of running twice
    running ??= pass().finally(() => {
      running = null;
    });
    return running;
  };

  const job = startCronJob({
    key: 'reliability.finalize_cron',
    expression: settings.finalize_cron,
    timezone,
    name: 'reliability-finalize',
    log,
    failure: 'finalize pass failed',
    run: runOnce,
  });

  if (options.runAtStart !== false) {
    await runOnce().catch((err: unknown) => log.error({ err }, 'catch-up pass failed'));
  }

  return {
    timezone,
    runOnce,
    async stop() {
      await job.stop();
      await running?.catch(() => undefined);
    },
  };
}
