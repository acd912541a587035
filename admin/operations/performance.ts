import { MODES, type Mode } from '../../core/types.ts';
import { PERFORMANCE_GROUPS } from '../../store/performance/index.ts';
import { UsageError } from '../../core/usage-error.ts';
import { printPerformanceReport } from './performance-report.ts';
import type { Operation } from './types.ts';

function oneOf<T extends string>(name: string, value: unknown, allowed: readonly T[], fallback: T): T {
  if (value === undefined) return fallback;
  if (!(allowed as readonly unknown[]).includes(value))
    throw new UsageError(`--${name} must be one of ${allowed.join(', ')}`);
  return value as T;
}

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

export const performanceOperation: Operation = {
  check({ values }) {
    oneOf<Mode>('mode', values.mode, MODES, 'bus');
    oneOf('group', values.group, PERFORMANCE_GROUPS, 'day');
    if (text(values.route) === undefined)
      throw new UsageError('performance needs --route <id> (a rail line with --mode rail)');
  },
  async run({ db, config }, { values }, io) {
    const from = text(values.from);
    const to = text(values.to);
    return printPerformanceReport(
      db,
      {
        mode: oneOf<Mode>('mode', values.mode, MODES, 'bus'),
        route: text(values.route)!,
        group: oneOf('group', values.group, PERFORMANCE_GROUPS, 'day'),
        split: values.split === true,
        json: values.json === true,
        settings: config.reliability,
        performance: config.performance,
        ...(from !== undefined ? { from } : {}),
        ...(to !== undefined ? { to } : {}),
      },
      { out: (table) => io.out(table.replace(/\n$/, '')), err: io.err },
    );
  },
};
