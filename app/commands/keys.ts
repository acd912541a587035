import { loadConfig } from '../../core/config.ts';
import type { Command } from '../cli.ts';

export const keysCommand: Command = {
  name: 'keys',
  summary: 'Create, list or revoke API keys (create prints the key once)',
  usage: 'keys create --plan free|regular|max [--test] [--name <name>] | keys list [--active] | keys revoke <id or prefix>',
  allowPositionals: true,
  options: {
    plan: { type: 'string' }, test: { type: 'boolean' }, name: { type: 'string' },
    active: { type: 'boolean' }, config: { type: 'string' },
  },
  optionHelp: {
    plan: 'create: the plan of the key',
    test: 'create: a test key (tk_test_…), metered apart',
    name: 'create: a label for the key',
    active: 'list: leave out revoked keys',
    config: 'config file (JSON); TRANSIT_DB selects the database',
  },
  async run({ values, positionals }) {
    const config = loadConfig(values.config as string | undefined);
    const [{ Db, dbOptions }, { runKeysCommand }] = await Promise.all([import('../../store/db.ts'), import('../../http/keys-cli.ts')]);
    const args = [...positionals];
    if (values.plan) args.push('--plan', values.plan as string);
    if (values.test) args.push('--test');
    if (values.name) args.push('--name', values.name as string);
    if (values.active) args.push('--active');
    const db = await Db.open(config.db_path, dbOptions(config.store));
    try {
      return await runKeysCommand(db, args, (l) => console.log(l), (l) => console.error(l));
    } finally {
      await db.close();
    }
  },
};
