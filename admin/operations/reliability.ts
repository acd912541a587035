import { MODES, type Mode } from '../../core/types.ts';
import { printReliabilityReport } from './reliability-report.ts';
import { oneOf, text } from './options.ts';
import { readServedIds } from '../../store/id-scope.ts';
import type { Operation } from './types.ts';
import { ROLLUP_GROUPS } from '../../store/rollup-input.ts';

export const reliabilityOperation: Operation = {
  check({ values }) {
    oneOf<Mode>('mode', values.mode, MODES);
    oneOf('group', values.group, ROLLUP_GROUPS, 'day');
  },
  async run({ db, config, service }, { values }, io) {
    // absent: the route's own mode, or every mode (printReliabilityReport)
    const mode = oneOf<Mode>('mode', values.mode, MODES);
    const group = oneOf('group', values.group, ROLLUP_GROUPS, 'day');
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
