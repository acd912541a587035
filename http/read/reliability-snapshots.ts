// The bus directory's last-7-day reliability figures, held in memory so listing routes never
// queries DuckDB. Recomputed at start and whenever the finalize job announces a finished day.
import type { EventBus, Unsubscribe } from '../../core/events.ts';
import { componentLogger, type Logger } from '../../core/logger.ts';
import { ServedIds } from '../../core/served-ids.ts';
import type { Db } from '../../store/db.ts';
import { reliabilityRouteIds, reliabilitySnapshot } from '../../store/reliability/index.ts';
import type { ReliabilitySnapshots } from '../routes/deps.ts';
import type { ApiReliabilitySnapshot } from '../routes/schemas.ts';

export interface SnapshotOptions {
  /** finalized days per snapshot; default 7 */
  days?: number;
  log?: Logger;
  /** the served ids the directory lists routes by (core/served-ids.ts); default: as stored */
  ids?: () => ServedIds;
}

export class BusReliabilitySnapshots implements ReliabilitySnapshots {
  version = 0;
  private byRoute = new Map<string, ApiReliabilitySnapshot>();
  private body = '';
  private running: Promise<void> | null = null;
  private again = false;
  private unsubscribe: Unsubscribe | null = null;
  private closed = false;

  private readonly log: Logger;

  constructor(
    private readonly db: Db,
    private readonly options: SnapshotOptions = {},
  ) {
    this.log = componentLogger(options.log, 'reliability');
  }

  /** Loads the snapshots now, then follows reliability.updated events on `bus`. */
  static async start(db: Db, bus: EventBus, options: SnapshotOptions = {}): Promise<BusReliabilitySnapshots> {
    const snapshots = new BusReliabilitySnapshots(db, options);
    await snapshots.refresh();
    snapshots.follow(bus);
    return snapshots;
  }

  /** Null until a day is finalized: no figures rather than seven days of zeros. `routeId` as served. */
  snapshot(routeId: string): ApiReliabilitySnapshot | null {
    return this.byRoute.get(routeId) ?? null;
  }

  /**
   * Recomputes every bus route's snapshot. A call during a refresh schedules one more pass after
   * it (days finalized meanwhile are included) instead of running two at once.
   */
  refresh(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      do {
        this.again = false;
        await this.load();
      } while (this.again && !this.closed);
    })().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  /** Every finished day moves the 7-day window of every route, whatever modes it had. */
  follow(bus: EventBus): void {
    this.unsubscribe?.();
    this.unsubscribe = bus.subscribe((events) => {
      if (this.closed || !events.some((e) => e.type === 'reliability.updated')) return;
      this.refresh().catch((err: unknown) =>
        this.log.error({ err }, 'reliability snapshots: refresh failed; keeping the previous ones'),
      );
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    this.unsubscribe?.();
    this.unsubscribe = null;
    await this.running?.catch(() => undefined);
  }

  private async load(): Promise<void> {
    const ids = (this.options.ids ?? (() => ServedIds.NONE))();
    // by served id: a route two schedules share is two entries, a schedule's route and the same
    // id seen by a feed without a schedule one
    const routes = new Map<string, { key: string; route_id: string; schedules: string[] | null }>();
    for (const r of await reliabilityRouteIds(this.db, 'bus')) {
      const key = ids.serve(r.schedule_id, 'route', r.route_id);
      const entry = routes.get(key) ?? { key, route_id: r.route_id, schedules: ids.scoped ? [] : null };
      entry.schedules?.push(r.schedule_id ?? '');
      routes.set(key, entry);
    }
    const figures = await reliabilitySnapshot(this.db, 'bus', [...routes.values()], this.options.days ?? 7);
    const next = new Map<string, ApiReliabilitySnapshot>();
    for (const [routeId, s] of figures) {
      if (s.from === null || s.to === null) continue;
      next.set(routeId, {
        from: s.from,
        to: s.to,
        scheduled: s.scheduled,
        canceled: s.canceled,
        partially_canceled: s.partially_canceled,
        unobserved: s.unobserved,
        delivered: s.delivered,
        delivered_pct: s.delivered_pct,
        observed: s.observed,
        delivered_pct_of_observed: s.delivered_pct_of_observed,
      });
    }
    const body = JSON.stringify([...next]);
    // the version is the directory's cache key: it moves only when a figure changed
    if (body === this.body) return;
    this.byRoute = next;
    this.body = body;
    this.version++;
  }
}
