import { addDays, DAY_MS, earlierDate, laterDate, utcDate } from '../../core/dates.ts';
// The performance section's choices, free of the DOM (tests import them directly): the default
// range, the form's values checked before any request (the endpoint is metered), the request
// path, the default range moved inside the retained window, and which notes explain a gap.

export const PERFORMANCE_MODES = ['bus', 'rail', 'streetcar'] as const;
export type PerformanceMode = (typeof PERFORMANCE_MODES)[number];
export const PERFORMANCE_GROUPS = ['day', 'week'] as const;
export type PerformanceGroup = (typeof PERFORMANCE_GROUPS)[number];
/** The range shown until the developer picks one: the last 14 days, as the usage chart. */
export const DEFAULT_RANGE_DAYS = 14;

export interface PerformanceQuery {
  mode: PerformanceMode;
  route: string;
  group: PerformanceGroup;
  /** '' leaves the bound to the API's default */
  from: string;
  to: string;
}

export interface DateRange {
  from: string;
  to: string;
}

/** The last DEFAULT_RANGE_DAYS days up to today (UTC, as the rest of the page). */
export function defaultRange(now: Date): DateRange {
  const to = utcDate(now.getTime());
  return { from: addDays(to, -(DEFAULT_RANGE_DAYS - 1)), to };
}

export interface PerformanceValues {
  mode?: string;
  route?: string;
  group?: string;
  from?: string;
  to?: string;
  /** a date input's value is '' both when empty and when half typed: badInput tells the two apart */
  fromBad?: boolean;
  toBad?: boolean;
}

export type PerformanceField = 'route' | 'from' | 'to';
export type CheckedQuery =
  | { query: PerformanceQuery; error?: undefined; field?: undefined }
  | { error: string; field: PerformanceField; query?: undefined };

export function checkPerformanceQuery(values: PerformanceValues): CheckedQuery {
  const mode = (PERFORMANCE_MODES as readonly string[]).includes(values.mode || '')
    ? (values.mode as PerformanceMode)
    : 'bus';
  const group = values.group === 'week' ? 'week' : 'day';
  const route = String(values.route || '');
  const from = String(values.from || '');
  const to = String(values.to || '');
  if (!route) return { error: `Pick a ${mode === 'rail' ? 'line' : 'route'} first.`, field: 'route' };
  if (values.fromBad)
    return { error: 'The "from" service day is incomplete: pick a date or clear the field.', field: 'from' };
  if (values.toBad)
    return { error: 'The "to" service day is incomplete: pick a date or clear the field.', field: 'to' };
  if (from && to && from > to)
    return { error: `The range ends before it starts: "from" (${from}) is after "to" (${to}).`, field: 'from' };
  return { query: { mode, route, group, from, to } };
}

/** The endpoint's path for the query; `group` 'period' asks one row for the whole range. */
export function performancePath(q: PerformanceQuery, group: PerformanceGroup | 'period' = q.group): string {
  const params = new URLSearchParams({ group });
  if (q.from) params.set('from', q.from);
  if (q.to) params.set('to', q.to);
  return `${q.mode}/${encodeURIComponent(q.route)}/performance?${params.toString()}`;
}

/** The retained window an outside_retention problem names, else null. */
export function retainedWindowOf(problem: unknown): DateRange | null {
  if (!problem || typeof problem !== 'object') return null;
  const { code, retained_window: w } = problem as { code?: unknown; retained_window?: unknown };
  if (code !== 'outside_retention' || !w || typeof w !== 'object') return null;
  const { from, to } = w as { from?: unknown; to?: unknown };
  return typeof from === 'string' && typeof to === 'string' && from <= to ? { from, to } : null;
}

/** A range moved inside the window, as long as before where the window allows. */
export function fitRange(range: DateRange, window: DateRange): DateRange {
  const days = Math.max(1, Math.round((Date.parse(range.to) - Date.parse(range.from)) / DAY_MS) + 1);
  const to = laterDate(earlierDate(range.to, window.to), window.from);
  const from = addDays(to, -(days - 1));
  return { from: laterDate(from, window.from), to };
}

/** The row's notes that name one of `fields` (why they are null); all its notes when none does. */
export function notesFor(notes: readonly string[], fields: readonly string[]): string[] {
  const named = notes.filter((note) => {
    const head = note.split(':')[0] || '';
    return fields.some((f) => head.includes(f));
  });
  return named.length ? named : notes.slice();
}

export interface RouteChoice {
  id: string;
  label: string;
}

/** A directory entry as an option: its id (route_id, or line for rail) and a readable label. */
export function routeChoice(entry: {
  route_id?: string;
  line?: string;
  short_name: string | null;
  long_name: string | null;
}): RouteChoice | null {
  const id = entry.route_id ?? entry.line;
  if (typeof id !== 'string' || id === '') return null;
  const name = entry.short_name && entry.short_name !== id ? `${entry.short_name} (${id})` : id;
  return { id, label: entry.long_name ? `${name} · ${entry.long_name}` : name };
}
