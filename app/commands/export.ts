import { loadConfig } from '../../core/config.ts';
import type { Command } from '../cli.ts';
import { UsageError } from '../cli.ts';

export const exportCommand: Command = {
  name: 'export',
  summary: 'Write history exports (typed Parquet and gzipped NDJSON) for finished service days',
  usage: 'export --from <YYYY-MM-DD> [--to <YYYY-MM-DD>] [--dataset reliability,realtime,alerts|all] [--format parquet,ndjson.gz|all] [--force]',
  options: {
    dataset: { type: 'string' }, from: { type: 'string' }, to: { type: 'string' },
    format: { type: 'string' }, force: { type: 'boolean' }, config: { type: 'string' },
  },
  optionHelp: {
    dataset: 'datasets, comma-separated, or all (default all)',
    from: 'first service day (required)',
    to: 'last service day (default: --from)',
    format: 'formats, comma-separated, or all (default: exports.formats)',
    force: 'rewrite files that are already ready',
    config: 'config file (JSON); TRANSIT_DB selects the database',
  },
  async run({ values }) {
    if (!values.from) throw new UsageError('export needs --from <YYYY-MM-DD>');
    const config = loadConfig(values.config as string | undefined);
    const { exportCommandRun, ExportArgsError } = await import('../../exports/cli.ts');
    try {
      return await exportCommandRun({
        dataset: values.dataset as string | undefined,
        from: values.from as string,
        to: values.to as string | undefined,
        format: values.format as string | undefined,
        force: values.force === true,
      }, config);
    } catch (err) {
      if (err instanceof ExportArgsError) throw new UsageError(err.message);
      throw err;
    }
  },
};
