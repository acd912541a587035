// `transit-api keys …` as the operator sees it: the tables, the key printed once, the exit codes,
// and what revoking and deleting endpoints print.
import t from 'tap';
import { Db } from '../../store/db.ts';
import { createEndpoint, listEndpoints } from '../../webhooks/endpoints.ts';
import { enqueueEvents } from '../../webhooks/outbox.ts';
import { rawEvent } from '../../test/support/events.ts';
import { webhookSecrets } from '../../test/support/webhooks.ts';
import { createKey, listKeys } from '../../accounts/keys.ts';
import { runKeysCommand } from './keys-subcommands.ts';

t.test('keys CLI', async (t) => {
  const db = await Db.open(':memory:');
  t.teardown(() => db.close());
  const out: string[] = [];
  const print = (line: string) => out.push(line);
  t.equal(await runKeysCommand(db, ['create', '--plan', 'max', '--test', '--name', 'ci'], print), 0);
  t.match(
    out.join('\n'),
    /^tk_test_[A-Za-z0-9]{32}\ncreated key_\w+ \(max, test\): .*shown once/,
    'the key alone on the first line',
  );
  t.equal(await runKeysCommand(db, ['create', '--plan=regular', '--name=web'], print), 0);
  out.length = 0;
  t.equal(await runKeysCommand(db, ['list'], print), 0);
  t.match(out[0], /^id\s+prefix\s+plan\s+test/);
  t.equal(out.length, 3);
  t.notMatch(out.join('\n'), /tk_test_[A-Za-z0-9]{32}/, 'list never prints keys');
  const id = (await listKeys(db))[0]!.id;
  out.length = 0;
  t.equal(await runKeysCommand(db, ['revoke', id], print), 0);
  t.match(out[0], new RegExp(`revoked ${id}`));
  out.length = 0;
  t.equal(await runKeysCommand(db, ['list', '--active'], print), 0);
  t.equal(out.length, 2);
  const errors: string[] = [];
  const err = (line: string) => errors.push(line);
  t.equal(await runKeysCommand(db, ['create', '--plan', 'gold'], print, err), 2);
  t.equal(await runKeysCommand(db, ['create', '--plan', 'free', '--bogus'], print, err), 2);
  t.equal(await runKeysCommand(db, ['list', '--all'], print, err), 2);
  t.equal(await runKeysCommand(db, ['revoke'], print, err), 2);
  t.equal(await runKeysCommand(db, ['revoke', 'key_nope'], print, err), 1);
  t.equal(await runKeysCommand(db, ['rotate'], print, err), 2);
  t.equal(await runKeysCommand(db, [], print, err), 2);
  t.match(errors.join('\n'), /usage: transit-api keys create/);
});

t.test('keys revoke ends the webhooks; keys show and endpoints let the operator see and delete them', async (t) => {
  const db = await Db.open(':memory:');
  t.teardown(() => db.close());
  const deps = { policy: { allow: new Set(['loopback'] as const) }, secrets: webhookSecrets };
  const key = await createKey(db, { plan: 'regular', name: 'leaked' });
  const other = await createKey(db, { plan: 'regular', name: 'other' });
  const a = await createEndpoint(db, key.id, { url: 'http://127.0.0.1:1/a', filters: {} }, deps);
  const b = await createEndpoint(db, key.id, { url: 'http://127.0.0.1:1/b', filters: {} }, deps);
  const kept = await createEndpoint(db, other.id, { url: 'http://127.0.0.1:1/c', filters: {} }, deps);
  await enqueueEvents(db, [rawEvent('alert.created', { modes: ['bus'], routes: ['1'], data: {} })], Date.now());
  const out: string[] = [];
  const errors: string[] = [];
  const print = (line: string) => out.push(line);
  const err = (line: string) => errors.push(line);
  const run = async (args: string[]) => {
    out.length = 0;
    errors.length = 0;
    return runKeysCommand(db, args, print, err);
  };

  t.equal(await run(['show', key.id]), 0);
  t.match(out.join('\n'), /^id {10}key_\w+$/m);
  t.match(out.join('\n'), /^revoked_at  -$/m);
  t.match(out.join('\n'), /^webhooks {4}2 endpoints, 2 enabled/m);

  const revokedBy: string[] = [];
  out.length = 0;
  t.equal(await runKeysCommand(db, ['revoke', key.id], print, err, { onRevoked: (id) => revokedBy.push(id) }), 0);
  t.match(
    out[0],
    /^revoked key_\w+ \(tk_live_\w+…\) at .*; 2 webhook endpoints disabled, 2 queued deliveries cancelled$/,
  );
  t.same(revokedBy, [key.id]);
  t.equal(await run(['revoke', key.id, '--json']), 0);
  t.match(JSON.parse(out[0]!), { id: key.id, webhooks: { endpoints_disabled: 0, deliveries_cancelled: 0 } });

  t.equal(await run(['show', key.prefix, '--json']), 0, 'by prefix too');
  const shown = JSON.parse(out[0]!) as { revoked_at: string; webhook_endpoints: Array<Record<string, unknown>> };
  t.ok(shown.revoked_at);
  t.same(
    shown.webhook_endpoints.map((e) => [e.id, e.enabled, e.disabled_reason, e.deliveries]),
    [a, b].map((e) => [e.id, false, 'key_revoked', { pending: 0, retrying: 0, succeeded: 0, failed: 0, cancelled: 1 }]),
  );
  t.notOk(JSON.stringify(shown).includes('whsec_'), 'no secret is shown');

  t.equal(await run(['endpoints', key.id]), 0);
  t.match(out[0], /^id\s+enabled\s+disabled_reason\s+created_at\s+deliveries\s+url$/);
  t.equal(out.length, 3);
  t.match(out[1], new RegExp(`^${a.id}\\s+no\\s+key_revoked\\s+\\S+\\s+cancelled 1\\s+http://127.0.0.1:1/a$`));

  t.equal(await run(['endpoints', key.id, '--delete', a.id]), 0);
  t.same(out, [
    `deleted ${a.id} (http://127.0.0.1:1/a)`,
    `1 webhook endpoint of ${key.id} deleted: secrets erased, nothing more is sent`,
  ]);
  t.equal(await run(['endpoints', key.id, '--delete', a.id]), 1, 'already deleted');
  t.match(errors[0], /no webhook endpoint "ep_[\w-]+" on key_\w+/);
  t.equal(await run(['endpoints', key.id, '--delete', kept.id]), 1, "another key's endpoint is not reached");
  t.equal(await run(['endpoints', key.id, '--delete-all', '--json']), 0);
  t.same(JSON.parse(out[0]!), { key_id: key.id, deleted: [b.id] });
  t.equal(await run(['endpoints', key.id]), 0);
  t.same(out, [`${key.id} has no webhook endpoints`]);
  const [secrets] = await db.all<{ n: bigint }>(
    `SELECT count(*) AS n FROM webhook_endpoints WHERE key_id = $1 AND (secret <> '' OR deleted_at IS NULL)`,
    [key.id],
  );
  t.equal(Number(secrets!.n), 0, 'deleted, secrets erased');
  t.match(await listEndpoints(db, other.id), [{ id: kept.id, enabled: true }], "the other key's endpoint untouched");

  t.equal(await run(['endpoints']), 2);
  t.equal(await run(['endpoints', key.id, '--delete', a.id, '--delete-all']), 2);
  t.equal(await run(['endpoints', key.id, '--bogus']), 2);
  t.equal(await run(['show']), 2);
  t.equal(await run(['show', 'key_nope']), 1);
  t.match(errors[0], /no key with id or prefix "key_nope"/);
});
