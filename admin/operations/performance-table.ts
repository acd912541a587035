import type { PerformanceResult, PerformanceRow } from '../../store/performance/rollup.ts';

// A plain-text table of performance measures for operators (`transit-api performance`): one line
// per row, numbers right-aligned, "-" for a figure from too few observations.

interface Column {
  title: string;
  value: (row: PerformanceRow) => string;
}

const num = (value: number | null, digits = 0): string => (value === null ? '-' : value.toFixed(digits));
const minutes = (s: number | null): string =>
  s === null ? '-' : `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;

function columns(result: PerformanceResult): Column[] {
  const cols: Column[] = [{ title: result.group, value: (r) => r.period }];
  if (result.split) cols.push({ title: 'service day', value: (r) => r.service_day });
  cols.push(
    { title: 'events', value: (r) => String(r.observed_stop_events) },
    { title: 'on time %', value: (r) => num(r.on_time_pct, 1) },
    { title: 'early %', value: (r) => num(r.early_pct, 1) },
    { title: 'late %', value: (r) => num(r.late_pct, 1) },
    { title: 'headway', value: (r) => minutes(r.median_headway_s) },
    { title: 'sched', value: (r) => minutes(r.scheduled_median_headway_s) },
    { title: 'hw ok %', value: (r) => num(r.headway_on_time_pct, 1) },
    { title: 'bunched %', value: (r) => num(r.bunched_pct, 1) },
    { title: 'excess wait s', value: (r) => num(r.excess_wait_s) },
    { title: 'travel', value: (r) => minutes(r.median_travel_time_s) },
    { title: 'p90', value: (r) => minutes(r.p90_travel_time_s) },
    { title: 'dwell s', value: (r) => num(r.median_dwell_s) },
    {
      title: 'predictions ok % (0-3/3-6/6-12/12-30)',
      value: (r) => r.prediction_accuracy.map((p) => num(p.accurate_pct, 0)).join('/'),
    },
    { title: 'final', value: (r) => (r.final ? 'yes' : 'no') },
  );
  return cols;
}

/** The measures as an aligned text table, with a heading naming the query and the notes below. */
export function formatPerformanceTable(result: PerformanceResult): string {
  const cols = columns(result);
  const cells = result.rows.map((row) => cols.map((c) => c.value(row)));
  const widths = cols.map((c, i) => Math.max(c.title.length, ...cells.map((line) => line[i]!.length)));
  const render = (values: string[]): string =>
    values
      .map((v, i) => (i < (result.split ? 2 : 1) ? v.padEnd(widths[i]!) : v.padStart(widths[i]!)))
      .join('  ')
      .trimEnd();
  const [early, late] = result.on_time_window_s;
  const heading =
    `${result.mode} ${result.mode === 'rail' ? 'line' : 'route'} ${result.route_id}, ${result.from} to ${result.to}, by ${result.group}` +
    `${result.split ? ', split by service day' : ''} (${result.timezone}; on time ${early} to +${late} s; ` +
    `figures from fewer than ${result.min_observations} observations: -)`;
  const lines = [heading, render(cols.map((c) => c.title)), render(widths.map((w) => '-'.repeat(w)))];
  if (cells.length === 0) lines.push('(no rows)');
  for (const line of cells) lines.push(render(line));
  for (const note of result.notes) lines.push(`note: ${note}`);
  return `${lines.join('\n')}\n`;
}
