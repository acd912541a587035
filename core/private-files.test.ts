import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { makePrivateDirSync, restrictUmask, tightenSync } from './private-files.ts';

const mode = (path: string) => statSync(path).mode & 0o777;

t.test('restrictUmask clears group and other bits and keeps stricter ones', async (t) => {
  const original = process.umask(0o022);
  t.teardown(() => process.umask(original));
  restrictUmask();
  t.equal(process.umask(0o277), 0o077);
  restrictUmask();
  t.equal(process.umask(0o022), 0o277, 'a stricter umask stays stricter');
});

t.test('tightenSync: files 0600, folders 0700, links and missing paths left alone', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'private-files-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'f');
  writeFileSync(file, 'x', { mode: 0o644 });
  const sub = join(dir, 'sub');
  mkdirSync(sub, { mode: 0o755 });
  const outside = join(dir, 'outside');
  writeFileSync(outside, 'y', { mode: 0o644 });
  symlinkSync(outside, join(dir, 'link'));
  // whatever umask the test runs under
  for (const [path, m] of [
    [file, 0o644],
    [sub, 0o755],
    [outside, 0o644],
  ] as const)
    chmodSync(path, m);
  t.equal(tightenSync(file), true);
  t.equal(mode(file), 0o600);
  t.equal(tightenSync(file), false, 'private already');
  t.equal(tightenSync(sub), true);
  t.equal(mode(sub), 0o700);
  t.equal(tightenSync(join(dir, 'link')), false);
  t.equal(mode(outside), 0o644, "a link's target is not ours to change");
  t.equal(tightenSync(join(dir, 'missing')), false);
  makePrivateDirSync(join(dir, 'a', 'b'));
  t.equal(mode(join(dir, 'a')), 0o700);
  t.equal(mode(join(dir, 'a', 'b')), 0o700);
});
