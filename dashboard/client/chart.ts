// The usage chart, an inline SVG built node by node. Requests are bars on the left axis (errors as
// their red foot), connection-minutes a line on the right axis: the two units differ by orders of
// magnitude, so each gets its own scale, named in the legend and the axes. The SVG is drawn at the
// container's pixel width so its text stays legible on a phone.
import { el, fill, svg } from './dom.ts';
import { fmtNumber } from './format.ts';
import { axisScale, intervalsFor, labelEvery, shortNumber } from './scale.ts';
import type { Usage, UsageDay } from './types.ts';

function dayTip(d: UsageDay): string {
  return (
    `${d.date}: ${fmtNumber(d.requests)} requests (${fmtNumber(d.errors)} errors), ` +
    `${fmtNumber(d.connection_minutes)} connection-minutes`
  );
}

/** Draws usage.days into container; returns the svg. */
export function drawUsageChart(container: HTMLElement, usage: Usage): SVGElement {
  const days = usage.days;
  const width = Math.max(280, Math.floor(container.clientWidth || 640));
  const height = width < 480 ? 200 : 240;
  const m = { left: 44, right: 44, top: 22, bottom: 26 };
  const plotW = width - m.left - m.right;
  const plotH = height - m.top - m.bottom;
  const n = Math.max(1, days.length);
  const band = plotW / n;
  const maxReq = Math.max(0, ...days.map((d) => d.requests));
  const maxMin = Math.max(0, ...days.map((d) => d.connection_minutes));
  const intervals = intervalsFor(maxReq);
  const left = axisScale(maxReq, intervals, true);
  const right = axisScale(maxMin, intervals, false);
  const yReq = (v: number) => m.top + plotH - (v / left.top) * plotH;
  const yMin = (v: number) => m.top + plotH - (v / right.top) * plotH;
  const cx = (i: number) => m.left + band * i + band / 2;
  const first = days[0];
  const last = days[days.length - 1];
  const range = first && last ? `${first.date} to ${last.date}` : 'no days';
  const totals = usage.totals || {};

  const chart = svg(
    'svg',
    {
      viewBox: `0 0 ${width} ${height}`,
      width,
      height,
      role: 'img',
      'aria-labelledby': 'usage-chart-title usage-chart-desc',
      'data-days': days.length,
    },
    [
      svg('title', { id: 'usage-chart-title', text: `API usage per day (${usage.unit_timezone}), ${range}` }),
      svg('desc', {
        id: 'usage-chart-desc',
        text:
          'Bars: requests per day on the left axis, their errors in red at the foot of each bar. Line: ' +
          'connection-minutes ' +
          `of event streams per day on the right axis. Totals: ${fmtNumber(totals.requests)} requests, ` +
          `${fmtNumber(totals.errors)} errors, ${fmtNumber(totals.connection_minutes)} connection-minutes.`,
      }),
    ],
  );

  const axis = svg('g', { class: 'axis', 'aria-hidden': 'true' });
  left.ticks.forEach((v, i) => {
    const y = yReq(v);
    chart.appendChild(svg('line', { class: 'grid-line', x1: m.left, x2: m.left + plotW, y1: y, y2: y }));
    axis.appendChild(svg('text', { x: m.left - 6, y: y + 4, 'text-anchor': 'end', text: shortNumber(v) }));
    axis.appendChild(svg('text', { x: m.left + plotW + 6, y: y + 4, text: shortNumber(right.ticks[i] ?? 0) }));
  });
  axis.appendChild(svg('text', { x: 0, y: 11, 'text-anchor': 'start', text: 'requests' }));
  axis.appendChild(svg('text', { x: width, y: 11, 'text-anchor': 'end', text: 'conn-min' }));
  const every = labelEvery(band, 42);
  days.forEach((d, i) => {
    if ((days.length - 1 - i) % every !== 0) return; // the latest day always keeps its label
    axis.appendChild(svg('text', { x: cx(i), y: height - 8, 'text-anchor': 'middle', text: d.date.slice(5) }));
  });
  chart.appendChild(axis);

  const barW = Math.max(2, Math.min(36, band * 0.62));
  const bars = svg('g', { class: 'bars' });
  const points = svg('g', { class: 'points' });
  let path = '';
  days.forEach((d, i) => {
    const tip = svg('title', { text: dayTip(d) });
    const top = yReq(d.requests);
    const group = svg(
      'g',
      { class: 'day', 'data-date': d.date, 'data-requests': d.requests, 'data-errors': d.errors },
      [tip],
    );
    group.appendChild(
      svg('rect', { class: 'bar', x: cx(i) - barW / 2, y: top, width: barW, height: Math.max(0, yReq(0) - top) }),
    );
    if (d.errors > 0) {
      const errTop = yReq(Math.min(d.errors, d.requests));
      group.appendChild(
        svg('rect', {
          class: 'bar-err',
          x: cx(i) - barW / 2,
          y: errTop,
          width: barW,
          height: Math.max(1, yReq(0) - errTop),
        }),
      );
    }
    bars.appendChild(group);
    const y = yMin(d.connection_minutes);
    path += `${i === 0 ? 'M' : 'L'}${cx(i).toFixed(1)} ${y.toFixed(1)}`;
    points.appendChild(
      svg(
        'circle',
        {
          class: 'point',
          cx: cx(i),
          cy: y,
          r: band < 14 ? 2 : 3.5,
          'data-date': d.date,
          'data-minutes': d.connection_minutes,
        },
        [svg('title', { text: dayTip(d) })],
      ),
    );
  });
  chart.appendChild(bars);
  if (days.length > 1) chart.appendChild(svg('path', { class: 'line', d: path, 'aria-hidden': 'true' }));
  chart.appendChild(points);
  fill(container, chart);
  return chart;
}

/** The same figures as a table, for screen readers and for copying. */
export function usageTable(usage: Usage): HTMLElement {
  const head = el(
    'tr',
    null,
    ['Date', 'Requests', 'Errors', 'Connection-minutes'].map((h, i) =>
      el('th', { scope: 'col', class: i ? 'num' : null, text: h }),
    ),
  );
  const rows = usage.days
    .slice()
    .reverse()
    .map((d) =>
      el('tr', { 'data-date': d.date }, [
        el('th', { scope: 'row', text: d.date }),
        el('td', { class: 'num', text: fmtNumber(d.requests) }),
        el('td', { class: 'num', text: fmtNumber(d.errors) }),
        el('td', { class: 'num', text: fmtNumber(d.connection_minutes) }),
      ]),
    );
  return el(
    'div',
    { class: 'table' },
    el('table', { class: 'usage-table' }, [el('thead', null, head), el('tbody', null, rows)]),
  );
}
