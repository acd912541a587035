// The rollup's rows from what rollup.sql returns: it sums and windows the routes' days, and the
// calendar (days, final, days_observed, labels) is added here, once per group rather than once
// per route and day inside the query, as are the groups a route has no rows in.
import type { DuckDBValue } from '@duckdb/node-api';
import { dateOfEpochDay, epochDay, isoWeekdayOfEpochDay, isoWeekLabelOfEpochDay, laterDate } from '../../core/dates.ts';
import type { ReliabilityCalendar } from './calendar.ts';
import { observedFigures, percent } from './coverage.ts';
import type { RollupCounts, RollupGroup, RollupRow, ServiceDayType } from './rollup.ts';

const COUNT_NAMES = [
  'scheduled',
  'delivered',
  'canceled',
  'canceled_unscheduled',
  'partially_canceled',
  'unobserved',
  'pending',
  'added',
] as const;
type Counts = Omit<RollupCounts, 'delivered_pct' | 'observed' | 'delivered_pct_of_observed'>;

/** rollup_select_grouped.sql's day_type: 0 not split, then ISO weekday types. */
const DAY_TYPES: readonly ServiceDayType[] = ['all', 'weekday', 'saturday', 'sunday'];

function dayTypeOf(epoch: number, split: boolean): number {
  if (!split) return 0;
  const dow = isoWeekdayOfEpochDay(epoch);
  return dow === 6 ? 2 : dow === 7 ? 3 : 1;
}

/** DuckDB orders VARCHAR by UTF-8 bytes, which is code point order; JS's `<` compares UTF-16 units. */
export function compareCodePoints(a: string, b: string): number {
  const ia = a[Symbol.iterator]();
  const ib = b[Symbol.iterator]();
  for (;;) {
    const x = ia.next();
    const y = ib.next();
    if (x.done || y.done) return x.done ? (y.done ? 0 : -1) : 1;
    const d = x.value.codePointAt(0)! - y.value.codePointAt(0)!;
    if (d !== 0) return d;
  }
}

/** The result's columns by name (DuckDB's column-major read: a third of the cost of rows). */
type Columns = Record<string, readonly DuckDBValue[]>;

function byName(
  names: readonly string[],
  columns: readonly (readonly DuckDBValue[])[],
  wanted: readonly string[],
): Columns {
  const out: Columns = {};
  // no rows: DuckDB returns no columns at all
  names.forEach((n, i) => {
    out[n] = columns[i] ?? [];
  });
  for (const n of wanted) if (out[n] === undefined) throw new Error(`rollup.sql returns no ${n} column`);
  return out;
}

function countsAt(c: Columns, row: number): Counts {
  const out = {} as Counts;
  for (const n of COUNT_NAMES) out[n] = c[n]![row] as number;
  return out;
}

const ZERO: Counts = Object.freeze(Object.fromEntries(COUNT_NAMES.map((n) => [n, 0])) as Counts);

/** Row numbers in (route_no, day) order: the window's order as a rule, so usually only checked. */
function dayOrder(routeNo: readonly DuckDBValue[], day: readonly DuckDBValue[]): number[] {
  const order = Array.from({ length: routeNo.length }, (_, i) => i);
  const before = (i: number, j: number): number =>
    (routeNo[i] as number) - (routeNo[j] as number) || (day[i] as number) - (day[j] as number);
  for (let i = 1; i < order.length; i++) {
    if (before(i - 1, i) > 0) return order.sort(before);
  }
  return order;
}

/** rollup_select_days.sql's rows (one per route and day from `from`) as rollup rows, by route and day. */
export function dayRows(
  names: readonly string[],
  columns: readonly (readonly DuckDBValue[])[],
  calendar: ReliabilityCalendar,
  split: boolean,
): RollupRow[] {
  const c = byName(names, columns, [
    'route_id',
    'route_no',
    'day',
    ...COUNT_NAMES,
    'delivered_7d',
    'scheduled_7d',
    'unobserved_7d',
    'pending_7d',
  ]);
  const origin = epochDay(calendar.first)!;
  const labels = new Map<number, string>();
  const label = (day: number): string => {
    let found = labels.get(day);
    if (found === undefined) {
      found = dateOfEpochDay(origin + day);
      labels.set(day, found);
    }
    return found;
  };
  return dayOrder(c.route_no!, c.day!).map((row) => {
    const day = c.day![row] as number;
    const date = label(day);
    const counts = countsAt(c, row);
    const scheduled7d = c.scheduled_7d![row] as number;
    const delivered7d = c.delivered_7d![row] as number;
    const unobserved7d = c.unobserved_7d![row] as number;
    const observed7d = observedFigures({
      scheduled: scheduled7d,
      delivered: delivered7d,
      unobserved: unobserved7d,
      pending: c.pending_7d![row] as number,
    });
    return {
      route_id: c.route_id![row] as string,
      period: date,
      period_start: date,
      period_end: date,
      service_day: DAY_TYPES[dayTypeOf(origin + day, split)]!,
      days: 1,
      final: calendar.final[day] === '1',
      days_observed: calendar.observed[day] === '1' ? 1 : 0,
      ...counts,
      delivered_pct: percent(counts.delivered, counts.scheduled),
      ...observedFigures(counts),
      rolling_7d: {
        from: label(day - 6),
        to: date,
        scheduled: scheduled7d,
        delivered: delivered7d,
        delivered_pct: percent(delivered7d, scheduled7d),
        unobserved: unobserved7d,
        ...observed7d,
      },
    };
  });
}

