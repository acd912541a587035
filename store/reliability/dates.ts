// Service dates are plain 'YYYY-MM-DD' strings: a service date is a calendar day of the agency,
// not an instant, so it never goes through a JS Date in a local zone.

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Is `value` a real calendar date written YYYY-MM-DD? */
export function isServiceDate(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  const m = DATE_RE.exec(value);
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.toISOString().slice(0, 10) === value;
}

export function addDays(serviceDate: string, days: number): string {
  const m = DATE_RE.exec(serviceDate);
  if (!m) throw new RangeError(`not a date: ${serviceDate}`);
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]) + days));
  return d.toISOString().slice(0, 10);
}

/** Whole days from `a` to `b` (b - a). */
export function daysBetween(a: string, b: string): number {
  return Math.round((Date.parse(`${b}T00:00:00Z`) - Date.parse(`${a}T00:00:00Z`)) / 86_400_000);
}

export function isTimeZone(tz: unknown): tz is string {
  if (typeof tz !== 'string' || tz.length === 0) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** The calendar date and minutes after midnight of `instant` on the wall clock of `tz`. */
export function wallClock(instant: Date, tz: string): { date: string; minutes: number } {
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone: tz, year: 'numeric', month: '2-digit', day: '2-digit',
    hour: '2-digit', minute: '2-digit', hourCycle: 'h23',
  }).formatToParts(instant);
  const get = (type: string): string => parts.find((p) => p.type === type)?.value ?? '00';
  return {
    date: `${get('year')}-${get('month')}-${get('day')}`,
    minutes: Number(get('hour')) * 60 + Number(get('minute')),
  };
}

/** 'HH:MM' → minutes after midnight. */
export function parseClock(hhmm: string): number {
  const m = /^([01]\d|2[0-3]):([0-5]\d)$/.exec(hhmm);
  if (!m) throw new RangeError(`not a HH:MM time: ${hhmm}`);
  return Number(m[1]) * 60 + Number(m[2]);
}

/**
 * The last service date that is over at `now`: a service date D runs until `serviceDayEnd`
 * (local wall clock) on D + 1, because trips after midnight still belong to D.
 */
export function completeThrough(now: Date, tz: string, serviceDayEnd: string): string {
  const local = wallClock(now, tz);
  return addDays(local.date, local.minutes < parseClock(serviceDayEnd) ? -2 : -1);
}
