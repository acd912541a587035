// Wall clocks and UTC offsets of IANA time zones, from Intl alone. One formatter per zone is kept:
// building one costs far more than formatting with it.

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(tz: string): Intl.DateTimeFormat {
  let f = formatters.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: tz, hourCycle: 'h23',
      year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit',
    });
    formatters.set(tz, f);
  }
  return f;
}

function wallClock(ms: number, tz: string): { y: number; m: number; d: number; h: number; min: number; s: number } {
  const parts: Record<string, number> = {};
  for (const p of formatter(tz).formatToParts(ms)) if (p.type !== 'literal') parts[p.type] = Number(p.value);
  return { y: parts.year!, m: parts.month!, d: parts.day!, h: parts.hour!, min: parts.minute!, s: parts.second! };
}

/** Offset of `tz` from UTC at instant `ms`, in ms (east positive: America/Chicago in winter is -6 h). */
export function zoneOffsetMs(ms: number, tz: string): number {
  const w = wallClock(ms, tz);
  return Date.UTC(w.y, w.m - 1, w.d, w.h, w.min, w.s) - Math.floor(ms / 1000) * 1000;
}

/** 'YYYY-MM-DD' of instant `ms` on the wall clock of `tz`. */
export function localDate(ms: number, tz: string): string {
  const w = wallClock(ms, tz);
  return `${w.y}-${pad(w.m)}-${pad(w.d)}`;
}

function pad(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}
