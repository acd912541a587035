import { runKeysCommand } from './keys-subcommands.ts';
import type { Operation } from './types.ts';

// `keys create|list|revoke|show|endpoints`: a revocation inside the service also drops the key from
// the API's cache and ends its open streams (on every node with a broker), so it is refused on the
// next request rather than after api.key_recheck_ms.
export const keysOperation: Operation = {
  createsDatabase: ({ positionals }) => positionals[0] === 'create',
  async run({ db, service }, request, io) {
    return runKeysCommand(db, request, io.out, io.err, { onRevoked: (id) => service?.keyRevoked(id) });
  },
};
