import type { Command } from '../command.ts';
import { operate } from '../run-operation.ts';

export const exportCommand: Command = {
  name: 'export',
  summary: 'Write history exports (typed Parquet and gzipped NDJSON) for finished service days',
  usage:
    'export --from <YYYY-MM-DD> [--to <YYYY-MM-DD>] [--dataset reliability,realtime,alerts|all] [--format ' +
    'parquet,ndjson.gz|all] [--force] [--json]',
  options: {
    dataset: { type: 'string' },
    from: { type: 'string' },
    to: { type: 'string' },
    format: { type: 'string' },
    force: { type: 'boolean' },
    json: { type: 'boolean' },
    config: { type: 'string' },
  },
  optionHelp: {
    dataset: 'datasets, comma-separated, or all (default all)',
    from: 'first service day (required)',
    to: 'last service day (default: --from)',
    format: 'formats, comma-separated, or all (default: exports.formats)',
    force: 'rewrite files that are already ready',
    json: 'one JSON document: time zone, folder and one entry per file',
    config: 'config file (JSON); TRANSIT_DB selects the database',
  },
  run: (args) => operate('export', args),
};
