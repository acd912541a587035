import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { findNatives } from './build/collect.ts';
import { loadNativeAddon, setNativeDir } from './native.ts';

// The real addons, copied into a fresh folder the way the binary extracts them: this is what
// proves duckdb.node finds libduckdb.so beside it (RUNPATH $ORIGIN) without node_modules.

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const natives = findNatives(repoRoot);
const dir = mkdtempSync(join(tmpdir(), 'sea-native-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

t.test('nothing loads before the folder is known', async (t) => {
  t.throws(() => loadNativeAddon(natives.uws.name), /before the embedded files were extracted/);
  t.throws(() => setNativeDir('native'), /absolute path/);
});

t.test('the extracted addons load with process.dlopen', async (t) => {
  for (const file of natives.files) copyFileSync(file.source, join(dir, file.name));
  setNativeDir(dir);

  const uws = loadNativeAddon(natives.uws.name) as { App: unknown };
  t.type(uws.App, 'function');
  t.match(String(uws.App), /\[native code\]/, 'the native uWS, not its JS fallback');
  t.equal(loadNativeAddon(natives.uws.name), uws, 'loaded once');

  const duckdb = loadNativeAddon(natives.duckdb.name) as { library_version(): string };
  t.match(duckdb.library_version(), /^v\d+\.\d+/, 'libduckdb.so was found beside duckdb.node');
});

t.test('a missing or broken addon names the file', async (t) => {
  t.throws(() => loadNativeAddon('absent.node'), new RegExp(`could not load native addon ${join(dir, 'absent.node')}`));
  writeFileSync(join(dir, 'broken.node'), 'not an ELF file');
  t.throws(() => loadNativeAddon('broken.node'), /could not load native addon .*broken\.node/);
});
