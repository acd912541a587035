// Calendar dates, wall clocks and service days: the one module for them. A service date is a
// plain 'YYYY-MM-DD' string, a calendar day of the agency rather than an instant, so it never goes
// through a JS Date in a local zone; zone arithmetic uses Intl alone, one formatter per zone kept
// (building one costs far more than formatting with it). The dashboard's browser code imports it
// too, so it keeps to what ES2020 has.

export const DAY_MS = 86_400_000;

// ---- instants (epoch milliseconds) as text

// Date holds ±8.64e15 ms; feed data beyond it (a seconds field read as ms) must not throw
const MAX_DATE_MS = 8.64e15;

// Feeds repeat the same instants poll after poll (every stop's scheduled time, most predictions,
// the poll's own time), so most lookups find a string made before: no Date, no new string.
const MAX_CACHED_INSTANTS = 100_000;
const isoStrings = new Map<number, string>();

/**
 * ISO 8601 of epoch ms (a number, or a BIGINT as DuckDB returns it), or null for null or an
 * instant Date cannot hold. Every arrival of every trip-updates poll formats three instants (31k
 * rows a poll on a large feed), where a Date and its toISOString per instant were the largest cost
 * of the poll and of its garbage.
 */
export function iso(value: number | bigint | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  const ms = Number(value);
  if (!Number.isFinite(ms) || Math.abs(ms) > MAX_DATE_MS) return null;
  let out = isoStrings.get(ms);
  if (out === undefined) {
    if (isoStrings.size >= MAX_CACHED_INSTANTS) isoStrings.clear();
    out = new Date(ms).toISOString();
    isoStrings.set(ms, out);
  }
  return out;
}

/** iso of `ms`, else of `fallbackMs`, else the epoch: never null. */
export function isoOr(ms: number, fallbackMs: number): string {
  return iso(ms) ?? iso(fallbackMs) ?? new Date(0).toISOString();
}

/** iso of an instant that must be one (a clock reading, a NOT NULL column): a RangeError otherwise. */
export function isoRequired(ms: number | bigint): string {
  const out = iso(ms);
  if (out === null) throw new RangeError(`not an instant Date can hold: ${ms} ms`);
  return out;
}

/** An instant in a message for people: ISO 8601 without zero milliseconds, or `<n> ms` when no Date holds it. */
export function instantText(ms: number): string {
  return iso(ms)?.replace('.000Z', 'Z') ?? `${ms} ms`;
}

// ---- calendar dates ('YYYY-MM-DD'; GTFS writes 'YYYYMMDD')

const YMD = /^(\d{4})-?(\d{2})-?(\d{2})$/;
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Epoch ms of UTC midnight of a real date in either form, or null. */
function utcMidnight(date: string, re = YMD): number | null {
  const m = re.exec(date);
  if (!m) return null;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const ms = Date.UTC(y, mo - 1, d);
  const back = new Date(ms);
  return back.getUTCFullYear() === y && back.getUTCMonth() === mo - 1 && back.getUTCDate() === d ? ms : null;
}

function requireDate(date: string): number {
  const ms = utcMidnight(date);
  if (ms !== null) return ms;
  throw new RangeError(
    YMD.test(date) ? `no such date: ${date}` : `not a date (YYYY-MM-DD or YYYYMMDD): ${JSON.stringify(date)}`,
  );
}

/** The UTC calendar date of an instant: 'YYYY-MM-DD'. */
export const utcDate = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
const isoOf = utcDate;

/** Is `value` a real calendar date written YYYY-MM-DD? */
export function isServiceDate(value: unknown): value is string {
  return typeof value === 'string' && utcMidnight(value, ISO_DATE) !== null;
}

/** 'YYYY-MM-DD' (or 'YYYYMMDD') → days since 1970-01-01 (how DuckDB stores DATE), or null when not a real date. */
export function epochDay(date: string): number | null {
  const ms = utcMidnight(date);
  return ms === null ? null : ms / DAY_MS;
}

/**
 * Days since 1970-01-01 → 'YYYY-MM-DD', by arithmetic (Hinnant's civil_from_days): twenty times
 * cheaper than a Date and toISOString, for code that labels thousands of days per request.
 */
export function dateOfEpochDay(day: number): string {
  const z = day + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  const y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  return `${String(y).padStart(4, '0')}-${m < 10 ? '0' : ''}${m}-${d < 10 ? '0' : ''}${d}`;
}

/** 0 = Sunday … 6 = Saturday, as Date.getUTCDay(); 1970-01-01 was a Thursday. */
export function weekdayOfEpochDay(day: number): number {
  return (((day + 4) % 7) + 7) % 7;
}

