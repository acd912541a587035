// `transit-api keys create|list|revoke|show|endpoints`: the argument handling, so the CLI only
// wires a Db. A revocation ends the key's webhooks in the same transaction (webhooks/revocation.ts);
// `show` and `endpoints` let the operator see and delete the endpoints of a key that, revoked,
// can no longer reach them itself.
import type { Db } from '../../store/db.ts';
import { deleteKeyEndpoints, keyEndpoints, type KeyEndpoint } from '../../webhooks/key-endpoints.ts';
import { endRevokedWebhooks, type RevokedWebhooks } from '../../webhooks/revocation.ts';
import { createKey, KeyNotFoundError, listKeys, resolveKey, revokeKey, type ApiKeyInfo } from '../../accounts/keys.ts';
import { isPlan, PLANS } from '../../accounts/plans.ts';
import { UsageError } from '../../core/usage-error.ts';
import type { CommandRequest } from '../protocol.ts';
import { onlyOptions, text } from './options.ts';

export const KEYS_USAGE = [
  'usage: transit-api keys create --plan free|regular|max [--test] [--name NAME] [--json]',
  '       transit-api keys list [--active] [--json]',
  '       transit-api keys revoke <key id or key prefix> [--json]',
  '       transit-api keys show <key id or key prefix> [--json]',
  '       transit-api keys endpoints <key id or key prefix> [--delete <endpoint id> | --delete-all] [--json]',
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

/** The options each subcommand takes (besides --json and --config, which all take). */
const SUBCOMMAND_OPTIONS: Record<string, readonly string[]> = {
  create: ['plan', 'test', 'name'],
  list: ['active'],
  revoke: [],
  show: [],
  endpoints: ['delete', 'delete-all'],
};

/**
 * Runs one keys subcommand on the command line as parsed once (cli/commands/keys.ts declares its
 * options): the subcommand and its key are the positionals. Resolves with the process exit code.
 * `create` prints the key alone on the first line (`keys create … | head -1` and `$(…)` get just
 * the key), then what it is.
 */
export async function runKeysCommand(
  db: Db,
  { values, positionals }: CommandRequest,
  print: Print,
  printError: Print = print,
  options: KeysCommandOptions = {},
): Promise<number> {
  const json = values.json === true;
  const [command, ...rest] = positionals;
  try {
    if (!command) throw new UsageError('missing keys command');
    const allowed = SUBCOMMAND_OPTIONS[command];
    if (!allowed) throw new UsageError(`unknown keys command ${JSON.stringify(command)}`);
    onlyOptions(`keys ${command}`, values, allowed, ['json', 'config']);
    if (command === 'create') {
      if (rest.length) throw new UsageError(`unknown argument ${JSON.stringify(rest[0])}`);
      const plan = text(values.plan);
      if (!plan || !isPlan(plan)) throw new UsageError(`--plan must be one of ${PLANS.join(', ')}`);
      const created = await createKey(db, { plan, test: values.test === true, name: text(values.name) ?? null });
      if (json) {
        print(JSON.stringify(created));
        return 0;
      }
      print(created.key);
      print(
        `created ${created.id} (${created.plan}${created.test ? ', test' : ''}): the key above is shown once and ` +
          `stored only as a hash, keep it now`,
      );
      return 0;
    }
    if (command === 'list') {
      if (rest.length) throw new UsageError(`unknown argument ${JSON.stringify(rest[0])}`);
      const keys = await listKeys(db, { includeRevoked: values.active !== true });
      if (json) print(JSON.stringify(keys));
      else for (const line of table(keys)) print(line);
      return 0;
    }
    if (command === 'revoke') {
      if (rest.length !== 1) throw new UsageError('revoke takes one key id or prefix');
      let webhooks: RevokedWebhooks = { endpoints_disabled: 0, deliveries_cancelled: 0 };
      const revoked = await revokeKey(db, rest[0]!, async (conn, keyId) => {
        webhooks = await endRevokedWebhooks(conn, Date.now(), keyId);
      });
      options.onRevoked?.(revoked.id);
      if (json) print(JSON.stringify({ ...revoked, webhooks }));
      else {
        print(
          `revoked ${revoked.id} (${revoked.prefix}…) at ${revoked.revoked_at}; ` +
            `${plural(webhooks.endpoints_disabled, 'webhook endpoint')} disabled, ` +
            `${plural(webhooks.deliveries_cancelled, 'queued delivery', 'queued deliveries')} cancelled`,
        );
      }
      return 0;
    }
    if (command === 'show') {
      if (rest.length !== 1) throw new UsageError('show takes one key id or prefix');
      const key = await resolveKey(db, rest[0]!);
      const endpoints = await keyEndpoints(db, key.id);
      if (json) print(JSON.stringify({ ...key, webhook_endpoints: endpoints }));
      else for (const line of describe(key, endpoints)) print(line);
      return 0;
    }
    return await endpointsCommand(db, rest, values, json, print, printError);
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

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** `pending 2, cancelled 5`: the states that occur, in lifecycle order. */
function deliveryCounts(endpoint: KeyEndpoint): string {
  const counts = Object.entries(endpoint.deliveries).filter(([, n]) => n > 0);
  return counts.length ? counts.map(([state, n]) => `${state} ${n}`).join(', ') : 'none';
}

function describe(key: ApiKeyInfo, endpoints: readonly KeyEndpoint[]): string[] {
  const enabled = endpoints.filter((e) => e.enabled).length;
  const rows: Array<[string, string]> = [
    ['id', key.id],
    ['prefix', `${key.prefix}…`],
    ['plan', key.plan],
    ['test', key.test ? 'yes' : 'no'],
    ['name', key.name ?? ''],
    ['created_at', key.created_at],
    ['revoked_at', key.revoked_at ?? '-'],
    ['webhooks', `${plural(endpoints.length, 'endpoint')}, ${enabled} enabled (keys endpoints ${key.id})`],
  ];
  return rows.map(([k, v]) => `${k.padEnd(12)}${v}`.trimEnd());
}

function endpointTable(endpoints: readonly KeyEndpoint[]): string[] {
  const header = ['id', 'enabled', 'disabled_reason', 'created_at', 'deliveries', 'url'];
  const rows = endpoints.map((e) => [
    e.id,
    e.enabled ? 'yes' : 'no',
    e.disabled_reason ?? '-',
    e.created_at,
    deliveryCounts(e),
    e.url,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)];
}

/** `keys endpoints <key> [--delete <endpoint id> | --delete-all]` */
async function endpointsCommand(
  db: Db,
  positionals: readonly string[],
  values: CommandRequest['values'],
  json: boolean,
  print: Print,
  printError: Print,
): Promise<number> {
  const deleteOne = text(values.delete);
  const deleteAll = values['delete-all'] === true;
  if (deleteOne === '') throw new UsageError('--delete takes an endpoint id');
  if (positionals.length !== 1) throw new UsageError('endpoints takes one key id or prefix');
  if (deleteOne !== undefined && deleteAll)
    throw new UsageError('give --delete <endpoint id> or --delete-all, not both');
  const key = await resolveKey(db, positionals[0]!);
  if (deleteOne === undefined && !deleteAll) {
    const endpoints = await keyEndpoints(db, key.id);
    if (json) print(JSON.stringify(endpoints));
    else if (endpoints.length === 0) print(`${key.id} has no webhook endpoints`);
    else for (const line of endpointTable(endpoints)) print(line);
    return 0;
  }
  const deleted = await deleteKeyEndpoints(db, key.id, deleteOne === undefined ? undefined : [deleteOne]);
  if (deleteOne !== undefined && deleted.length === 0) {
    printError(`no webhook endpoint ${JSON.stringify(deleteOne)} on ${key.id} (deleted already, or another key's)`);
    return 1;
  }
  if (json) print(JSON.stringify({ key_id: key.id, deleted: deleted.map((e) => e.id) }));
  else {
    for (const e of deleted) print(`deleted ${e.id} (${e.url})`);
    print(`${plural(deleted.length, 'webhook endpoint')} of ${key.id} deleted: secrets erased, nothing more is sent`);
  }
  return 0;
}
