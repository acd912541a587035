// Service dates and GTFS times in an agency's time zone. GTFS counts stop times from "noon minus
// 12 h" of the service date, which differs from midnight on the days clocks change.

const DAY_MS = 86_400_000;
const formatters = new Map<string, Intl.DateTimeFormat>();
const dayStartCache = new Map<string, number>();

function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone, hourCycle: 'h23',
      year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit',
    });
    formatters.set(zone, f);
  }
  return f;
}

function wallClock(ms: number, zone: string): { y: number; m: number; d: number; h: number; min: number; s: number } {
  const parts: Record<string, number> = {};
  for (const p of formatter(zone).formatToParts(ms)) if (p.type !== 'literal') parts[p.type] = Number(p.value);
  return { y: parts.year!, m: parts.month!, d: parts.day!, h: parts.hour!, min: parts.minute!, s: parts.second! };
}

/** Offset of `zone` from UTC at instant `ms`, in ms (east positive). */
export function zoneOffsetMs(ms: number, zone: string): number {
  const w = wallClock(ms, zone);
  return Date.UTC(w.y, w.m - 1, w.d, w.h, w.min, w.s) - Math.floor(ms / 1000) * 1000;
}

/** 'YYYY-MM-DD' of instant `ms` in `zone`. */
export function localDate(ms: number, zone: string): string {
  const w = wallClock(ms, zone);
  return `${w.y}-${pad(w.m)}-${pad(w.d)}`;
}

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

/** The service dates around an instant that a running trip may belong to, oldest first. */
export function candidateServiceDates(ms: number, zone: string): string[] {
  const today = localDate(ms, zone);
  const base = Date.parse(`${today}T00:00:00Z`);
  return [base - DAY_MS, base, base + DAY_MS].map((t) => new Date(t).toISOString().slice(0, 10));
}

function pad(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}
