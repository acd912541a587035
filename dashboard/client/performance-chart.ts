// The performance charts of one route, drawn node by node on the shared frame (chart-frame.ts):
// on-time, early and late shares per period as stacked bars; headway adherence per period (on
// time and bunched shares as bars, the median headway beside the scheduled one as lines on a
// minutes axis); prediction accuracy by horizon over the range (accurate share as bars, the
// median absolute error as points on a seconds axis). A null figure is a gap with its notes.
import { fill, svg } from './dom.ts';
import { brokenLine, frame, gapMark, pctBar } from './chart-frame.ts';
import { fmtFigureSeconds, fmtNumber, fmtPct } from './format.ts';
import { notesFor } from './performance-query.ts';
import type { PerformanceRollup, PerformanceRow, PredictionAccuracy } from './types.ts';

export const SHARE_FIELDS = ['on_time_pct', 'early_pct', 'late_pct'];
export const HEADWAY_FIELDS = ['headway_on_time_pct', 'bunched_pct', 'median_headway_s', 'scheduled_median_headway_s'];
export const ACCURACY_FIELDS = ['prediction_accuracy'];

const pct = fmtPct;
const secs = fmtFigureSeconds;

/** "04-30" for a day, "W18" for an ISO week: short enough for a narrow band. */
export function periodLabel(period: string): string {
  const week = /-(W\d\d)$/.exec(period)?.[1];
  return week ?? (period.length === 10 ? period.slice(5) : period);
}

export const horizonLabel = (h: string) => `${h.replace('-', '–')} min`;

function subject(r: PerformanceRollup): string {
  const what = r.meta.mode === 'rail' ? 'line' : `${r.meta.mode} route`;
  return `${what} ${r.meta.route_id}, ${r.meta.from} to ${r.meta.to} (${r.meta.timezone} service days)`;
}

export function drawShares(container: HTMLElement, r: PerformanceRollup): SVGElement {
  const [early, late] = r.meta.on_time_window_s;
  const f = frame(container, {
    id: 'perf-shares',
    title: `On-time, early and late arrivals per ${r.meta.group}, ${subject(r)}`,
    desc:
      `Stacked bars, 0 to 100% of arrivals: on time (delay ${early} s to +${late} s) at the foot, early above it, ` +
      'late at the top. A dashed "n/a" band has too few arrivals for a figure; its tooltip says why.',
    labels: r.data.map((row) => periodLabel(row.period)),
    right: null,
    leftUnit: 'arrivals',
  });
  const bars = svg('g', { class: 'bars' });
  r.data.forEach((row, i) => {
    const at = { class: 'period', 'data-period': row.period };
    if (row.on_time_pct === null || row.early_pct === null || row.late_pct === null) {
      bars.appendChild(gapMark(f, i, { 'data-period': row.period }, notesFor(row.notes, SHARE_FIELDS)));
      return;
    }
    const x = f.cx(i) - f.barW / 2;
    const onTime = row.on_time_pct;
    const early = onTime + row.early_pct;
    bars.appendChild(
      svg('g', { ...at, 'data-on-time': onTime, 'data-early': row.early_pct, 'data-late': row.late_pct }, [
        svg('title', {
          text:
            `${row.period}: ${pct(onTime)} on time, ${pct(row.early_pct)} early, ${pct(row.late_pct)} late ` +
            `of ${fmtNumber(row.delays_observed)} arrivals`,
        }),
        pctBar(f, x, f.barW, 0, onTime, 'bar-ontime'),
        pctBar(f, x, f.barW, onTime, early, 'bar-early'),
        pctBar(f, x, f.barW, early, Math.min(100, early + row.late_pct), 'bar-late'),
      ]),
    );
  });
  f.chart.appendChild(bars);
  fill(container, f.chart);
  return f.chart;
}

const minutes = (s: number | null) => (s === null ? null : s / 60);

