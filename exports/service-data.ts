// Whether a service day has anything to export. A deployment started today has no data for
// yesterday: the daily job used to write empty files for it (and for a day another deployment
// served into the same folder), which read as "nothing happened" rather than "not watched".
import type { Db } from '../store/db.ts';
import type { ServiceDayWindow } from '../core/dates.ts';
import { DATASETS } from './datasets.ts';

/** Poll outcomes that mean a feed was read: an empty export of such a day says "nothing happened". */
const READ_STATUSES = ['ok', 'unchanged', 'duplicate'] as const;

const instant = (d: Date): string => `TIMESTAMPTZ '${d.toISOString()}'`;

/**
 * The EXISTS checks, one per source: every realtime and alerts part by its own day rule, the
 * trip observations reliability is computed from (trip_outcomes holds the schedule's trips
 * whatever was seen, so it proves nothing), and a feed read during the day's window.
 */
function serviceDataQuery(day: ServiceDayWindow): string {
  const parts = Object.values(DATASETS)
    .filter((d) => d.name !== 'reliability')
    .flatMap((d) => d.parts)
    .map((p) => `EXISTS (SELECT 1 FROM ${p.table} WHERE ${p.where(day)})`);
  const statuses = READ_STATUSES.map((s) => `'${s}'`).join(', ');
  return `SELECT ${[
    `EXISTS (SELECT 1 FROM trip_observations WHERE service_date = DATE '${day.date}')`,
    ...parts,
    `EXISTS (SELECT 1 FROM feed_polls WHERE status IN (${statuses}) ` +
      `AND polled_at >= ${instant(day.start)} AND polled_at < ${instant(day.end)})`,
  ].join(' OR ')} AS has_data`;
}

/**
 * Why service day `day` has nothing to export, or null when it has service data: a row of any
 * history table belongs to it, or a feed was read during it (then an empty file is a fact).
 */
export async function noServiceDataReason(db: Db, day: ServiceDayWindow): Promise<string | null> {
  const [row] = await db.all<{ has_data: boolean }>(serviceDataQuery(day));
  return row?.has_data
    ? null
    : `no service data for service day ${day.date}: no feed was read during it and no history row belongs to it`;
}
