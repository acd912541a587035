import { ExportArgsError, runExportCommand } from './export-files.ts';
import { UsageError } from '../../core/usage-error.ts';
import type { Operation } from './types.ts';

export const exportOperation: Operation = {
  check({ values }) {
    if (typeof values.from !== 'string') throw new UsageError('export needs --from <YYYY-MM-DD>');
  },
  async run({ db, config, service, progress }, { values }, io) {
    if (typeof values.from !== 'string') throw new UsageError('export needs --from <YYYY-MM-DD>');
    try {
      return await runExportCommand(
        db,
        {
          dataset: values.dataset as string | undefined,
          from: values.from,
          to: values.to as string | undefined,
          format: values.format as string | undefined,
          force: values.force === true,
        },
        config,
        {
          out: io.out,
          json: values.json === true,
          ...(progress ? { stream: progress } : {}),
          // inside the service a running row may be its own export job's
          recover: !service,
        },
      );
    } catch (err) {
      if (err instanceof ExportArgsError) throw new UsageError(err.message);
      throw err;
    }
  },
};
