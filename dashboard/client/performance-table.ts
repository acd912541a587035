// The performance figures beside the charts: each chart's table fallback (for screen readers and
// copying), the notes of its gaps in words, and the range's totals. A null figure reads "n/a"
// with the row's note beside it, never 0.
import { el } from './dom.ts';
import { fmtFigureSeconds, fmtNumber, fmtPct } from './format.ts';
import { ACCURACY_FIELDS, HEADWAY_FIELDS, horizonLabel, SHARE_FIELDS } from './performance-chart.ts';
import { notesFor } from './performance-query.ts';
import { cell, table, type Heading } from './sections.ts';
import type { PerformanceRollup, PerformanceRow } from './types.ts';

const pct = fmtPct;
const secs = fmtFigureSeconds;
const num = (label: string): Heading => ({ label, className: 'num' });

function notesCell(notes: string[]): HTMLElement {
  return cell(notes.map((n) => el('span', { class: 'sub', text: n })));
}

function shareNulls(row: PerformanceRow): boolean {
  return row.on_time_pct === null || row.early_pct === null || row.late_pct === null;
}

function headwayNulls(row: PerformanceRow): boolean {
  return [row.headway_on_time_pct, row.bunched_pct, row.median_headway_s, row.scheduled_median_headway_s].includes(
    null,
  );
}

/**
 * The notes of a chart's gaps: one item per distinct note, with the periods it holds for (a route
 * short of headways every day says so once, not once a day).
 */
export function gapNotes(r: PerformanceRollup, chart: 'shares' | 'headways'): HTMLElement | null {
  const [isNull, fields] = chart === 'shares' ? [shareNulls, SHARE_FIELDS] : [headwayNulls, HEADWAY_FIELDS];
  const periods = new Map<string, string[]>();
  for (const row of r.data.filter(isNull)) {
    const text = notesFor(row.notes, fields).join(' · ') || 'No figure.';
    periods.set(text, [...(periods.get(text) || []), row.period]);
  }
  const items = [...periods].map(([text, list]) =>
    el('li', { 'data-periods': list.join(' ') }, [el('strong', { text: list.join(', ') }), `: ${text}`]),
  );
  return items.length ? el('ul', { class: 'gaps', 'aria-label': 'Why some figures are missing' }, items) : null;
}

export function accuracyNotes(period: PerformanceRollup): HTMLElement | null {
  const row = period.data[0];
  if (!row || row.prediction_accuracy.every((h) => h.accurate_pct !== null)) return null;
  const notes = notesFor(row.notes, ACCURACY_FIELDS);
  return el(
    'ul',
    { class: 'gaps', 'aria-label': 'Why some figures are missing' },
    notes.map((n) => el('li', { text: n })),
  );
}

export function sharesTable(r: PerformanceRollup): HTMLElement {
  const rows = r.data.map((row) =>
    el('tr', { 'data-period': row.period }, [
      el('th', { scope: 'row', text: row.period }),
      cell(fmtNumber(row.delays_observed), 'num'),
      cell(pct(row.on_time_pct), 'num'),
      cell(pct(row.early_pct), 'num'),
      cell(pct(row.late_pct), 'num'),
      notesCell(shareNulls(row) ? notesFor(row.notes, SHARE_FIELDS) : []),
    ]),
  );
  const heads = [{ label: 'Period' }, num('Arrivals'), num('On time'), num('Early'), num('Late'), { label: 'Notes' }];
  return table('perf-shares', heads, rows, 'No period in this range.');
}

export function headwaysTable(r: PerformanceRollup): HTMLElement {
  const rows = r.data.map((row) =>
    el('tr', { 'data-period': row.period }, [
      el('th', { scope: 'row', text: row.period }),
      cell(fmtNumber(row.headways_observed), 'num'),
      cell(pct(row.headway_on_time_pct), 'num'),
      cell(pct(row.bunched_pct), 'num'),
      cell(secs(row.median_headway_s), 'num'),
      cell(secs(row.scheduled_median_headway_s), 'num'),
      cell(secs(row.excess_wait_s), 'num'),
      notesCell(headwayNulls(row) ? notesFor(row.notes, HEADWAY_FIELDS) : []),
    ]),
  );
  const heads = [
    { label: 'Period' },
    num('Headways'),
    num('On time'),
    num('Bunched'),
    num('Median'),
    num('Scheduled median'),
    num('Excess wait'),
    { label: 'Notes' },
  ];
  return table('perf-headways', heads, rows, 'No period in this range.');
}

export function accuracyTable(period: PerformanceRollup): HTMLElement {
  const row = period.data[0];
  const rows = (row ? row.prediction_accuracy : []).map((h) =>
    el('tr', { 'data-horizon': h.horizon }, [
      el('th', { scope: 'row', text: horizonLabel(h.horizon) }),
      cell(fmtNumber(h.predictions), 'num'),
      cell(pct(h.accurate_pct), 'num'),
      cell(secs(h.median_abs_error_s), 'num'),
      notesCell(row && h.accurate_pct === null ? notesFor(row.notes, ACCURACY_FIELDS) : []),
    ]),
  );
  const heads = [
    { label: 'Made before arrival' },
    num('Predictions'),
    num('Accurate'),
    num('Median error'),
    { label: 'Notes' },
  ];
  return table('perf-accuracy', heads, rows, 'No prediction was judged in this range.');
}

function fact(name: string, label: string, value: string): HTMLElement {
  return el('div', { 'data-fact': name }, [el('dt', { text: label }), el('dd', { text: value })]);
}

/** The whole range's figures (the group=period row), as the plan's facts are shown. */
export function rangeFacts(period: PerformanceRollup): HTMLElement | null {
  const row = period.data[0];
  if (!row) return null;
  return el('dl', { class: 'facts', 'aria-label': `The whole range, ${period.meta.from} to ${period.meta.to}` }, [
    fact('observed_stop_events', 'Stop events observed', fmtNumber(row.observed_stop_events)),
    fact('on_time_pct', 'Arrivals on time', pct(row.on_time_pct)),
    fact('headway_on_time_pct', 'Headways on time', pct(row.headway_on_time_pct)),
    fact('bunched_pct', 'Bunched', pct(row.bunched_pct)),
    fact('excess_wait_s', 'Excess wait', secs(row.excess_wait_s)),
    fact(
      'median_travel_time_s',
      'Travel time, median / 90th pct',
      `${secs(row.median_travel_time_s)} / ${secs(row.p90_travel_time_s)}`,
    ),
    fact('median_dwell_s', 'Median dwell', secs(row.median_dwell_s)),
  ]);
}
