import type { Command } from '../command.ts';
import { absolutePaths, operate } from '../run-operation.ts';

export const snapshotCommand: Command = {
  name: 'snapshot',
  summary: 'Write the analyst snapshot now (a consistent read-only copy without keys, usage and webhooks)',
  usage: 'snapshot [<file>] [--json] [--config <file>]',
  allowPositionals: true,
  options: { json: { type: 'boolean' }, config: { type: 'string' } },
  optionHelp: {
    json: 'path, time, size and tables as one JSON document',
    config: 'config file (JSON); the default file is snapshot.path',
  },
  run: (args) => operate('snapshot', absolutePaths(args)),
};

export const backupCommand: Command = {
  name: 'backup',
  summary:
    'Write a consistent copy of the whole database to <file>, also while the service runs (restore: ' +
    'docs/guides/operating.md)',
  usage: 'backup <file> [--json] [--config <file>]',
  allowPositionals: true,
  options: { json: { type: 'boolean' }, config: { type: 'string' } },
  optionHelp: {
    json: 'path, time, size and tables as one JSON document',
    config: 'config file (JSON); TRANSIT_DB selects the database',
  },
  run: (args) => operate('backup', absolutePaths(args)),
};
