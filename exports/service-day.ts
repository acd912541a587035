// Which instants belong to a service day. A service day D runs from `serviceDayEnd` (local wall
// clock, default 04:00) on D to the same time on D + 1, as in reliability, so a position observed
// at 01:30 after midnight stays with the day whose trips were running.
import { zoneOffsetMs } from '../core/time-zone.ts';
import { addDays, isServiceDate, isTimeZone, parseClock } from '../store/reliability/dates.ts';

export interface ServiceDayWindow {
  date: string;
  timezone: string;
  /** first instant of the day (inclusive) */
  start: Date;
  /** first instant of the next day (exclusive) */
  end: Date;
}

/**
 * The instant at which the wall clock of `tz` shows `date` plus `minutes`, disambiguated as
 * Temporal's "compatible" mode does: a repeated time (autumn) takes its first occurrence, a time
 * inside the spring gap is read with the offset before the jump (02:30 becomes 03:30).
 */
export function localInstant(date: string, minutes: number, tz: string): Date {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  const wall = Date.UTC(y, m - 1, d) + minutes * 60_000;
  // offsets a day away lie on either side of any transition near `wall`
  const before = zoneOffsetMs(wall - 86_400_000, tz);
  const after = zoneOffsetMs(wall + 86_400_000, tz);
  const valid = [wall - before, wall - after].filter((t) => t + zoneOffsetMs(t, tz) === wall);
  return new Date(valid.length > 0 ? Math.min(...valid) : wall - before);
}

export function serviceDayWindow(date: string, timezone: string, serviceDayEnd = '04:00'): ServiceDayWindow {
  if (!isServiceDate(date)) throw new RangeError(`not a date (YYYY-MM-DD): ${date}`);
  if (!isTimeZone(timezone)) throw new RangeError(`unknown time zone: ${timezone}`);
  const minutes = parseClock(serviceDayEnd);
  return {
    date,
    timezone,
    start: localInstant(date, minutes, timezone),
    end: localInstant(addDays(date, 1), minutes, timezone),
  };
}

/** Every date from `from` to `to`, both included. */
export function dateRange(from: string, to: string): string[] {
  const days: string[] = [];
  for (let d = from; d <= to; d = addDays(d, 1)) days.push(d);
  return days;
}
