import { MODES, type Mode } from '../../core/types.ts';
import { ROLLUP_GROUPS } from '../../store/rollup-input.ts';
import { UsageError } from '../../core/usage-error.ts';
import { printPerformanceReport } from './performance-report.ts';
import { oneOf, text } from './options.ts';
import { readServedIds } from '../../store/id-scope.ts';
import type { Operation } from './types.ts';

export const performanceOperation: Operation = {
  check({ values }) {
    oneOf<Mode>('mode', values.mode, MODES, 'bus');
    oneOf('group', values.group, ROLLUP_GROUPS, 'day');
    if (text(values.route) === undefined)
      throw new UsageError('performance needs --route <id> (a rail line with --mode rail)');
  },
  async run({ db, config, service }, { values }, io) {
    const from = text(values.from);
    const to = text(values.to);
    return printPerformanceReport(
      db,
      {
        mode: oneOf<Mode>('mode', values.mode, MODES, 'bus'),
        route: text(values.route)!,
        group: oneOf('group', values.group, ROLLUP_GROUPS, 'day'),
        split: values.split === true,
        json: values.json === true,
        settings: config.reliability,
        // routes as the API names them
        ids: service?.servedIds?.() ?? (await readServedIds(db, config)),
        performance: config.performance,
        ...(from !== undefined ? { from } : {}),
        ...(to !== undefined ? { to } : {}),
      },
      { out: (table) => io.out(table.replace(/\n$/, '')), err: io.err },
    );
  },
};
