import type { Db } from '../db.ts';
import { addDays, daysBetween } from '../../core/dates.ts';
import { reliabilityReadVersion } from './live.ts';
import { bind, statement } from './sql.ts';

const OBSERVED = statement('observed_days');

/**
 * What a rollup knows of each day of first..to whatever the route: finalized or not, and whether
 * any trip of any mode was seen. One character per day from `first` ('1' yes, '0' no), the shape
 * rollup.sql takes as a parameter.
 */
export interface ReliabilityCalendar {
  first: string;
  to: string;
  final: string;
  observed: string;
}

const memos = new WeakMap<Db, Map<string, { version: string; calendar: ReliabilityCalendar }>>();

/**
 * The calendar of first..to, read again only when a day was finalized, schedules changed or the
 * live counts were recomputed (reliabilityReadVersion): every rollup needs it, and it is the same
 * for every route and group.
 */
export async function reliabilityCalendar(db: Db, first: string, to: string): Promise<ReliabilityCalendar> {
  const key = `${first}|${to}`;
  let memo = memos.get(db);
  if (!memo) {
    memo = new Map();
    memos.set(db, memo);
  }
  const version = reliabilityReadVersion(db);
  const hit = memo.get(key);
  if (hit && hit.version === version) return hit.calendar;
  const finalDays = await db.all<{ d: string }>(
    `SELECT strftime(service_date, '%Y-%m-%d') AS d FROM reliability_finalized
     WHERE service_date BETWEEN CAST($first AS DATE) AND CAST($to AS DATE)`,
    { first, to },
  );
  const observedDays = await db.all<{ d: string }>(
    `SELECT strftime(service_date, '%Y-%m-%d') AS d FROM (${OBSERVED.text})`,
    bind(OBSERVED, { first, to }),
  );
  const calendar = { first, to, final: mask(first, to, finalDays), observed: mask(first, to, observedDays) };
  if (memo.size >= 256) memo.delete(memo.keys().next().value!);
  memo.set(key, { version, calendar });
  return calendar;
}

function mask(first: string, to: string, days: readonly { d: string }[]): string {
  const bits = new Array<string>(daysBetween(first, to) + 1).fill('0');
  for (const { d } of days) bits[daysBetween(first, d)] = '1';
  return bits.join('');
}

/** Days of from..to (inside the calendar) on which no trip was seen. */
export function daysWithoutObservations(calendar: ReliabilityCalendar, from: string, to: string): string[] {
  const out: string[] = [];
  const start = daysBetween(calendar.first, from);
  const end = daysBetween(calendar.first, to);
  for (let i = Math.max(0, start); i <= end && i < calendar.observed.length; i++) {
    if (calendar.observed[i] === '0') out.push(addDays(calendar.first, i));
  }
  return out;
}
