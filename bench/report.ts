// One line per figure for `npm run bench` (bench/all.ts): each bench, when BENCH_REPORT names a
// file, appends its figures there as JSON lines beside what it prints for people, so the table
// is built from the numbers themselves rather than from parsed prose.
import { appendFileSync } from 'node:fs';

export interface BenchFigure {
  /** the bench script (ingest, rollup, http, …) */
  bench: string;
  /** what is measured */
  figure: string;
  value: number;
  unit: string;
  /** the same-run baseline it is compared with */
  baseline?: string;
  baselineValue?: number;
  /** value ÷ baseline, or as the bench defines it (said in `figure`) */
  ratio?: number;
  /** the target in words, e.g. "< 6 ms" */
  target?: string;
  /** null: no target */
  met: boolean | null;
}

export function report(figure: BenchFigure): void {
  const file = process.env.BENCH_REPORT;
  if (file) appendFileSync(file, `${JSON.stringify(figure)}\n`);
}