/** 1 = Monday … 7 = Sunday, as DuckDB's isodow, of a day counted from 1970-01-01. */
export function isoWeekdayOfEpochDay(day: number): number {
  return ((weekdayOfEpochDay(day) + 6) % 7) + 1;
}

/** 0 = Sunday … 6 = Saturday. */
export function weekday(date: string): number {
  return new Date(requireDate(date)).getUTCDay();
}

/** YYYY-MM-DD from either YYYY-MM-DD or YYYYMMDD (RangeError when not a real date). */
export function isoDate(date: string): string {
  return isoOf(requireDate(date));
}

/** YYYYMMDD, as GTFS and GTFS-RT start_date write it. */
export function gtfsDate(date: string): string {
  return isoDate(date).replace(/-/g, '');
}

export function addDays(date: string, days: number): string {
  return isoOf(requireDate(date) + days * DAY_MS);
}

/** The calendar day before 'YYYY-MM-DD' (cached: a feed names a handful of dates thousands of times per poll). */
export function previousDate(date: string): string {
  const cached = previousCache.get(date);
  if (cached !== undefined) return cached;
  const previous = isoOf(Date.parse(`${date}T00:00:00Z`) - DAY_MS);
  if (previousCache.size > 1_000) previousCache.clear();
  previousCache.set(date, previous);
  return previous;
}
const previousCache = new Map<string, string>();

/** The earlier of two 'YYYY-MM-DD' dates (they sort as text). */
export function earlierDate(a: string, b: string): string {
  return a < b ? a : b;
}

/** The later of two 'YYYY-MM-DD' dates. */
export function laterDate(a: string, b: string): string {
  return a > b ? a : b;
}

/** Whole days from `a` to `b` (b - a). */
export function daysBetween(a: string, b: string): number {
  return Math.round((Date.parse(`${b}T00:00:00Z`) - Date.parse(`${a}T00:00:00Z`)) / DAY_MS);
}

/** Every date from `from` to `to`, both included, as YYYY-MM-DD (either form accepted). */
export function dateRange(from: string, to: string): string[] {
  const days: string[] = [];
  const last = isoDate(to);
  for (let d = isoDate(from); d <= last; d = addDays(d, 1)) days.push(d);
  return days;
}

/** The ISO week of a day counted from 1970-01-01 as DuckDB's strftime '%G-W%V' writes it: 2024-12-30 → '2025-W01'. */
export function isoWeekLabelOfEpochDay(day: number): string {
  const thursday = day + 4 - isoWeekdayOfEpochDay(day);
  const thursdayDate = dateOfEpochDay(thursday);
  const year = Number(thursdayDate.slice(0, 4));
  const week = Math.floor((thursday - Date.UTC(year, 0, 1) / DAY_MS) / 7) + 1;
  return `${thursdayDate.slice(0, 4)}-W${week < 10 ? '0' : ''}${week}`;
}

/** GTFS-RT start_date 'YYYYMMDD' → 'YYYY-MM-DD', or null when malformed. */
export function parseStartDate(value: string | undefined): string | null {
  if (!value) return null;
  const cached = startDateCache.get(value);
  if (cached !== undefined) return cached;
  const ms = /^\d{8}$/.test(value) ? utcMidnight(value) : null;
  const iso = ms === null ? null : isoOf(ms);
  if (startDateCache.size > 1_000) startDateCache.clear();
  startDateCache.set(value, iso);
  return iso;
}
const startDateCache = new Map<string, string | null>();

// ---- times of day

/** 'HH:MM:SS' (hours may pass 24; spaces around ignored) → seconds, or null. */
export function parseGtfsTime(value: string | undefined): number | null {
  const match = value ? /^\s*(\d{1,3}):([0-5]\d):([0-5]\d)\s*$/.exec(value) : null;
  if (!match) return null;
  return Number(match[1]) * 3600 + Number(match[2]) * 60 + Number(match[3]);
}

/** seconds → 'HH:MM:SS' (hours may exceed 23). */
export function formatGtfsTime(seconds: number): string {
  const s = Math.round(seconds);
  const two = (n: number) => String(n).padStart(2, '0');
  return `${two(Math.floor(s / 3600))}:${two(Math.floor((s % 3600) / 60))}:${two(s % 60)}`;
}

/** 'HH:MM' → minutes after midnight. */
export function parseClock(hhmm: string): number {
  const m = /^([01]\d|2[0-3]):([0-5]\d)$/.exec(hhmm);
  if (!m) throw new RangeError(`not a HH:MM time: ${hhmm}`);
  return Number(m[1]) * 60 + Number(m[2]);
}

