import type { RollupResult, RollupRow } from '../../store/reliability/rollup.ts';

// A plain-text table of a rollup for operators (`transit-api reliability`): one line per row,
// numbers right-aligned, "-" where a percentage has no denominator. "of observed %" is delivered
// over the scheduled trips any feed saw, beside delivered over all scheduled trips.

interface Column {
  title: string;
  align: 'left' | 'right';
  value: (row: RollupRow) => string;
}

function pct(value: number | null): string {
  return value === null ? '-' : value.toFixed(2);
}

function columns(result: RollupResult): Column[] {
  const cols: Column[] = [
    { title: result.mode === 'rail' ? 'line' : 'route', align: 'left', value: (r) => r.route_id },
    { title: result.group, align: 'left', value: (r) => r.period },
  ];
  if (result.split) cols.push({ title: 'service day', align: 'left', value: (r) => r.service_day });
  cols.push(
    { title: 'scheduled', align: 'right', value: (r) => String(r.scheduled) },
    { title: 'delivered', align: 'right', value: (r) => String(r.delivered) },
    { title: 'canceled', align: 'right', value: (r) => String(r.canceled) },
    { title: 'partial', align: 'right', value: (r) => String(r.partially_canceled) },
    { title: 'unobserved', align: 'right', value: (r) => String(r.unobserved) },
    { title: 'pending', align: 'right', value: (r) => String(r.pending) },
    { title: 'added', align: 'right', value: (r) => String(r.added) },
    { title: 'delivered %', align: 'right', value: (r) => pct(r.delivered_pct) },
    { title: 'of observed %', align: 'right', value: (r) => pct(r.delivered_pct_of_observed) },
  );
  if (result.group === 'day') {
    cols.push(
      { title: '7-day %', align: 'right', value: (r) => pct(r.rolling_7d?.delivered_pct ?? null) },
      {
        title: '7-day of observed %',
        align: 'right',
        value: (r) => pct(r.rolling_7d?.delivered_pct_of_observed ?? null),
      },
    );
  }
  cols.push({ title: 'final', align: 'left', value: (r) => (r.final ? 'yes' : 'no') });
  return cols;
}

/** The rollup as an aligned text table, with a heading line naming the query. */
export function formatRollupTable(result: RollupResult): string {
  const cols = columns(result);
  const cells = result.rows.map((row) => cols.map((c) => c.value(row)));
  const widths = cols.map((c, i) => Math.max(c.title.length, ...cells.map((line) => line[i]!.length)));
  const render = (values: string[]): string =>
    values
      .map((v, i) => (cols[i]!.align === 'right' ? v.padStart(widths[i]!) : v.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  const heading =
    `${result.mode} ${result.route_id ?? 'all routes'}, ${result.from} to ${result.to}, by ${result.group}` +
    `${result.split ? ', split by service day' : ''} (${result.timezone}; days over through ` +
    `${result.complete_through})`;
  const lines = [heading, render(cols.map((c) => c.title)), render(widths.map((w) => '-'.repeat(w)))];
  if (cells.length === 0) lines.push('(no rows)');
  for (const line of cells) lines.push(render(line));
  if (result.days_without_observations.length > 1)
    lines.push(`days without observations: ${result.days_without_observations.join(', ')}`);
  for (const note of result.notes) lines.push(`note: ${note}`);
  return `${lines.join('\n')}\n`;
}
