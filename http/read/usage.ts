// One key's metered usage per UTC day, as the developer dashboard charts it: requests,
// connection-minutes and error responses, read from the per-second usage buckets the meter
// writes. Bucketing and zero-filling happen in one SQL query.
import type { Db } from '../../store/db.ts';
import { LIVE_USAGE_TABLE, TEST_USAGE_TABLE } from '../meter.ts';

export const USAGE_DAYS_DEFAULT = 14;
export const USAGE_DAYS_MAX = 90;

const DAY_MS = 86_400_000;

export interface UsageFigures {
  /** metered requests (unit `request`), whatever their status */
  requests: number;
  /** started minutes of event streams (unit `connection-minute`) */
  connection_minutes: number;
  /** requests answered with a status of 400 or more */
  errors: number;
}

export interface UsageDay extends UsageFigures {
  /** UTC calendar day, YYYY-MM-DD */
  date: string;
}

export interface UsageReport {
  /** first day, YYYY-MM-DD (UTC) */
  from: string;
  /** last day, YYYY-MM-DD (UTC): the day of `nowMs` */
  to: string;
  /** one entry per day from..to, oldest first; days without usage are zeros */
  days: UsageDay[];
  totals: UsageFigures;
}

export interface UsageQuery {
  keyId: string;
  /** test keys' usage lives in its own table */
  test: boolean;
  /** how many days up to and including today, 1..USAGE_DAYS_MAX */
  days: number;
  nowMs: number;
}

interface DayRow {
  date: string;
  requests: bigint;
  connection_minutes: bigint;
  errors: bigint;
}

// Days are counted as whole UTC days since the epoch from epoch_ms(), never through the
// session time zone: date_trunc on a TIMESTAMPTZ would bucket by the server's local midnight.
// The bounds are constant TIMESTAMPTZ values so DuckDB can skip row groups by bucket_at.
function dailySql(table: string): string {
  return `
    WITH usage AS (
      SELECT epoch_ms(bucket_at) // ${DAY_MS} AS day,
             sum(quantity) FILTER (WHERE unit = 'request') AS requests,
             sum(quantity) FILTER (WHERE unit = 'connection-minute') AS connection_minutes,
             sum(calls) FILTER (WHERE unit = 'request' AND status >= 400) AS errors
      FROM ${table}
      WHERE key_id = $key
        AND bucket_at >= to_timestamp($start_ms::DOUBLE / 1000)
        AND bucket_at < to_timestamp($end_ms::DOUBLE / 1000)
      GROUP BY day
    )
    SELECT strftime(DATE '1970-01-01' + CAST(d.day AS INTEGER), '%Y-%m-%d') AS date,
           CAST(coalesce(u.requests, 0) AS BIGINT) AS requests,
           CAST(coalesce(u.connection_minutes, 0) AS BIGINT) AS connection_minutes,
           CAST(coalesce(u.errors, 0) AS BIGINT) AS errors
    FROM range($first_day::BIGINT, $last_day::BIGINT + 1) AS d(day)
    LEFT JOIN usage AS u USING (day)
    ORDER BY d.day`;
}

const SQL = { live: dailySql(LIVE_USAGE_TABLE), test: dailySql(TEST_USAGE_TABLE) };

/** The key's usage per UTC day over the last `days` days, today included. */
export async function dailyUsage(db: Db, query: UsageQuery): Promise<UsageReport> {
  if (!Number.isInteger(query.days) || query.days < 1 || query.days > USAGE_DAYS_MAX) {
    throw new RangeError(`days must be a whole number from 1 to ${USAGE_DAYS_MAX}, got ${query.days}`);
  }
  if (!Number.isFinite(query.nowMs)) throw new RangeError(`nowMs must be a finite time, got ${query.nowMs}`);
  const lastDay = Math.floor(query.nowMs / DAY_MS);
  const firstDay = lastDay - query.days + 1;
  const rows = await db.all<DayRow>(query.test ? SQL.test : SQL.live, {
    key: query.keyId,
    start_ms: firstDay * DAY_MS,
    end_ms: (lastDay + 1) * DAY_MS,
    first_day: firstDay,
    last_day: lastDay,
  });
  const totals: UsageFigures = { requests: 0, connection_minutes: 0, errors: 0 };
  const days = rows.map((row): UsageDay => {
    const day = {
      date: row.date,
      requests: Number(row.requests),
      connection_minutes: Number(row.connection_minutes),
      errors: Number(row.errors),
    };
    totals.requests += day.requests;
    totals.connection_minutes += day.connection_minutes;
    totals.errors += day.errors;
    return day;
  });
  const first = days[0];
  const last = days[days.length - 1];
  if (!first || !last || days.length !== query.days) {
    throw new Error(`usage query returned ${days.length} days for a range of ${query.days}`);
  }
  return { from: first.date, to: last.date, days, totals };
}
