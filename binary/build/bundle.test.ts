import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { bundleApp } from './bundle.ts';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'sea-bundle-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const natives = { uws: 'uws_test.node', duckdb: 'duckdb.node' };

async function bundle(name: string, source: string): Promise<string> {
  const entry = join(dir, `${name}.ts`);
  writeFileSync(entry, source);
  const outfile = join(dir, `${name}.cjs`);
  await bundleApp({ repoRoot, entry, outfile, natives });
  return readFileSync(outfile, 'utf8');
}

t.test('the native modules become calls to the extracted addons', async (t) => {
  const out = await bundle(
    'natives',
    [
      "import uWS from 'uWebSockets.js';",
      "import bindings from '@duckdb/node-bindings';",
      'console.log(uWS.App, bindings.library_version);',
    ].join('\n'),
  );
  t.match(out, /loadNativeAddon\("uws_test\.node"\)/);
  t.match(out, /loadNativeAddon\("duckdb\.node"\)/);
  t.notMatch(
    out,
    /require\("uWebSockets\.js"\)|require\("@duckdb\/node-bindings/,
    'nothing is left for a require that SEA cannot serve',
  );
  t.notMatch(out, /uws_" \+ process\.platform/, "the package's own loader is not bundled");
});

t.test('node-cron is taken from its CommonJS build', async (t) => {
  const out = await bundle('cron', "import cron from 'node-cron';\nconsole.log(cron.validate('* * * * *'));");
  t.match(out, /daemon\.cjs/);
  t.notMatch(out, /import_meta\d*\.url/);
});

t.test('import.meta in app code fails the build instead of the binary', async (t) => {
  await t.rejects(
    bundle('meta', "console.log(new URL('./x.sql', import.meta.url));"),
    /the bundle would break at run time:[\s\S]*import\.meta[\s\S]*assetPath\(\)/,
  );
});

t.test('for dist/, the native packages stay require()s resolved from node_modules', async (t) => {
  const entry = join(dir, 'dist-natives.ts');
  writeFileSync(
    entry,
    [
      "import uWS from 'uWebSockets.js';",
      "import bindings from '@duckdb/node-bindings';",
      "import cron from 'node-cron';",
      'console.log(uWS.App, bindings.library_version, cron.validate);',
    ].join('\n'),
  );
  const outfile = join(dir, 'dist-natives.cjs');
  await bundleApp({ repoRoot, entry, outfile, natives: 'node_modules' });
  const out = readFileSync(outfile, 'utf8');
  t.match(out, /require\("uWebSockets\.js"\)/);
  t.match(out, /require\("@duckdb\/node-bindings"\)/);
  t.notMatch(out, /loadNativeAddon/, 'no SEA loader');
  t.notMatch(out, /require\("node-cron"\)/, 'the other packages are inside the bundle');
  t.match(out, /daemon\.cjs/);
});
