import type { Mode } from '../../core/types.ts';
import type { Db } from '../db.ts';
import { bind, statement } from './sql.ts';

const KNOWN = statement('route_known');
const ROUTE_IDS = statement('route_ids');

/**
 * Whether a route (rail line) of `mode` exists for reliability: in a schedule, or in retained
 * history (a route dropped from the schedule keeps its figures). The API answers 404 otherwise.
 */
export async function isKnownRoute(db: Db, mode: Mode, routeId: string): Promise<boolean> {
  const [row] = await db.all<{ known: boolean }>(KNOWN.text, bind(KNOWN, { mode, route_id: routeId }));
  return row?.known === true;
}

/** Every route id of `mode` in the schedules or the finalized days, sorted. */
export async function reliabilityRouteIds(db: Db, mode: Mode): Promise<string[]> {
  const rows = await db.all<{ route_id: string }>(ROUTE_IDS.text, bind(ROUTE_IDS, { mode }));
  return rows.map((r) => r.route_id);
}
