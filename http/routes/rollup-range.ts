// Which service dates a reliability request covers: the asked from/to, or the defaults (the
// last 28 days), checked against the mode's retained window.
import { ApiError } from '../../core/errors.ts';
import type { Mode } from '../../core/types.ts';
import { addDays, type RetainedWindow } from '../../store/reliability/index.ts';
import type { ApiRetainedWindow } from './rollup-schemas.ts';

export const DEFAULT_RANGE_DAYS = 28;

/**
 * The dates a mode's rollups can be asked for: from the first retained day to the last day with
 * rows, or to today when that is later (today's live figures are always available). Null when
 * the mode has nothing retained, except bus, whose window is then today alone: the bus
 * endpoints always answer, and before any history exists only today's live figures are real.
 */
export function requestWindow(mode: Mode, retained: RetainedWindow | null, today: string): ApiRetainedWindow | null {
  if (!retained) return mode === 'bus' ? { from: today, to: today, finalized_through: null } : null;
  return {
    from: retained.earliest,
    to: retained.latest > today ? retained.latest : today,
    finalized_through: retained.finalized_through,
  };
}

const clamp = (d: string, lo: string, hi: string): string => (d < lo ? lo : d > hi ? hi : d);
const later = (a: string, b: string): string => (a > b ? a : b);

function outside(mode: Mode, parameter: 'from' | 'to', value: string, window: ApiRetainedWindow): ApiError {
  const span = `${window.from} to ${window.to}`;
  const detail = `${parameter} ${value} is outside the retained window of ${mode} reliability: ${span}`;
  return new ApiError('outside_retention', `${detail}.`, {
    errors: [{ parameter, detail: `outside the retained window ${span}` }],
    members: { retained_window: window },
  });
}

/**
 * An explicit from/to must lie inside the window (400 outside_retention naming it); a missing
 * one defaults to today (to) and to - 27 days (from), moved inside the window. A from after to
 * is left for the rollup to refuse with the parameter named.
 */
export function resolveRange(
  mode: Mode,
  asked: { from?: string; to?: string },
  window: ApiRetainedWindow,
  today: string,
): { from: string; to: string } {
  for (const parameter of ['from', 'to'] as const) {
    const value = asked[parameter];
    if (value !== undefined && (value < window.from || value > window.to))
      throw outside(mode, parameter, value, window);
  }
  if (asked.from !== undefined && asked.to !== undefined) return { from: asked.from, to: asked.to };
  if (asked.to !== undefined) {
    return { from: later(addDays(asked.to, -(DEFAULT_RANGE_DAYS - 1)), window.from), to: asked.to };
  }
  const to = clamp(today, window.from, window.to);
  if (asked.from !== undefined) return { from: asked.from, to: later(asked.from, to) };
  return { from: later(addDays(to, -(DEFAULT_RANGE_DAYS - 1)), window.from), to };
}
