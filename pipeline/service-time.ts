// Service dates and GTFS times in an agency's time zone. GTFS counts stop times from "noon minus
// 12 h" of the service date, which differs from midnight on the days clocks change.
import { localDate, zoneOffsetMs } from '../core/time-zone.ts';

const DAY_MS = 86_400_000;
const dayStartCache = new Map<string, number>();

/** Epoch ms of "noon minus 12 h" on `serviceDate` ('YYYY-MM-DD') in `zone`: the origin of GTFS times. */
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

/** GTFS-RT start_date 'YYYYMMDD' → 'YYYY-MM-DD', or null when malformed. */
export function parseStartDate(value: string | undefined): string | null {
  if (!value) return null;
  // a feed names a handful of dates, thousands of times per poll
  const cached = startDateCache.get(value);
  if (cached !== undefined) return cached;
  let iso: string | null = null;
  if (/^\d{8}$/.test(value)) {
    iso = `${value.slice(0, 4)}-${value.slice(4, 6)}-${value.slice(6, 8)}`;
    const t = Date.parse(`${iso}T00:00:00Z`);
    if (Number.isNaN(t) || new Date(t).toISOString().slice(0, 10) !== iso) iso = null;
  }
  if (startDateCache.size > 1_000) startDateCache.clear();
  startDateCache.set(value, iso);
  return iso;
}
const startDateCache = new Map<string, string | null>();

/** 'HH:MM:SS' (hours may pass 24) → seconds, or null. */
export function parseGtfsTime(value: string | undefined): number | null {
  const match = value ? /^(\d{1,3}):([0-5]\d):([0-5]\d)$/.exec(value) : null;
  if (!match) return null;
  return Number(match[1]) * 3600 + Number(match[2]) * 60 + Number(match[3]);
}

/** The calendar day before 'YYYY-MM-DD'. */
export function previousDate(date: string): string {
  const cached = previousCache.get(date);
  if (cached !== undefined) return cached;
  const previous = new Date(Date.parse(`${date}T00:00:00Z`) - DAY_MS).toISOString().slice(0, 10);
  if (previousCache.size > 1_000) previousCache.clear();
  previousCache.set(date, previous);
  return previous;
}
const previousCache = new Map<string, string>();

/** The service dates around an instant that a running trip may belong to, oldest first. */
export function candidateServiceDates(ms: number, zone: string): string[] {
  const today = localDate(ms, zone);
  const base = Date.parse(`${today}T00:00:00Z`);
  return [base - DAY_MS, base, base + DAY_MS].map((t) => new Date(t).toISOString().slice(0, 10));
}
