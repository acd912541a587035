// How much of a row's schedule the feeds saw. A day with few observations otherwise reads as a
// disaster: Caltrain's 2023-11-07 capture saw 6 of line L1's 46 trips, all of them running, and
// delivered_pct alone said 13 %. The share of the trips seen that ran, beside it, and a note when
// most trips were never seen, tell missing data from missing service.
import type { RollingWindow, RollupRow } from './rollup.ts';

/** round(100 * num / den, 2) as DuckDB computes it (std::round of the double times 100), null without a denominator. */
export function percent(num: number, den: number): number | null {
  return den > 0 ? Math.round(((100 * num) / den) * 100) / 100 : null;
}

/** Scheduled trips seen by a feed (running or canceled) and the share of them delivered. */
export function observedFigures(counts: {
  scheduled: number;
  delivered: number;
  unobserved: number;
  pending: number;
}): { observed: number; delivered_pct_of_observed: number | null } {
  const observed = Math.max(0, counts.scheduled - counts.unobserved - counts.pending);
  return { observed, delivered_pct_of_observed: percent(counts.delivered, observed) };
}

/** More than half the scheduled trips never observed (pending ones are not yet due, so not counted). */
export function mostlyUnobserved(counts: { scheduled: number; unobserved: number }): boolean {
  return counts.unobserved * 2 > counts.scheduled;
}

const EXAMPLES = 3;

function sameCounts(
  a: { scheduled: number; unobserved: number },
  b: { scheduled: number; unobserved: number },
): boolean {
  return a.scheduled === b.scheduled && a.unobserved === b.unobserved;
}

function rowLabel(row: RollupRow, split: boolean): string {
  return `${row.route_id} ${row.period}${split ? ` ${row.service_day}` : ''}`;
}

function where(
  flagged: readonly { row: RollupRow; counts: { scheduled: number; unobserved: number } }[],
  total: number,
  split: boolean,
): string {
  const examples = flagged
    .slice(0, EXAMPLES)
    .map((f) => `${rowLabel(f.row, split)}: ${f.counts.unobserved} of ${f.counts.scheduled}`);
  const more = flagged.length > EXAMPLES ? `; ${flagged.length - EXAMPLES} more` : '';
  const rows = total === 1 ? 'the row' : `${flagged.length} of ${total} rows`;
  return `in ${rows} (${examples.join('; ')}${more})`;
}

/**
 * The notes for rows, and rows' 7-day figures, where more than half of the scheduled trips were
 * never observed; none when every row saw at least half of its trips.
 */
export function coverageNotes(rows: readonly RollupRow[], split: boolean): string[] {
  const notes: string[] = [];
  const own = rows.filter((row) => mostlyUnobserved(row)).map((row) => ({ row, counts: row }));
  if (own.length > 0) {
    notes.push(
      `More than half of the scheduled trips were never observed ${where(own, rows.length, split)}: ` +
        'delivered_pct counts them as not delivered, so it measures how much of the service the feeds saw as much as ' +
        'the service itself; ' +
        'delivered_pct_of_observed is the share of the trips seen that ran.',
    );
  }
  const rolling = rows
    .filter((row): row is RollupRow & { rolling_7d: RollingWindow } => row.rolling_7d !== null)
    // a window holding no more than the row's own day (history began that day) would say it twice
    .filter((row) => mostlyUnobserved(row.rolling_7d) && !sameCounts(row.rolling_7d, row))
    .map((row) => ({ row, counts: row.rolling_7d }));
  if (rolling.length > 0) {
    notes.push(
      `More than half of the scheduled trips of the 7-day figures were never observed ` +
        `${where(rolling, rows.length, split)}: ` +
        'rolling_7d.delivered_pct counts them as not delivered; rolling_7d.delivered_pct_of_observed is the share of ' +
        'the trips seen that ran.',
    );
  }
  return notes;
}
