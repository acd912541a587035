// npm run build (also run by `prepare`, so `npm install` and `npm ci` build it): the built
// runtime, dist/transit-api.cjs, that bin/transit-api.js, `npm start` and `npx transit-api` run
// with plain node. See binary/build/runtime.ts, README.md (Quick start) and docs/guides/deploying.md.
//
//   node --import tsx scripts/build.ts
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildRuntime } from '../binary/build/runtime.ts';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));

async function main(): Promise<void> {
  const started = performance.now();
  const build = await buildRuntime(repoRoot);
  for (const warning of build.warnings) console.log(`  esbuild: ${warning}`);
  const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string };
  // the bundle must run, not just exist: a module that breaks when bundled fails the build here
  const check = spawnSync(process.execPath, [build.file, '--version'], { encoding: 'utf8', timeout: 60_000 });
  if (check.status !== 0 || check.stdout.trim() !== pkg.version) {
    throw new Error(`the bundle does not run: --version gave ${JSON.stringify(check.stdout + check.stderr)}`);
  }
  const mib = (build.bytes / 1024 / 1024).toFixed(1);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  console.log(
    `${relative(repoRoot, build.file)}: ${mib} MiB, ${build.inputs.length} modules, assets read from the checkout ` +
      `(${build.assets.join(', ')}); checked with --version in ${seconds} s`,
  );
}

main().catch((err: unknown) => {
  console.error(`build failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
});
