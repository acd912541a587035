// One key's metered usage per UTC day, as the developer dashboard charts it: requests,
// connection-minutes and error responses, read from the per-second usage buckets the meter
// writes (the query is accounts/store.ts usageDayRows).
import type { Db } from '../store/db.ts';
import { usageDayRows } from './store.ts';
import { DAY_MS } from '../core/dates.ts';

export const USAGE_DAYS_DEFAULT = 14;
export const USAGE_DAYS_MAX = 90;

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

/** The key's usage per UTC day over the last `days` days, today included. */
export async function dailyUsage(db: Db, query: UsageQuery): Promise<UsageReport> {
  if (!Number.isInteger(query.days) || query.days < 1 || query.days > USAGE_DAYS_MAX) {
    throw new RangeError(`days must be a whole number from 1 to ${USAGE_DAYS_MAX}, got ${query.days}`);
  }
  if (!Number.isFinite(query.nowMs)) throw new RangeError(`nowMs must be a finite time, got ${query.nowMs}`);
  const lastDay = Math.floor(query.nowMs / DAY_MS);
  const firstDay = lastDay - query.days + 1;
  const rows = await usageDayRows(db, { keyId: query.keyId, test: query.test, firstDay, lastDay });
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
