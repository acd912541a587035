import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { parseConfig } from './config.ts';
import { captureLogs } from '../test/support/logs.ts';
import { resolveSigningSecret, signingSecretFile } from './signing-secret.ts';

function folder(t: { teardown(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'signing-secret-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

t.test('without signing_secret: generated once into a 0600 file beside the database, then read back', async (t) => {
  const previous = process.umask(0o022);
  t.teardown(() => process.umask(previous));
  const db = join(folder(t), 'transit.duckdb');
  const config = parseConfig({ db_path: db });
  const logs = captureLogs();
  const first = resolveSigningSecret(config, logs.logger);
  t.equal(first.source, 'generated');
  t.equal(first.file, `${db}.secret`);
  t.equal(statSync(first.file!).mode & 0o777, 0o600, 'owner-only under a 022 umask');
  t.equal(readFileSync(first.file!, 'utf8').trim(), first.secret);
  t.ok(first.secret.length >= 32);
  t.equal(logs.lines.length, 1, 'said once');
  t.match(logs.lines[0]!.msg, /no signing_secret in the config: generated one .* set "signing_secret"/);
  t.notMatch(logs.lines[0]!.msg, first.secret);

  const second = resolveSigningSecret(config, logs.logger);
  t.same({ source: second.source, secret: second.secret }, { source: 'file', secret: first.secret });
  t.equal(logs.lines.length, 1, 'nothing said on later starts');

  chmodSync(first.file!, 0o644);
  resolveSigningSecret(config, logs.logger);
  t.equal(statSync(first.file!).mode & 0o777, 0o600, 'a file others could read is tightened');
  t.match(logs.lines.at(-1)!.msg, /readable by other users: made 0600/);
});

t.test('a configured signing_secret wins; the generated one becomes a previous secret', async (t) => {
  const db = join(folder(t), 'transit.duckdb');
  const logs = captureLogs();
  const generated = resolveSigningSecret(parseConfig({ db_path: db }), logs.logger).secret;
  const config = parseConfig({
    db_path: db,
    signing_secret: 'configured-secret-0123456789',
    previous_signing_secrets: ['older-secret-0123456789'],
  });
  const resolved = resolveSigningSecret(config, logs.logger);
  t.same(resolved, {
    secret: 'configured-secret-0123456789',
    source: 'config',
    file: `${db}.secret`,
    previous: ['older-secret-0123456789', generated],
  });
  t.match(logs.lines.at(-1)!.msg, /signing_secret is set in the config: the generated secret .* can be deleted/);
  rmSync(`${db}.secret`);
  const noFile = resolveSigningSecret(config, logs.logger);
  t.same(noFile.previous, ['older-secret-0123456789']);
  t.throws(() => statSync(`${db}.secret`), /ENOENT/, 'nothing generated when one is configured');
});

t.test('an unusable file is an error naming it; an in-memory database gets a per-process secret', async (t) => {
  const db = join(folder(t), 'transit.duckdb');
  writeFileSync(`${db}.secret`, 'short\n', { mode: 0o600 });
  t.throws(() => resolveSigningSecret(parseConfig({ db_path: db }), captureLogs().logger), {
    message: new RegExp(`${db}\\.secret holds no usable signing secret`),
  });
  t.equal(signingSecretFile(':memory:'), null);
  const logs = captureLogs();
  const memory = resolveSigningSecret(parseConfig({ db_path: ':memory:' }), logs.logger);
  t.equal(memory.source, 'process');
  t.match(logs.messages(), [/set "signing_secret", 16 characters or more, in the config/]);
});
