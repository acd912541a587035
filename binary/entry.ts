import { join } from 'node:path';
import { getAsset, getRawAsset, isSea } from 'node:sea';
import { setAssetRoot } from '../core/assets.ts';
import { defaultCacheBase, extractAssets } from './extract.ts';
import { MANIFEST_KEY, NATIVE_DIR, parseManifest } from './manifest.ts';
import { setNativeDir } from './native.ts';

// Entry of the single executable (bundled to CommonJS by scripts/build-binary.ts). SEA runs a
// CommonJS script without top-level await, so the CLI is loaded with a plain dynamic import once
// the embedded files are on disk; esbuild turns that import into lazy module initialisation, which
// is what keeps every app module (and its top-level assetPath calls) from running before this.

function prepare(): void {
  if (!isSea()) {
    throw new Error(
      'this bundle only runs as the transit-api single executable; from a checkout use bin/transit-api.js',
    );
  }
  const manifest = parseManifest(getAsset(MANIFEST_KEY, 'utf8'));
  const { dir } = extractAssets({
    manifest,
    // getRawAsset returns the embedded bytes without a copy; they are read-only
    read: (key) => new Uint8Array(getRawAsset(key) as ArrayBuffer),
    cacheBase: defaultCacheBase(process.env),
  });
  setAssetRoot(dir);
  setNativeDir(join(dir, NATIVE_DIR));
}

let ready = false;
try {
  prepare();
  ready = true;
} catch (err) {
  process.stderr.write(`transit-api: cannot start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
}
if (ready) {
  import('../cli/main.ts').catch((err: unknown) => {
    process.stderr.write(
      `transit-api: cannot start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    process.exitCode = 1;
  });
}
