import { MODES, type Mode } from '../../core/types.ts';
import { UsageError } from '../../core/usage-error.ts';
import { printReliabilityReport } from './reliability-report.ts';
import { readServedIds } from '../../store/id-scope.ts';
import type { Operation } from './types.ts';

const GROUPS = ['day', 'week', 'period'] as const;

function oneOf<T extends string>(name: string, value: unknown, allowed: readonly T[], fallback: T): T;
function oneOf<T extends string>(name: string, value: unknown, allowed: readonly T[]): T | undefined;
function oneOf<T extends string>(name: string, value: unknown, allowed: readonly T[], fallback?: T): T | undefined {
  if (value === undefined) return fallback;
  if (!(allowed as readonly unknown[]).includes(value))
    throw new UsageError(`--${name} must be one of ${allowed.join(', ')}`);
  return value as T;
}

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

export const reliabilityOperation: Operation = {
  check({ values }) {
    oneOf<Mode>('mode', values.mode, MODES);
    oneOf('group', values.group, GROUPS, 'day');
  },
  async run({ db, config, service }, { values }, io) {
    // absent: the route's own mode, or every mode (printReliabilityReport)
    const mode = oneOf<Mode>('mode', values.mode, MODES);
    const group = oneOf('group', values.group, GROUPS, 'day');
    const route = text(values.route);
    const from = text(values.from);
    const to = text(values.to);
    return printReliabilityReport(
      db,
      {
        ...(mode !== undefined ? { mode } : {}),
        group,
        split: values.split === true,
        json: values.json === true,
        settings: config.reliability,
        // routes as the API names them
        ids: service?.servedIds?.() ?? (await readServedIds(db, config)),
        ...(route !== undefined ? { route } : {}),
        ...(from !== undefined ? { from } : {}),
        ...(to !== undefined ? { to } : {}),
      },
      { out: (table) => io.out(table.replace(/\n$/, '')), err: io.err },
    );
  },
};
