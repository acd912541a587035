import type { Command } from '../command.ts';
import { operate } from '../run-operation.ts';

export const statusCommand: Command = {
  name: 'status',
  summary: 'Is the service running; schedules, feeds and their polls, API keys in the database',
  usage: 'status [--json] [--config <file>]',
  options: { json: { type: 'boolean' }, config: { type: 'string' } },
  optionHelp: {
    json: 'one JSON document',
    config: 'config file (JSON); TRANSIT_DB selects the database',
  },
  run: (args) => operate('status', args),
};

export const reloadCommand: Command = {
  name: 'reload',
  summary: 'Make the running service re-read its config file (as SIGHUP does) and print what changed',
  usage: 'reload [--json] [--config <file>]',
  options: { json: { type: 'boolean' }, config: { type: 'string' } },
  optionHelp: {
    json: 'the outcome as one JSON document',
    config: 'config file (JSON) locating the service (its admin socket); the service re-reads its own file',
  },
  run: (args) => operate('reload', args),
};
