import { runKeysCommand } from './keys-subcommands.ts';
import type { Operation } from './types.ts';

// `keys create|list|revoke|show|endpoints`: a revocation inside the service also drops the key from
// the API's cache and ends its open streams (on every node with a broker), so it is refused on the
// next request rather than after api.key_recheck_ms.
export const keysOperation: Operation = {
  createsDatabase: ({ positionals }) => positionals[0] === 'create',
  async run({ db, service }, { values, positionals }, io) {
    const args = [...positionals];
    if (values.plan !== undefined) args.push('--plan', String(values.plan));
    if (values.test === true) args.push('--test');
    if (values.name !== undefined) args.push('--name', String(values.name));
    if (values.active === true) args.push('--active');
    if (values.delete !== undefined) args.push('--delete', String(values.delete));
    if (values['delete-all'] === true) args.push('--delete-all');
    if (values.json === true) args.push('--json');
    return runKeysCommand(db, args, io.out, io.err, { onRevoked: (id) => service?.keyRevoked(id) });
  },
};
