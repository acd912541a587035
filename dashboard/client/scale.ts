// The usage chart's axes, free of the DOM (tests import them directly).

/** The smallest of 1, 2, 2.5, 5 × 10^n that is at least raw (whole numbers for counts). */
export function niceStep(raw: number, integer: boolean): number {
  if (!(raw > 0)) return 1;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const norm = raw / magnitude;
  const step = (norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 2.5 ? 2.5 : norm <= 5 ? 5 : 10) * magnitude;
  if (!integer) return step;
  return step < 1 ? 1 : step % 1 ? 5 : step; // 2.5 is the only fraction at or above 1
}

export interface AxisScale {
  top: number;
  ticks: number[];
}

/** 0 … top in `intervals` equal nice steps, so two axes can share one set of grid lines. */
export function axisScale(max: number, intervals: number, integer: boolean): AxisScale {
  const step = niceStep(max / intervals, integer);
  const ticks: number[] = [];
  for (let i = 0; i <= intervals; i++) ticks.push(Number((i * step).toPrecision(12)));
  return { top: step * intervals, ticks };
}

/** About four intervals for the larger axis; fewer when the counts are small. */
export function intervalsFor(max: number): number {
  return max > 0 && max < 4 ? Math.max(1, Math.ceil(max)) : 4;
}

/** Show every n-th date label so that labels of labelPx never overlap in bands of bandPx. */
export function labelEvery(bandPx: number, labelPx: number): number {
  return Math.max(1, Math.ceil(labelPx / Math.max(1, bandPx)));
}

export function shortNumber(n: number): string {
  if (n >= 1e6) return `${(n / 1e6).toFixed(n % 1e6 ? 1 : 0)}M`;
  if (n >= 1e4) return `${(n / 1e3).toFixed(n % 1e3 ? 1 : 0)}k`;
  return String(n);
}
