import type { ActivePeriod, Alert, AlertStatus, Mode } from '../core/types.ts';
import type { Db } from './db.ts';

// Alert state survives a restart: the newest stored version of each alert is the alert as the
// pipeline last knew it.

interface AlertRow {
  alert_id: string;
  feed_id: string;
  schedule_id: string | null;
  entity_id: string;
  version: number;
  status: string;
  modes: string[];
  impact: string;
  cause: string;
  severity: string | null;
  header: { language: string; text: string }[];
  description: { language: string; text: string }[];
  url: { language: string; text: string }[];
  active_periods: { start_ms: number | null; end_ms: number | null }[];
  routes: string[];
  stations: string[];
  trips: string[];
  first_seen_ms: number;
  updated_ms: number;
  resolved_ms: number | null;
}

const textsOf = (list: { language: string; text: string }[]): Record<string, string> =>
  Object.fromEntries(list.map((t) => [t.language, t.text]));

function toAlert(r: AlertRow): Alert {
  return {
    id: r.alert_id,
    feed_id: r.feed_id,
    // NULL: stored before migration 020 (or without a schedule): the feed's schedule tells
    ...(r.schedule_id === null ? {} : { schedule_id: r.schedule_id }),
    entity_id: r.entity_id,
    modes: [...r.modes] as Mode[],
    status: r.status as AlertStatus,
    impact: r.impact,
    cause: r.cause,
    severity: r.severity,
    header: textsOf(r.header),
    description: textsOf(r.description),
    url: textsOf(r.url),
    active_periods: r.active_periods.map((p): ActivePeriod => ({ start_ms: p.start_ms, end_ms: p.end_ms })),
    routes: [...r.routes],
    stations: [...r.stations],
    trips: [...r.trips],
    version: r.version,
    first_seen_ms: r.first_seen_ms,
    updated_ms: r.updated_ms,
    resolved_ms: r.resolved_ms,
  };
}

/** The columns of alert_versions as AlertRow reads them (times as epoch ms). */
const ALERT_COLUMNS = `alert_id, feed_id, schedule_id, entity_id, version, status, modes, impact, cause, severity,
  header, description, url,
  list_transform(active_periods, p -> {'start_ms': epoch_ms(p.start_at)::DOUBLE, 'end_ms': epoch_ms(p.end_at)::DOUBLE})
    AS active_periods,
  routes, stations, trips,
  epoch_ms(first_seen_at)::DOUBLE AS first_seen_ms, epoch_ms(updated_at)::DOUBLE AS updated_ms,
  epoch_ms(resolved_at)::DOUBLE AS resolved_ms`;

export interface LatestAlertsOptions {
  /** leave out alerts resolved before this time (epoch ms); all are returned by default */
  resolvedSinceMs?: number;
  feedId?: string;
}

/** The newest version of every alert, oldest first seen first. */
export async function loadLatestAlerts(db: Db, options: LatestAlertsOptions = {}): Promise<Alert[]> {
  const where: string[] = [];
  const params: (string | number)[] = [];
  if (options.feedId !== undefined) {
    params.push(options.feedId);
    where.push(`feed_id = $${params.length}`);
  }
  const latest = `SELECT * FROM alert_versions ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
    QUALIFY row_number() OVER (PARTITION BY alert_id ORDER BY version DESC, updated_at DESC) = 1`;
  let filter = '';
  if (options.resolvedSinceMs !== undefined) {
    params.push(options.resolvedSinceMs);
    filter = `WHERE resolved_at IS NULL OR epoch_ms(resolved_at) >= $${params.length}`;
  }
  const rows = await db.all<AlertRow>(
    `SELECT ${ALERT_COLUMNS}
     FROM (${latest}) ${filter}
     ORDER BY first_seen_at, alert_id`,
    params,
  );
  return rows.map(toAlert);
}
