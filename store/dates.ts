// Calendar dates as whole days since 1970-01-01: how DuckDB stores DATE, and cheap to compare.

const MS_PER_DAY = 86_400_000;

/** 'YYYY-MM-DD' (or 'YYYYMMDD') → days since 1970-01-01, or null when not a real date. */
export function epochDay(date: string): number | null {
  const m = /^(\d{4})-?(\d{2})-?(\d{2})$/.exec(date);
  if (!m) return null;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const ms = Date.UTC(y, mo - 1, d);
  const back = new Date(ms);
  if (back.getUTCFullYear() !== y || back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d) return null;
  return ms / MS_PER_DAY;
}

/** 0 = Sunday … 6 = Saturday, as Date.getUTCDay(); 1970-01-01 was a Thursday. */
export function weekdayOfEpochDay(day: number): number {
  return (((day + 4) % 7) + 7) % 7;
}
