// What Show puts on screen: a summary of the answer (route, range, definitions), the range's
// totals, and the three charts, each with its legend, the notes of its gaps and its table.
import { $, el, fill, type Children } from './dom.ts';
import { drawAccuracy, drawHeadways, drawShares } from './performance-chart.ts';
import type { DateRange } from './performance-query.ts';
import { accuracyNotes, accuracyTable, gapNotes, headwaysTable, rangeFacts, sharesTable } from './performance-table.ts';
import type { PerformanceRollup } from './types.ts';

export interface Shown {
  /** per day or week */
  grouped: PerformanceRollup;
  /** the whole range, one row */
  period: PerformanceRollup;
  /** the route's label in the list */
  label: string;
  /** the retained window the default range was moved into, if it was */
  moved: DateRange | null;
}

type Legend = Array<[key: string, text: string]>;

function figure(
  id: string,
  heading: string,
  legend: Legend,
  notes: HTMLElement | null,
  tableEl: HTMLElement,
): HTMLElement {
  return el('div', { class: 'perf-figure', id: `${id}-figure` }, [
    el('h3', { text: heading }),
    el('figure', { class: 'chart', 'aria-describedby': `${id}-legend` }, el('div', { id: `${id}-chart` })),
    el(
      'ul',
      { class: 'legend', id: `${id}-legend` },
      legend.map(([key, text]) => el('li', null, [el('span', { class: `key ${key}`, 'aria-hidden': 'true' }), text])),
    ),
    notes,
    el('details', null, [el('summary', { text: 'The figures as a table' }), tableEl]),
  ]);
}

function summary(s: Shown): Children {
  const m = s.grouped.meta;
  const what = m.mode === 'rail' ? 'Rail line' : m.mode === 'bus' ? 'Bus route' : 'Streetcar route';
  const [early, late] = m.on_time_window_s;
  return [
    el('strong', { 'data-route': m.route_id, text: `${what} ${s.label}` }),
    ` · ${m.from} to ${m.to} (${m.timezone} service days) · by ${m.group} · on time: ${early} s to +${late} s · ` +
      `a figure needs at least ${m.min_observations} observations`,
    s.moved
      ? el('span', {
          class: 'sub moved',
          text:
            `The last 14 days reach outside the retained window (${s.moved.from} to ${s.moved.to}): ` +
            `moved inside it.`,
        })
      : null,
  ];
}

export function renderPerformance(s: Shown): void {
  const { grouped, period } = s;
  const group = grouped.meta.group;
  fill($('performance-summary'), summary(s));
  fill($('performance-body'), [
    rangeFacts(period),
    ...grouped.meta.notes.map((n) => el('p', { class: 'empty perf-note', text: n })),
    figure(
      'perf-shares',
      `On-time, early and late arrivals per ${group}`,
      [
        ['ontime', 'On time'],
        ['early', 'Early'],
        ['late', 'Late'],
        ['gap', 'n/a: too few arrivals'],
      ],
      gapNotes(grouped, 'shares'),
      sharesTable(grouped),
    ),
    figure(
      'perf-headways',
      `Headway adherence per ${group}`,
      [
        ['hw', 'Headways on time (bars, left axis)'],
        ['bunched', 'Bunched'],
        ['median', 'Median headway (line, right axis)'],
        ['scheduled', 'Scheduled median headway'],
        ['gap', 'n/a: too few headways'],
      ],
      gapNotes(grouped, 'headways'),
      headwaysTable(grouped),
    ),
    figure(
      'perf-accuracy',
      `Prediction accuracy by horizon, ${period.meta.from} to ${period.meta.to}`,
      [
        ['accurate', 'Accurate (bars, left axis)'],
        ['abs-error', 'Median absolute error (points, right axis)'],
        ['gap', 'n/a: too few predictions judged'],
      ],
      accuracyNotes(period),
      accuracyTable(period),
    ),
  ]);
  // drawn once attached: each chart takes its container's width
  drawShares($('perf-shares-chart'), grouped);
  drawHeadways($('perf-headways-chart'), grouped);
  drawAccuracy($('perf-accuracy-chart'), period);
}
