// `transit-api keys create|list|revoke`: the argument handling, so the CLI only wires a Db.
import type { Db } from '../store/db.ts';
import { createKey, KeyNotFoundError, listKeys, revokeKey, type ApiKeyInfo } from './keys.ts';
import { isPlan, PLANS } from './plans.ts';

export const KEYS_USAGE = [
  'usage: transit-api keys create --plan free|regular|max [--test] [--name NAME] [--json]',
  '       transit-api keys list [--active] [--json]',
  '       transit-api keys revoke <key id or key prefix> [--json]',
].join('\n');

export interface KeysCommandOptions {
  /** told after a revocation, so a running service drops the key from its cache at once */
  onRevoked?: (keyId: string) => void;
}

type Print = (line: string) => void;

function table(keys: readonly ApiKeyInfo[]): string[] {
  const header = ['id', 'prefix', 'plan', 'test', 'created_at', 'revoked_at', 'name'];
  const rows = keys.map((k) => [
    k.id,
    `${k.prefix}…`,
    k.plan,
    k.test ? 'yes' : 'no',
    k.created_at,
    k.revoked_at ?? '-',
    k.name ?? '',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)];
}

/**
 * Runs one keys subcommand; resolves with the process exit code. `create` prints the key alone
 * on the first line (`keys create … | head -1` and `$(…)` get just the key), then what it is.
 */
export async function runKeysCommand(
  db: Db,
  args: readonly string[],
  print: Print,
  printError: Print = print,
  options: KeysCommandOptions = {},
): Promise<number> {
  const json = args.includes('--json');
  const [command, ...rest] = args.filter((a) => a !== '--json');
  try {
    if (command === 'create') {
      let plan: string | undefined;
      let name: string | undefined;
      let test = false;
      for (let i = 0; i < rest.length; i++) {
        const arg = rest[i]!;
        if (arg === '--test') test = true;
        else if (arg === '--plan') plan = rest[++i];
        else if (arg.startsWith('--plan=')) plan = arg.slice(7);
        else if (arg === '--name') name = rest[++i];
        else if (arg.startsWith('--name=')) name = arg.slice(7);
        else throw new UsageError(`unknown argument ${JSON.stringify(arg)}`);
      }
      if (!plan || !isPlan(plan)) throw new UsageError(`--plan must be one of ${PLANS.join(', ')}`);
      const created = await createKey(db, { plan, test, name: name ?? null });
      if (json) {
        print(JSON.stringify(created));
        return 0;
      }
      print(created.key);
      print(
        `created ${created.id} (${created.plan}${created.test ? ', test' : ''}): the key above is shown once and stored only as a hash, keep it now`,
      );
      return 0;
    }
    if (command === 'list') {
      const unknown = rest.filter((a) => a !== '--active');
      if (unknown.length) throw new UsageError(`unknown argument ${JSON.stringify(unknown[0])}`);
      const keys = await listKeys(db, { includeRevoked: !rest.includes('--active') });
      if (json) print(JSON.stringify(keys));
      else for (const line of table(keys)) print(line);
      return 0;
    }
    if (command === 'revoke') {
      if (rest.length !== 1) throw new UsageError('revoke takes one key id or prefix');
      const revoked = await revokeKey(db, rest[0]!);
      options.onRevoked?.(revoked.id);
      print(json ? JSON.stringify(revoked) : `revoked ${revoked.id} (${revoked.prefix}…) at ${revoked.revoked_at}`);
      return 0;
    }
    throw new UsageError(command ? `unknown keys command ${JSON.stringify(command)}` : 'missing keys command');
  } catch (err) {
    if (err instanceof UsageError) {
      printError(`${err.message}\n${KEYS_USAGE}`);
      return 2;
    }
    if (err instanceof KeyNotFoundError) {
      printError(err.message);
      return 1;
    }
    throw err;
  }
}

class UsageError extends Error {}
