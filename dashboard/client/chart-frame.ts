// The frame the performance charts share: an SVG of the container's pixel width with a title and
// description (role img), a percent axis on the left, an optional second axis on the right (its
// unit named at its top), bands with their labels along the bottom, and the gap drawn where a
// figure is null: a dashed outline with "n/a" whose tooltip is the row's note, never a bar of 0.
import { svg } from './dom.ts';
import { axisScale, labelEvery, shortNumber } from './scale.ts';

export interface FrameOptions {
  /** id prefix of the title and description */
  id: string;
  title: string;
  desc: string;
  /** one label per band, in order */
  labels: string[];
  /** the right axis' largest value and unit, or null for none */
  right: { max: number; unit: string } | null;
  /** text at the top of the left axis */
  leftUnit: string;
}

export interface Frame {
  chart: SVGElement;
  band: number;
  /** bar width within a band */
  barW: number;
  cx(i: number): number;
  /** y of a percentage */
  yPct(v: number): number;
  /** y of a value on the right axis */
  yRight(v: number): number;
  plotTop: number;
  plotBottom: number;
}

export function chartWidth(container: HTMLElement): number {
  return Math.max(280, Math.floor(container.clientWidth || 640));
}

export function frame(container: HTMLElement, o: FrameOptions): Frame {
  const width = chartWidth(container);
  const height = width < 480 ? 200 : 240;
  const m = { left: 40, right: o.right ? 44 : 12, top: 22, bottom: 26 };
  const plotW = width - m.left - m.right;
  const plotH = height - m.top - m.bottom;
  const n = Math.max(1, o.labels.length);
  const band = plotW / n;
  const right = axisScale(o.right ? o.right.max : 0, 4, false);
  const yPct = (v: number) => m.top + plotH - (v / 100) * plotH;
  const yRight = (v: number) => m.top + plotH - (v / right.top) * plotH;
  const cx = (i: number) => m.left + band * i + band / 2;
  const chart = svg(
    'svg',
    {
      viewBox: `0 0 ${width} ${height}`,
      width,
      height,
      role: 'img',
      'aria-labelledby': `${o.id}-title ${o.id}-desc`,
      'data-bands': o.labels.length,
    },
    [svg('title', { id: `${o.id}-title`, text: o.title }), svg('desc', { id: `${o.id}-desc`, text: o.desc })],
  );
  const axis = svg('g', { class: 'axis', 'aria-hidden': 'true' });
  [0, 25, 50, 75, 100].forEach((v, i) => {
    const y = yPct(v);
    chart.appendChild(svg('line', { class: 'grid-line', x1: m.left, x2: m.left + plotW, y1: y, y2: y }));
    axis.appendChild(svg('text', { x: m.left - 6, y: y + 4, 'text-anchor': 'end', text: `${v}%` }));
    if (o.right)
      axis.appendChild(svg('text', { x: m.left + plotW + 6, y: y + 4, text: shortNumber(right.ticks[i] ?? 0) }));
  });
  axis.appendChild(svg('text', { x: 0, y: 11, 'text-anchor': 'start', text: o.leftUnit }));
  if (o.right) axis.appendChild(svg('text', { x: width, y: 11, 'text-anchor': 'end', text: o.right.unit }));
  const every = labelEvery(band, 42);
  o.labels.forEach((label, i) => {
    if ((o.labels.length - 1 - i) % every !== 0) return; // the latest band always keeps its label
    axis.appendChild(svg('text', { x: cx(i), y: height - 8, 'text-anchor': 'middle', text: label }));
  });
  chart.appendChild(axis);
  return {
    chart,
    band,
    barW: Math.max(3, Math.min(40, band * 0.62)),
    cx,
    yPct,
    yRight,
    plotTop: m.top,
    plotBottom: m.top + plotH,
  };
}

/** A figure that is null: an outlined band with "n/a", its tooltip the row's notes. */
export function gapMark(f: Frame, i: number, attrs: Record<string, unknown>, notes: string[]): SVGElement {
  const x = f.cx(i) - f.barW / 2;
  return svg('g', { class: 'gap', 'data-gap': 'true', ...attrs }, [
    svg('title', { text: notes.join(' · ') || 'No figure.' }),
    svg('rect', { class: 'gap-box', x, y: f.plotTop, width: f.barW, height: f.plotBottom - f.plotTop }),
    svg('text', { x: f.cx(i), y: f.plotBottom - 6, 'text-anchor': 'middle', text: 'n/a' }),
  ]);
}

/** A bar from v0 to v1 percent (stacked bars start where the one below ends). */
export function pctBar(f: Frame, x: number, width: number, v0: number, v1: number, className: string): SVGElement {
  const top = f.yPct(v1);
  return svg('rect', { class: className, x, y: top, width, height: Math.max(0, f.yPct(v0) - top) });
}

/** A line through the points that have a value; a null breaks it (a gap, not a fall to 0). */
export function brokenLine(f: Frame, values: Array<number | null>, className: string): SVGElement | null {
  let d = '';
  let open = false;
  values.forEach((v, i) => {
    if (v === null) {
      open = false;
      return;
    }
    d += `${open ? 'L' : 'M'}${f.cx(i).toFixed(1)} ${f.yRight(v).toFixed(1)}`;
    open = true;
  });
  return d.includes('L') ? svg('path', { class: className, d, 'aria-hidden': 'true' }) : null;
}
