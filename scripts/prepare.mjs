// npm's `prepare` (run by `npm install` and `npm ci` in a checkout): builds dist/, the runtime
// that bin/transit-api.js runs. The build needs esbuild and tsx, which are dev dependencies; an
// install without them (`--omit=dev`) cannot build and says so instead of failing the install:
// build where they are (`npm ci`), then `npm prune --omit=dev` keeps dist/ and drops the tools.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const missing = ['esbuild', 'tsx'].filter((name) => !existsSync(join(root, 'node_modules', name, 'package.json')));
if (missing.length) {
  console.log(
    `prepare: dev dependencies not installed (${missing.join(', ')}): dist/ not built; run npm ci (with dev ` +
      `dependencies) and npm run build`,
  );
} else {
  const build = spawnSync(process.execPath, ['--import', 'tsx', join(root, 'scripts', 'build.ts')], {
    cwd: root,
    stdio: 'inherit',
  });
  process.exitCode = build.status ?? 1;
}
