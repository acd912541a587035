import { constants } from 'node:os';
import { isAbsolute, join } from 'node:path';

// Native addons of the single executable. The bundle replaces the modules `uWebSockets.js` and
// `@duckdb/node-bindings` (whose loaders pick a file by platform with a dynamic require that a
// bundle cannot follow) with a call to loadNativeAddon for the file extracted by binary/entry.ts.
// process.dlopen is what require() does for a .node file; calling it directly works inside a
// SEA, whose require only reaches Node's built-in modules.

let nativeDir: string | null = null;

export function setNativeDir(dir: string): void {
  if (!isAbsolute(dir)) throw new Error(`native addon folder must be an absolute path, got ${JSON.stringify(dir)}`);
  nativeDir = dir;
}

const loaded = new Map<string, unknown>();

/**
 * Loads (once) an addon from the native folder. RTLD_NOW makes a missing symbol or library fail
 * here, at start, rather than at the first call that needs it. duckdb.node finds libduckdb.so
 * beside it through its RUNPATH $ORIGIN.
 */
export function loadNativeAddon(file: string): unknown {
  if (!nativeDir) throw new Error(`native addon ${file} requested before the embedded files were extracted`);
  const cached = loaded.get(file);
  if (cached) return cached;
  const module = { exports: {} as unknown };
  const path = join(nativeDir, file);
  try {
    process.dlopen(module, path, constants.dlopen.RTLD_NOW);
  } catch (err) {
    throw new Error(`could not load native addon ${path}: ${(err as Error).message}`);
  }
  loaded.set(file, module.exports);
  return module.exports;
}
