import { listValue } from '@duckdb/node-api';
import { MODES, type Mode } from '../../core/types.ts';
import type { Db } from '../db.ts';
import { bind, statement } from './sql.ts';

const KNOWN = statement('route_known');
const ROUTE_IDS = statement('route_ids');
const ROUTE_MODES = statement('route_modes');
const MODES_KNOWN = statement('modes_known');

/** Modes reliability knows, in MODES order (rail, bus, streetcar); a mode outside them is left out. */
function knownModes(rows: readonly { mode: string }[]): Mode[] {
  const found = new Set(rows.map((r) => r.mode));
  return MODES.filter((m) => found.has(m));
}

/**
 * Whether a route (rail line) of `mode` exists for reliability: in a schedule, or in retained
 * history (a route dropped from the schedule keeps its figures). The API answers 404 otherwise.
 */
export async function isKnownRoute(
  db: Db,
  mode: Mode,
  routeId: string,
  /** the schedules whose rows count (core/served-ids.ts resolve); null: any */
  schedules: readonly string[] | null = null,
): Promise<boolean> {
  const [row] = await db.all<{ known: boolean }>(
    KNOWN.text,
    bind(KNOWN, { mode, route_id: routeId, schedules: schedules === null ? null : listValue([...schedules]) }),
  );
  return row?.known === true;
}

/** Every route of `mode` in the schedules or the finalized days, with its schedule, by id. */
export async function reliabilityRouteIds(
  db: Db,
  mode: Mode,
): Promise<{ schedule_id: string | null; route_id: string }[]> {
  return db.all<{ schedule_id: string | null; route_id: string }>(ROUTE_IDS.text, bind(ROUTE_IDS, { mode }));
}

/**
 * The modes in which `routeId` is a route (rail line) for reliability, as isKnownRoute decides
 * for each: none for an unknown id, two or more when modes share the id.
 */
export async function routeModes(db: Db, routeId: string): Promise<Mode[]> {
  return knownModes(await db.all<{ mode: string }>(ROUTE_MODES.text, bind(ROUTE_MODES, { route_id: routeId })));
}

/** The modes with any route in a schedule or in retained history. */
export async function reliabilityModes(db: Db): Promise<Mode[]> {
  return knownModes(await db.all<{ mode: string }>(MODES_KNOWN.text, bind(MODES_KNOWN, {})));
}