export function drawHeadways(container: HTMLElement, r: PerformanceRollup): SVGElement {
  const median = r.data.map((row) => minutes(row.median_headway_s));
  const scheduled = r.data.map((row) => minutes(row.scheduled_median_headway_s));
  const max = Math.max(0, ...median.map((v) => v ?? 0), ...scheduled.map((v) => v ?? 0));
  const f = frame(container, {
    id: 'perf-headways',
    title: `Headway adherence per ${r.meta.group}, ${subject(r)}`,
    desc:
      'Bars, left axis: headways on time (0.75 to 1.25 × the scheduled headway) and bunched (at most 0.5 ×), % of ' +
      'headways. Lines, right axis: median headway (solid) and scheduled median headway (dashed), minutes. ' +
      'A dashed "n/a" band or a break in a line has too few headways for a figure; its tooltip says why.',
    labels: r.data.map((row) => periodLabel(row.period)),
    right: { max, unit: 'min' },
    leftUnit: 'headways',
  });
  const bars = svg('g', { class: 'bars' });
  const points = svg('g', { class: 'points' });
  r.data.forEach((row, i) => {
    const notes = notesFor(row.notes, HEADWAY_FIELDS);
    if (row.headway_on_time_pct === null || row.bunched_pct === null) {
      bars.appendChild(gapMark(f, i, { 'data-period': row.period }, notes));
    } else {
      const half = f.barW / 2;
      bars.appendChild(
        svg(
          'g',
          {
            class: 'period',
            'data-period': row.period,
            'data-headway-on-time': row.headway_on_time_pct,
            'data-bunched': row.bunched_pct,
          },
          [
            svg('title', {
              text:
                `${row.period}: ${pct(row.headway_on_time_pct)} of headways on time, ` +
                `${pct(row.bunched_pct)} bunched`,
            }),
            pctBar(f, f.cx(i) - half, half, 0, row.headway_on_time_pct, 'bar-hw-ontime'),
            pctBar(f, f.cx(i), half, 0, row.bunched_pct, 'bar-bunched'),
          ],
        ),
      );
    }
    for (const [cls, s, what] of [
      ['median', row.median_headway_s, 'median headway'],
      ['scheduled', row.scheduled_median_headway_s, 'scheduled median headway'],
    ] as const) {
      if (s === null) continue;
      const tip = `${row.period}: ${what} ${secs(s)} (${fmtNumber(row.headways_observed)} headways)`;
      points.appendChild(
        svg(
          'circle',
          {
            class: `point ${cls}`,
            cx: f.cx(i),
            cy: f.yRight(s / 60),
            r: 3.5,
            'data-period': row.period,
            'data-seconds': s,
          },
          [svg('title', { text: tip })],
        ),
      );
    }
  });
  f.chart.appendChild(bars);
  for (const [values, cls] of [
    [scheduled, 'line scheduled'],
    [median, 'line median'],
  ] as const) {
    const line = brokenLine(f, values, cls);
    if (line) f.chart.appendChild(line);
  }
  f.chart.appendChild(points);
  fill(container, f.chart);
  return f.chart;
}

/** period: the group=period answer (one row for the whole range). */
export function drawAccuracy(container: HTMLElement, period: PerformanceRollup): SVGElement {
  const row: PerformanceRow | undefined = period.data[0];
  const horizons: PredictionAccuracy[] = row ? row.prediction_accuracy : [];
  const errors = horizons.map((h) => h.median_abs_error_s);
  const f = frame(container, {
    id: 'perf-accuracy',
    title: `Prediction accuracy by horizon, ${subject(period)}`,
    desc:
      'Bars, left axis: predictions within the bounds for their horizon (0–3 min: 60 s early to 60 s late; 3–6: 90 s ' +
      'early to 120 s late; 6–12: 150 s early to 210 s late; 12–30: 240 s early to 360 s late), %. Points, right ' +
      'axis: median absolute error, seconds. A dashed "n/a" band has too few predictions judged; its tooltip says why.',
    labels: horizons.map((h) => horizonLabel(h.horizon)),
    right: { max: Math.max(0, ...errors.map((v) => v ?? 0)), unit: 's' },
    leftUnit: 'accurate',
  });
  const bars = svg('g', { class: 'bars' });
  const points = svg('g', { class: 'points' });
  horizons.forEach((h, i) => {
    const at = { 'data-horizon': h.horizon, 'data-predictions': h.predictions };
    const tip =
      `${horizonLabel(h.horizon)} ahead: ${pct(h.accurate_pct)} accurate, median error ` +
      `${secs(h.median_abs_error_s)}, ${fmtNumber(h.predictions)} predictions judged`;
    if (h.accurate_pct === null) {
      bars.appendChild(gapMark(f, i, at, notesFor(row ? row.notes : [], ACCURACY_FIELDS)));
    } else {
      bars.appendChild(
        svg('g', { class: 'horizon', ...at, 'data-accurate': h.accurate_pct }, [
          svg('title', { text: tip }),
          pctBar(f, f.cx(i) - f.barW / 2, f.barW, 0, h.accurate_pct, 'bar-accurate'),
        ]),
      );
    }
    if (h.median_abs_error_s !== null)
      points.appendChild(
        svg(
          'circle',
          {
            class: 'point abs-error',
            cx: f.cx(i),
            cy: f.yRight(h.median_abs_error_s),
            r: 3.5,
            ...at,
            'data-seconds': h.median_abs_error_s,
          },
          [svg('title', { text: tip })],
        ),
      );
  });
  f.chart.appendChild(bars);
  f.chart.appendChild(points);
  fill(container, f.chart);
  return f.chart;
}
