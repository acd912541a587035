// What a reliability or performance rollup accepts: the same groups, range limit and route id
// rules for both, checked before any SQL runs. Callers turn a RollupInputError into their own
// wording (a 400 naming the parameter, a CLI option).
import { daysBetween, isServiceDate } from '../core/dates.ts';
import { MODES, type Mode } from '../core/types.ts';

export const ROLLUP_GROUPS = ['day', 'week', 'period'] as const;
export type RollupGroup = (typeof ROLLUP_GROUPS)[number];

/** Longest from..to a rollup accepts (about two years of retained history). */
export const MAX_ROLLUP_DAYS = 800;

export class RollupInputError extends Error {
  constructor(
    readonly parameter: string,
    detail: string,
  ) {
    super(`${parameter}: ${detail}`);
    this.name = 'RollupInputError';
  }

  /** the message without its `parameter: ` lead */
  get detail(): string {
    return this.message.slice(this.parameter.length + 2);
  }
}

export interface RollupRange {
  mode: Mode;
  group: RollupGroup;
  from: string;
  to: string;
  /** absent: every route of the mode (reliability only) */
  routeId?: string | undefined;
}

export function validateRollupRange(q: RollupRange): void {
  if (!(MODES as readonly string[]).includes(q.mode)) throw new RollupInputError('mode', `one of ${MODES.join(', ')}`);
  if (!(ROLLUP_GROUPS as readonly string[]).includes(q.group)) {
    throw new RollupInputError('group', `one of ${ROLLUP_GROUPS.join(', ')}`);
  }
  if (!isServiceDate(q.from)) throw new RollupInputError('from', 'a YYYY-MM-DD date');
  if (!isServiceDate(q.to)) throw new RollupInputError('to', 'a YYYY-MM-DD date');
  const span = daysBetween(q.from, q.to);
  if (span < 0) throw new RollupInputError('to', 'must not be before from');
  if (span >= MAX_ROLLUP_DAYS) throw new RollupInputError('to', `range longer than ${MAX_ROLLUP_DAYS} days`);
  if (q.routeId !== undefined && (q.routeId.length === 0 || q.routeId.length > 255)) {
    throw new RollupInputError('route_id', '1 to 255 characters');
  }
}

/** What every rollup result says of the range it covers, beside its own rows and figures. */
export interface RollupResultBase<Row extends { period: string; service_day: string }> {
  mode: Mode;
  group: RollupGroup;
  from: string;
  to: string;
  split: boolean;
  timezone: string;
  /** last service date whose outcome is final (finalized or over); later days are live */
  complete_through: string;
  /** ordered by route, period, then weekday / saturday / sunday */
  rows: Row[];
  /** service dates of from..to, up to today, without any observation of the route */
  days_without_observations: string[];
  /** plain-language caveats about the figures */
  notes: string[];
}
