import { isAbsolute, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

// Files the service reads at run time (the GTFS-RT .proto, SQL migrations, reliability queries,
// package.json) are named by their path from the repository root. From the sources (tsx) that is
// the repository itself; the built runtime (cli/dist-entry.ts, bundled into dist/) sets the
// checkout above its bundle; inside the single executable (binary/entry.ts) the same tree is
// extracted to a cache folder first and set here before any other module loads. The binary's
// build embeds exactly the paths passed to assetPath as string literals, so every call must use one.

let root: string | null = null;

/** Called once by a bundle's entry (dist/, single executable), before the app's modules are evaluated. */
export function setAssetRoot(dir: string): void {
  if (!isAbsolute(dir)) throw new Error(`asset root must be an absolute path, got ${JSON.stringify(dir)}`);
  root = dir;
}

/** The repository checkout this module belongs to; only evaluated when run from the sources. */
function repoRoot(): string {
  return fileURLToPath(new URL('..', import.meta.url));
}

/** Absolute path of a shipped file or folder, given relative to the repository root. */
export function assetPath(relative: string): string {
  const clean = normalize(relative);
  if (isAbsolute(clean) || clean === '..' || clean.startsWith(`..${sep}`)) {
    throw new Error(`asset path must stay inside the repository, got ${JSON.stringify(relative)}`);
  }
  return join(root ?? repoRoot(), clean);
}
