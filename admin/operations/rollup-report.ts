// What the operator's reliability and performance tables share: the dates asked for (by default
// the last 28 service days up to today in the agency time zone) and a bad range said as the CLI
// option that caused it.
import { addDays, isServiceDate, wallClock } from '../../core/dates.ts';
import { UsageError } from '../../core/usage-error.ts';
import type { Db } from '../../store/db.ts';
import { resolveTimezone } from '../../store/reliability/index.ts';
import { RollupInputError } from '../../store/rollup-input.ts';

export const DEFAULT_REPORT_DAYS = 28;

export interface ReportOutput {
  out(text: string): void;
  err(line: string): void;
}

export interface ReportRangeOptions {
  /** default: DEFAULT_REPORT_DAYS - 1 days before `to` */
  from?: string;
  /** default: today in the agency time zone */
  to?: string;
  /** config.reliability */
  settings: { readonly timezone?: string | undefined; readonly service_day_end: string };
  now?: Date;
}

export async function reportRange(
  db: Db,
  options: ReportRangeOptions,
): Promise<{ timezone: string; now: Date; from: string; to: string }> {
  const timezone = await resolveTimezone(db, options.settings.timezone);
  const now = options.now ?? new Date();
  const to = options.to ?? wallClock(now, timezone).date;
  if (!isServiceDate(to)) throw new UsageError('--to must be a date as YYYY-MM-DD');
  const from = options.from ?? addDays(to, -(DEFAULT_REPORT_DAYS - 1));
  return { timezone, now, from, to };
}

/** A RollupInputError as the option that caused it (UsageError); anything else as it is. */
export function asUsageError(err: unknown): unknown {
  if (!(err instanceof RollupInputError)) return err;
  return new UsageError(`--${err.parameter === 'route_id' ? 'route' : err.parameter}: ${err.detail}`);
}
