// Tests run the sources through tsx and production runs esbuild's bundle: neither checks types,
// so a type error would land unnoticed. This runs both programs' type-checks as
// `npm run typecheck` does: the server's (tsconfig.json) and the pages' browser code
// (dashboard/client/, status/client/: TypeScript for the DOM, tsconfig.browser.json).
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const tsc = createRequire(join(root, 'package.json')).resolve('typescript/bin/tsc');

for (const [program, project] of [
  ['the server', 'tsconfig.json'],
  ['the browser code, against the DOM', 'tsconfig.browser.json'],
] as const) {
  t.test(`${program} type-checks (${project})`, async (t) => {
    const run = spawnSync(process.execPath, [tsc, '--noEmit', '-p', project], {
      cwd: root,
      encoding: 'utf8',
      timeout: 170_000,
    });
    t.equal(run.status, 0, run.stdout + run.stderr);
  });
}
