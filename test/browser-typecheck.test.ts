// The pages' browser code (dashboard/client/, status/client/) is TypeScript for the DOM, outside the
// server's program (tsconfig.json leaves it out: no DOM types there); this runs its own
// type-check, tsconfig.browser.json, as `npm run typecheck` does.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

t.test('the browser code type-checks against the DOM', async (t) => {
  const tsc = createRequire(join(root, 'package.json')).resolve('typescript/bin/tsc');
  const run = spawnSync(process.execPath, [tsc, '--noEmit', '-p', 'tsconfig.browser.json'], {
    cwd: root,
    encoding: 'utf8',
    timeout: 110_000,
  });
  t.equal(run.status, 0, run.stdout + run.stderr);
});
