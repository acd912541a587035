import { listValue } from '@duckdb/node-api';
import type { Mode } from '../../core/types.ts';
import type { Db } from '../db.ts';
import { addDays } from '../../core/dates.ts';
import { observedFigures } from './coverage.ts';
import { bind, statement } from './sql.ts';

const WINDOW = statement('retained_window');
const SNAPSHOT = statement('snapshot');

export interface RetainedWindow {
  /** first service date on which a trip of the mode was seen */
  earliest: string;
  /** last service date with rows for the mode (finalized, or seen live) */
  latest: string;
  /** last finalized service date of any mode; null before the first finalize */
  finalized_through: string | null;
}

async function lastFinalized(db: Db): Promise<string | null> {
  const [row] = await db.all<{ last: string | null }>(
    `SELECT strftime(max(service_date), '%Y-%m-%d') AS last FROM reliability_finalized`,
  );
  return row?.last ?? null;
}

/**
 * The service dates a mode's rollups can cover, or null when the mode has no retained rows
 * (the API answers 404 no_retained_rows then, and 400 for ranges outside the window).
 */
export async function retainedWindow(db: Db, mode: Mode): Promise<RetainedWindow | null> {
  const last = await lastFinalized(db);
  const [row] = await db.all<{ earliest: string | null; latest: string | null; finalized_through: string | null }>(
    WINDOW.text,
    bind(WINDOW, { mode, last_finalized: last }),
  );
  if (!row?.earliest || !row.latest) return null;
  return { earliest: row.earliest, latest: row.latest, finalized_through: row.finalized_through };
}

export interface ReliabilitySnapshot {
  /** the finalized days counted; null when no day is finalized yet */
  from: string | null;
  to: string | null;
  scheduled: number;
  delivered: number;
  canceled: number;
  partially_canceled: number;
  unobserved: number;
  added: number;
  delivered_pct: number | null;
  /** scheduled trips seen by a feed (finalized days have no pending trips: scheduled - unobserved) */
  observed: number;
  /** 100 × delivered / observed; null when no scheduled trip was seen */
  delivered_pct_of_observed: number | null;
}

/**
 * A route asked for: its id, the schedules whose rows count (core/served-ids.ts resolve; '' for
 * rows without a schedule; absent or null: all), and the key of its entry (default: the id).
 */
export interface SnapshotRoute {
  route_id: string;
  schedules?: readonly string[] | null;
  key?: string;
}

type Counts = Pick<
  ReliabilitySnapshot,
  'scheduled' | 'delivered' | 'canceled' | 'partially_canceled' | 'unobserved' | 'added'
>;

/**
 * Each route's figures over the last `days` finalized service days, for the route directory.
 * Finalized days only, so the directory never waits on live computation. Every requested route
 * gets an entry; routes without rows have zeros and a null delivered_pct.
 */
export async function reliabilitySnapshot(
  db: Db,
  mode: Mode,
  routes: readonly (string | SnapshotRoute)[],
  days = 7,
): Promise<Map<string, ReliabilitySnapshot>> {
  if (!Number.isInteger(days) || days < 1 || days > 400) throw new RangeError('days must be an integer in 1..400');
  const asked = routes.map((r) => (typeof r === 'string' ? { route_id: r } : r));
  const to = await lastFinalized(db);
  const from = to === null ? null : addDays(to, -(days - 1));
  const routeIds = [...new Set(asked.map((r) => r.route_id))];
  const rows =
    to === null || from === null || routeIds.length === 0
      ? []
      : await db.all<{ schedule_id: string | null; route_id: string } & Counts>(
          SNAPSHOT.text,
          bind(SNAPSHOT, { mode, route_ids: listValue(routeIds), from, to }),
        );
  const byRoute = new Map<string, (typeof rows)[number][]>();
  for (const r of rows) byRoute.set(r.route_id, [...(byRoute.get(r.route_id) ?? []), r]);
  const out = new Map<string, ReliabilitySnapshot>();
  for (const route of asked) {
    const key = route.key ?? route.route_id;
    const sum: Counts = { scheduled: 0, delivered: 0, canceled: 0, partially_canceled: 0, unobserved: 0, added: 0 };
    for (const r of byRoute.get(route.route_id) ?? []) {
      if (route.schedules && !route.schedules.includes(r.schedule_id ?? '')) continue;
      for (const k of Object.keys(sum) as (keyof Counts)[]) sum[k] += r[k];
    }
    const { scheduled, delivered, unobserved } = sum;
    out.set(key, {
      from,
      to,
      ...sum,
      delivered_pct: scheduled > 0 ? Math.round((10_000 * delivered) / scheduled) / 100 : null,
      ...observedFigures({ scheduled, delivered, unobserved, pending: 0 }),
    });
  }
  return out;
}
