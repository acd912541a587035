import type { Command } from '../command.ts';
import { operate } from '../run-operation.ts';

export const keysCommand: Command = {
  name: 'keys',
  summary:
    'Create, list, revoke or show API keys (create prints the key once, alone on the first line); see or delete a ' +
    "key's webhook endpoints",
  usage:
    'keys create --plan free|regular|max [--test] [--name <name>] | keys list [--active] | keys revoke <id or ' +
    'prefix> | keys show <id or prefix> | keys endpoints <id or prefix> [--delete <endpoint id> | ' +
    '--delete-all]  [--json]',
  allowPositionals: true,
  options: {
    plan: { type: 'string' },
    test: { type: 'boolean' },
    name: { type: 'string' },
    active: { type: 'boolean' },
    delete: { type: 'string' },
    'delete-all': { type: 'boolean' },
    json: { type: 'boolean' },
    config: { type: 'string' },
  },
  optionHelp: {
    plan: 'create: the plan of the key',
    test: 'create: a test key (tk_test_…), metered apart',
    name: 'create: a label for the key',
    active: 'list: leave out revoked keys',
    delete: 'endpoints: delete this webhook endpoint of the key (its secret is erased, nothing more is sent)',
    'delete-all': 'endpoints: delete every webhook endpoint of the key',
    json: 'one JSON document instead of text',
    config:
      'config file (JSON); TRANSIT_DB selects the database. A running service is reached through its admin socket',
  },
  run: (args) => operate('keys', args),
};
