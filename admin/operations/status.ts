import { resolve } from 'node:path';
import { adminSocketPath } from '../../core/config.ts';
import type { Db } from '../../store/db.ts';
import { FAILED_POLL_SQL } from '../../store/feed-polls.ts';
import { listSchedules } from '../../store/schedule-index.ts';
import { lastCheck } from '../../store/schedule-versions.ts';
import type { Operation, OperationContext, ServiceInfo } from './types.ts';
import { isoRequired } from '../../core/dates.ts';

// `transit-api status`: the service (running or not), then what the database holds: schedules,
// feeds and their polls, API keys. Everything after the first two lines is read from the
// database, so it reads the same through the service as from the file once it stopped.

export interface StatusReport {
  /** not running: the admin socket on which nothing answered (null: admin.enabled is false) */
  service: ({ running: true } & ServiceInfo) | { running: false; admin_socket: string | null };
  database: string;
  schedules: Array<{
    id: string;
    source: string;
    /** null: configured, never imported */
    imported_at: string | null;
    timezone: string | null;
    feed_version: string | null;
    routes: number;
    trips: number;
    stops: number;
    configured: boolean;
    /** the source's last check in full (the public status page shows it redacted) */
    last_check: { at: string; outcome: string; error: string | null; error_at: string | null } | null;
  }>;
  feeds: Array<{
    id: string;
    kind: string | null;
    interval_s: number | null;
    configured: boolean;
    last_poll_at: string | null;
    last_status: string | null;
    last_entities: number | null;
    polls: number;
    failed_polls: number;
    /** the last failed poll's error in full (the public status page shows it redacted) */
    last_error: string | null;
    last_error_at: string | null;
  }>;
  api_keys: { active: number; active_live: number; active_test: number; revoked: number };
}

interface PollRow {
  feed_id: string;
  polls: bigint;
  failed: bigint;
  last_poll: Date | null;
  last_status: string | null;
  last_entities: number | null;
  last_error: string | null;
  last_error_at: Date | null;
}

async function feedPolls(db: Db): Promise<Map<string, PollRow>> {
  const rows = await db.all<PollRow>(`SELECT feed_id, count(*) AS polls,
      count(*) FILTER (WHERE ${FAILED_POLL_SQL}) AS failed,
      max(polled_at) AS last_poll, arg_max(status, polled_at) AS last_status, arg_max(entities,
        polled_at) AS last_entities,
      arg_max(error, polled_at) FILTER (WHERE ${FAILED_POLL_SQL} AND error IS NOT NULL) AS last_error,
      max(polled_at) FILTER (WHERE ${FAILED_POLL_SQL} AND error IS NOT NULL) AS last_error_at
    FROM feed_polls GROUP BY feed_id ORDER BY feed_id`);
  return new Map(rows.map((r) => [r.feed_id, r]));
}

function notAnswering({ config }: OperationContext): string | null {
  const socket = adminSocketPath(config);
  return socket === null ? null : resolve(socket);
}