// ---- time zones and wall clocks

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(tz: string): Intl.DateTimeFormat {
  let f = formatters.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: tz,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(tz, f);
  }
  return f;
}

export function isTimeZone(tz: unknown): tz is string {
  if (typeof tz !== 'string' || tz.length === 0) return false;
  try {
    formatter(tz);
    return true;
  } catch {
    return false;
  }
}

function wallParts(ms: number, tz: string): { y: number; m: number; d: number; h: number; min: number; s: number } {
  const parts: Record<string, number> = {};
  for (const p of formatter(tz).formatToParts(ms)) if (p.type !== 'literal') parts[p.type] = Number(p.value);
  return { y: parts.year!, m: parts.month!, d: parts.day!, h: parts.hour!, min: parts.minute!, s: parts.second! };
}

const pad = (n: number): string => (n < 10 ? `0${n}` : String(n));

/** Offset of `tz` from UTC at instant `ms`, in ms (east positive: America/Chicago in winter is -6 h). */
export function zoneOffsetMs(ms: number, tz: string): number {
  const w = wallParts(ms, tz);
  return Date.UTC(w.y, w.m - 1, w.d, w.h, w.min, w.s) - Math.floor(ms / 1000) * 1000;
}

/** 'YYYY-MM-DD' of instant `ms` on the wall clock of `tz`. */
export function localDate(ms: number, tz: string): string {
  const w = wallParts(ms, tz);
  return `${w.y}-${pad(w.m)}-${pad(w.d)}`;
}

/** The calendar date and minutes after midnight of `instant` on the wall clock of `tz`. */
export function wallClock(instant: Date, tz: string): { date: string; minutes: number } {
  const w = wallParts(instant.getTime(), tz);
  return { date: `${w.y}-${pad(w.m)}-${pad(w.d)}`, minutes: w.h * 60 + w.min };
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
  const before = zoneOffsetMs(wall - DAY_MS, tz);
  const after = zoneOffsetMs(wall + DAY_MS, tz);
  const valid = [wall - before, wall - after].filter((t) => t + zoneOffsetMs(t, tz) === wall);
  return new Date(valid.length > 0 ? Math.min(...valid) : wall - before);
}

// ---- service days

/**
 * Which instants belong to a service day. A service day D runs from `serviceDayEnd` (local wall
 * clock, reliability.service_day_end) on D to the same time on D + 1, as in reliability, so a position observed
 * at 01:30 after midnight stays with the day whose trips were running.
 */
export interface ServiceDayWindow {
  date: string;
  timezone: string;
  /** first instant of the day (inclusive) */
  start: Date;
  /** first instant of the next day (exclusive) */
  end: Date;
}

export function serviceDayWindow(date: string, timezone: string, serviceDayEnd: string): ServiceDayWindow {
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

/**
 * The last service date that is over at `now`: a service date D runs until `serviceDayEnd`
 * (local wall clock) on D + 1, because trips after midnight still belong to D.
 */
export function completeThrough(now: Date, tz: string, serviceDayEnd: string): string {
  const local = wallClock(now, tz);
  return addDays(local.date, local.minutes < parseClock(serviceDayEnd) ? -2 : -1);
}

const dayStartCache = new Map<string, number>();

/**
 * Epoch ms of "noon minus 12 h" on `serviceDate` ('YYYY-MM-DD') in `zone`: the origin of GTFS
 * times, which differs from midnight on the days clocks change.
 */
export function serviceDayOriginMs(serviceDate: string, zone: string): number {
  const key = `${zone}|${serviceDate}`;
  const cached = dayStartCache.get(key);
  if (cached !== undefined) return cached;
  const [y, m, d] = serviceDate.split('-').map(Number) as [number, number, number];
  const noonUtc = Date.UTC(y, m - 1, d, 12);
  // noon local = noonUtc - offset; at noon no zone is inside a DST jump, so one correction is exact
  const noonLocal = noonUtc - zoneOffsetMs(noonUtc - zoneOffsetMs(noonUtc, zone), zone);
  const origin = noonLocal - 12 * 3_600_000;
  if (dayStartCache.size > 10_000) dayStartCache.clear();
  dayStartCache.set(key, origin);
  return origin;
}

/** The service dates around an instant that a running trip may belong to, oldest first. */
export function candidateServiceDates(ms: number, zone: string): string[] {
  const base = Date.parse(`${localDate(ms, zone)}T00:00:00Z`);
  return [base - DAY_MS, base, base + DAY_MS].map(isoOf);
}