interface CalendarGroup {
  groupDay: number;
  dayType: number;
  days: number;
  final: boolean;
  observed: number;
}

/**
 * The groups of from..to (weeks cut by the range, or the period), split by day type, in order.
 * Days are counted as integers from the calendar's first day: a year of date strings parsed one
 * by one costs more than the query.
 */
function calendarGroups(
  calendar: ReliabilityCalendar,
  group: RollupGroup,
  from: string,
  to: string,
  split: boolean,
): CalendarGroup[] {
  const origin = epochDay(calendar.first)!;
  const start = epochDay(from)! - origin;
  const end = epochDay(to)! - origin;
  const groups = new Map<number, CalendarGroup>();
  for (let day = start; day <= end; day++) {
    const groupDay = group === 'week' ? day - (isoWeekdayOfEpochDay(origin + day) - 1) : start;
    const dayType = dayTypeOf(origin + day, split);
    const key = groupDay * 4 + dayType;
    let g = groups.get(key);
    if (!g) {
      g = { groupDay, dayType, days: 0, final: true, observed: 0 };
      groups.set(key, g);
    }
    g.days++;
    g.final &&= calendar.final[day] === '1';
    if (calendar.observed[day] === '1') g.observed++;
  }
  return [...groups.values()].sort((a, b) => a.groupDay - b.groupDay || a.dayType - b.dayType);
}

interface LabeledGroup extends CalendarGroup {
  period: string;
  periodStart: string;
  periodEnd: string;
}

const labeledByCalendar = new WeakMap<ReliabilityCalendar, Map<string, LabeledGroup[]>>();

/** calendarGroups with their labels, kept with the calendar (a new calendar is a new object). */
function labeledGroups(
  calendar: ReliabilityCalendar,
  query: { group: RollupGroup; from: string; to: string; split: boolean },
): LabeledGroup[] {
  let byQuery = labeledByCalendar.get(calendar);
  if (!byQuery) {
    byQuery = new Map();
    labeledByCalendar.set(calendar, byQuery);
  }
  const key = `${query.group}|${query.from}|${query.to}|${query.split}`;
  const hit = byQuery.get(key);
  if (hit) return hit;
  const origin = epochDay(calendar.first)!;
  const groups = calendarGroups(calendar, query.group, query.from, query.to, query.split).map((g) => {
    const start = dateOfEpochDay(origin + g.groupDay);
    const end = dateOfEpochDay(origin + g.groupDay + 6);
    return {
      ...g,
      period: query.group === 'week' ? isoWeekLabelOfEpochDay(origin + g.groupDay) : `${query.from}/${query.to}`,
      periodStart: laterDate(start, query.from),
      periodEnd: query.group === 'week' && end < query.to ? end : query.to,
    };
  });
  if (byQuery.size >= 64) byQuery.delete(byQuery.keys().next().value!);
  byQuery.set(key, groups);
  return groups;
}

/**
 * rollup_select_grouped.sql's sums (one row per route, group and day type that has route days)
 * as rollup rows: every route (the one asked, or every route with rows) gets every group, a
 * group without rows being zeros. Ordered by route, group, then weekday / saturday / sunday.
 */
export function groupedRows(
  names: readonly string[],
  columns: readonly (readonly DuckDBValue[])[],
  calendar: ReliabilityCalendar,
  query: { group: RollupGroup; from: string; to: string; split: boolean; routeId?: string | undefined },
): RollupRow[] {
  const c = byName(names, columns, ['route_id', 'group_day', 'day_type', ...COUNT_NAMES]);
  const sums = new Map<string, Counts>();
  const seen = new Set<string>();
  for (let row = 0; row < c.route_id!.length; row++) {
    const route = c.route_id![row] as string;
    seen.add(route);
    sums.set(`${route}|${c.group_day![row] as number}|${c.day_type![row] as number}`, countsAt(c, row));
  }
  const routes = query.routeId !== undefined ? [query.routeId] : [...seen].sort(compareCodePoints);
  const groups = labeledGroups(calendar, query);
  const rows: RollupRow[] = [];
  for (const route of routes) {
    for (const g of groups) {
      const counts = sums.get(`${route}|${g.groupDay}|${g.dayType}`) ?? ZERO;
      rows.push({
        route_id: route,
        period: g.period,
        period_start: g.periodStart,
        period_end: g.periodEnd,
        service_day: DAY_TYPES[g.dayType]!,
        days: g.days,
        final: g.final,
        days_observed: g.observed,
        ...counts,
        delivered_pct: percent(counts.delivered, counts.scheduled),
        ...observedFigures(counts),
        rolling_7d: null,
      });
    }
  }
  return rows;
}
