import type { Command } from '../command.ts';
import { absolutePaths, operate } from '../run-operation.ts';

export const importGtfsCommand: Command = {
  name: 'import-gtfs',
  summary:
    'Import a static GTFS schedule (zip, folder or URL) into the database as a new version, replacing ' +
    'the previous copy',
  usage: 'import-gtfs <zip path, folder or URL> [--id <schedule id>] [--json] [--config <file>]',
  allowPositionals: true,
  options: { id: { type: 'string' }, json: { type: 'boolean' }, config: { type: 'string' } },
  optionHelp: {
    id: 'schedule id (default: the only configured schedule, else "default")',
    json: 'the import summary as one JSON document',
    config:
      'config file (JSON); TRANSIT_DB overrides the database path. A running service imports it and uses it at once',
  },
  run: (args) => operate('import-gtfs', absolutePaths(args)),
};
