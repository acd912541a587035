import type { Command } from '../cli.ts';
import { operate } from '../operator.ts';

export const keysCommand: Command = {
  name: 'keys',
  summary: 'Create, list or revoke API keys (create prints the key once, alone on the first line)',
  usage:
    'keys create --plan free|regular|max [--test] [--name <name>] | keys list [--active] | keys revoke <id or prefix>  [--json]',
  allowPositionals: true,
  options: {
    plan: { type: 'string' },
    test: { type: 'boolean' },
    name: { type: 'string' },
    active: { type: 'boolean' },
    json: { type: 'boolean' },
    config: { type: 'string' },
  },
  optionHelp: {
    plan: 'create: the plan of the key',
    test: 'create: a test key (tk_test_…), metered apart',
    name: 'create: a label for the key',
    active: 'list: leave out revoked keys',
    json: 'one JSON document instead of text',
    config:
      'config file (JSON); TRANSIT_DB selects the database. A running service is reached through its admin socket',
  },
  run: (args) => operate('keys', args),
};