export async function statusReport(ctx: OperationContext): Promise<StatusReport> {
  const { db, config } = ctx;
  const configuredSchedules = new Set(config.schedules.map((s) => s.id));
  const schedules: Array<Omit<StatusReport['schedules'][number], 'last_check'>> = (await listSchedules(db)).map(
    (s) => ({
      id: s.schedule_id,
      source: s.source,
      imported_at: isoRequired(s.imported_ms),
      timezone: s.timezone,
      feed_version: s.feed_version,
      routes: s.routes,
      trips: s.trips,
      stops: s.stops,
      configured: configuredSchedules.has(s.schedule_id),
    }),
  );
  for (const s of config.schedules)
    if (!schedules.some((known) => known.id === s.id))
      schedules.push({
        id: s.id,
        source: s.source,
        imported_at: null,
        timezone: null,
        feed_version: null,
        routes: 0,
        trips: 0,
        stops: 0,
        configured: true,
      });
  const checked = await Promise.all(
    schedules.map(async (s) => {
      const c = await lastCheck(db, s.id);
      return {
        ...s,
        last_check: c && { at: c.checked_at, outcome: c.outcome, error: c.last_error, error_at: c.last_error_at },
      };
    }),
  );
  checked.sort((a, b) => a.id.localeCompare(b.id));
  const polls = await feedPolls(db);
  type Known = Pick<StatusReport['feeds'][number], 'id' | 'kind' | 'interval_s' | 'configured'>;
  const known: Known[] = config.feeds.map((f) => ({
    id: f.id,
    kind: f.kind,
    interval_s: f.interval_s,
    configured: true,
  }));
  for (const id of polls.keys())
    if (!config.feeds.some((f) => f.id === id)) known.push({ id, kind: null, interval_s: null, configured: false });
  const feeds: StatusReport['feeds'] = known.map((f) => {
    const p = polls.get(f.id);
    return {
      ...f,
      last_poll_at: p?.last_poll?.toISOString() ?? null,
      last_status: p?.last_status ?? null,
      last_entities: p?.last_entities ?? null,
      polls: Number(p?.polls ?? 0),
      failed_polls: Number(p?.failed ?? 0),
      last_error: p?.last_error ?? null,
      last_error_at: p?.last_error_at?.toISOString() ?? null,
    };
  });
  const [keys] = await db.all<{ live: bigint; test: bigint; revoked: bigint }>(`SELECT
      count(*) FILTER (WHERE revoked_at IS NULL AND NOT test) AS live,
      count(*) FILTER (WHERE revoked_at IS NULL AND test) AS test,
      count(*) FILTER (WHERE revoked_at IS NOT NULL) AS revoked FROM api_keys`);
  const live = Number(keys?.live ?? 0);
  const test = Number(keys?.test ?? 0);
  return {
    service: ctx.service
      ? { running: true, ...ctx.service.info() }
      : { running: false, admin_socket: notAnswering(ctx) },
    database: resolve(db.path),
    schedules: checked,
    feeds,
    api_keys: { active: live + test, active_live: live, active_test: test, revoked: Number(keys?.revoked ?? 0) },
  };
}

export function formatStatus(report: StatusReport): string[] {
  const s = report.service;
  const lines = [
    s.running
      ? `service    running: pid ${s.pid} since ${s.started_at}, ` +
        `${s.url}${s.admin_socket ? `, admin socket ${s.admin_socket}` : ''}`
      : `service    not running ` +
        `(${
          s.admin_socket
            ? `nothing answers on its admin socket ${s.admin_socket}`
            : 'admin socket disabled in ' + 'this config: a running service cannot be seen'
        })`,
    `database   ${report.database}`,
    `schedules  ${report.schedules.length}`,
  ];
  for (const sc of report.schedules) {
    lines.push(
      sc.imported_at === null
        ? `  ${sc.id}: never imported from ${sc.source}`
        : `  ${sc.id}: imported ${sc.imported_at} from ${sc.source}; ${sc.routes} routes, ${sc.trips} trips, ` +
            `${sc.stops} stops` +
            (sc.timezone ? `, ${sc.timezone}` : '') +
            (sc.feed_version ? `, version ${sc.feed_version}` : '') +
            (sc.configured ? '' : ' (not in the config)'),
    );
    const c = sc.last_check;
    if (c?.outcome === 'failed') lines.push(`    last check ${c.at} failed: ${c.error ?? 'unknown error'}`);
  }
  lines.push(`feeds      ${report.feeds.length}`);
  for (const f of report.feeds) {
    const what = f.configured ? `${f.kind}, every ${f.interval_s} s` : 'not in the config';
    const last = f.last_poll_at
      ? `last poll ${f.last_poll_at} ${f.last_status} (${f.last_entities ?? 0} entities)`
      : 'never polled';
    lines.push(`  ${f.id} (${what}): ${last}; ${f.polls} polls retained, ${f.failed_polls} failed`);
    if (f.last_error) lines.push(`    last error ${f.last_error_at}: ${f.last_error}`);
  }
  const k = report.api_keys;
  lines.push(`api keys   ${k.active} active (${k.active_live} live, ${k.active_test} test), ${k.revoked} revoked`);
  return lines;
}

export const statusOperation: Operation = {
  async run(ctx, { values }, io) {
    const report = await statusReport(ctx);
    if (values.json === true) io.out(JSON.stringify(report));
    else for (const line of formatStatus(report)) io.out(line);
    return 0;
  },
};
